#include "tessera/backends/cuda/simt_gemm.h"

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <cstring>

#include <fmt/format.h>

#include "tessera/backends/cuda/launch.h"
#include "tessera/core/error.h"

namespace tessera::backends::cuda {

extern const char* const kTailActivation = R"(
__device__ __forceinline__ float tsr_activation(float v, int activation) {
  if (activation == 1) v = fmaxf(v, 0.f);
  if (activation == 2) v = 0.5f * v * (1.f + tanhf(0.7978845608028654f * (v + 0.044715f * v * v * v)));
  return v;
}
)";

int activation_code(GemmActivation a) {
  switch (a) {
    case GemmActivation::none:
      return 0;
    case GemmActivation::relu:
      return 1;
    case GemmActivation::gelu:
      return 2;
  }
  return 0;
}

namespace {

constexpr int kTile = 64;      // columns of the result per block, and rows unless there are at most 32
constexpr int kSlice = 16;     // K per shared-memory stage
constexpr int kThreads = 256;  // each a 4 x 4 block of the tile
constexpr int kMinChunk = 32;  // K per split at least: shorter slices spend more on the partials than they save
// Sums this long (a convolution's weight gradient over a batch of images) split into up to four
// waves of blocks: one block per multiprocessor leaves too few warps to hide the tap loads.
constexpr int64_t kLongK = 16384;
constexpr int kLongKWaves = 4;
// From this many splits the partials are added by a warp per output (lanes over the splits, then a
// fixed shuffle tree) instead of a thread per output walking every split.
constexpr int kWarpReduceSplits = 32;
// Blocks in a thread-block cluster at most (the portable limit): the splits added inside one.
constexpr int kMaxCluster = 8;

// The kernels read A and B through TSR_A(row, k) and TSR_B(k, col) (an element inside the product; the
// text before this one defines them), write D at index TSR_D(row, col) and add the bias at
// TSR_BIAS(row, col). TSR_A_T / TSR_B_T choose which index runs along a warp's loads (1: A's rows, B's
// K), so that the operand's memory is read in runs. Plain matrices (kMatrixOperands) and convolutions
// read through taps (conv_gemm.cpp) share this text.
constexpr const char* kCommon = R"(
#define TSR_TILE 64
#ifndef TSR_TM
#define TSR_TM 64
#endif
#ifndef TSR_SLICE
#define TSR_SLICE 16
#endif
#define TSR_RM (TSR_TM / 16)
// Each thread's elements of a K slice: of A's TSR_TM x TSR_SLICE, and of B's TSR_SLICE x 64.
#define TSR_RA (TSR_TM * TSR_SLICE / 256)
#define TSR_RB (TSR_SLICE * TSR_TILE / 256)
// Rows of the shared tiles: 4 floats of padding keep the SIMT kernel's float4 reads aligned; the tensor
// core kernel pads 8 so that a fragment's lanes (k = t, row = g) fall on 32 different banks.
#ifndef TSR_SHARED_PAD
#define TSR_SHARED_PAD 4
#endif
#define TSR_PAD (TSR_TILE + TSR_SHARED_PAD)
#define TSR_PADM (TSR_TM + TSR_SHARED_PAD)
// Every product kernel's parameters, in the order SimtGemm::run passes them.
#define TSR_GEMM_PARAMS                                                                                            \
  const float *a, const float *b, float *d, float *partials, long long m, long long n, long long k, long long lda, \
      long long ldb, long long ldd, long long k_chunk, const float *bias, const float *residual, int activation
// Blocks per multiprocessor the tile kernels' registers must allow (__launch_bounds__).
#ifndef TSR_MIN_BLOCKS
#define TSR_MIN_BLOCKS 1
#endif

// This thread's elements of each operand's next K slice into registers (the loads of slice s + 1 are in
// flight while slice s is multiplied).
__device__ __forceinline__ void tsr_fetch(const float* a, const float* b, long long m0, long long n0, long long kb,
                                          long long k1, long long m, long long n, long long lda, long long ldb,
                                          int tid, float ra[TSR_RA], float rb[TSR_RB]) {
#pragma unroll
  for (int i = 0; i < TSR_RA; ++i) {
    const int e = tid + i * 256;
#if TSR_A_T
    const int ar = e % TSR_TM, ak = e / TSR_TM;
#else
    const int ak = e % TSR_SLICE, ar = e / TSR_SLICE;
#endif
    ra[i] = m0 + ar < m && kb + ak < k1 ? TSR_A(m0 + ar, kb + ak) : 0.f;
  }
#pragma unroll
  for (int i = 0; i < TSR_RB; ++i) {
    const int e = tid + i * 256;
#if TSR_B_T
    const int bk = e % TSR_SLICE, bc = e / TSR_SLICE;
#else
    const int bc = e % TSR_TILE, bk = e / TSR_TILE;
#endif
    rb[i] = n0 + bc < n && kb + bk < k1 ? TSR_B(kb + bk, n0 + bc) : 0.f;
  }
}

__device__ __forceinline__ void tsr_stash(float (*as)[TSR_PADM], float (*bs)[TSR_PAD], int tid, const float ra[TSR_RA],
                                          const float rb[TSR_RB]) {
#pragma unroll
  for (int i = 0; i < TSR_RA; ++i) {
    const int e = tid + i * 256;
#if TSR_A_T
    as[e / TSR_TM][e % TSR_TM] = ra[i];
#else
    as[e % TSR_SLICE][e / TSR_SLICE] = ra[i];
#endif
  }
#pragma unroll
  for (int i = 0; i < TSR_RB; ++i) {
    const int e = tid + i * 256;
#if TSR_B_T
    bs[e % TSR_SLICE][e / TSR_SLICE] = rb[i];
#else
    bs[e / TSR_TILE][e % TSR_TILE] = rb[i];
#endif
  }
}

// The K loop of both tile kernels: slice s + 1 is fetched into registers while `multiply` reads slice s
// from the shared tiles.
template <class Multiply>
__device__ __forceinline__ void tsr_k_loop(const float* a, const float* b, float (*as)[TSR_PADM], float (*bs)[TSR_PAD],
                                           long long m0, long long n0, long long k0, long long k1, long long m,
                                           long long n, long long lda, long long ldb, int tid, Multiply multiply) {
  float ra[TSR_RA], rb[TSR_RB];
  if (k0 < k1) tsr_fetch(a, b, m0, n0, k0, k1, m, n, lda, ldb, tid, ra, rb);
  for (long long kb = k0; kb < k1; kb += TSR_SLICE) {
    tsr_stash(as, bs, tid, ra, rb);
    __syncthreads();
    if (kb + TSR_SLICE < k1) tsr_fetch(a, b, m0, n0, kb + TSR_SLICE, k1, m, n, lda, ldb, tid, ra, rb);
    multiply();
    __syncthreads();
  }
}

// The fused tail, as cuBLASLt's epilogues order it: activation(v + bias + residual).
__device__ __forceinline__ float tsr_tail(float v, long long row, long long col, long long ldd, const float* bias,
                                          const float* residual, int activation) {
  if (bias != nullptr) v += bias[TSR_BIAS(row, col)];
  if (residual != nullptr) v += residual[TSR_D(row, col)];
  return tsr_activation(v, activation);
}

// One result element: unsplit stored with the tail; split, its partial sum into split `split` of
// `partials` (rows of n) for tsr_simt_gemm_reduce.
__device__ __forceinline__ void tsr_store(float v, long long row, long long col, long long m, long long n,
                                          unsigned split, bool is_split, float* d, float* partials, long long ldd,
                                          const float* bias, const float* residual, int activation) {
  if (row >= m || col >= n) return;
  if (is_split) {
    partials[((long long)split * m + row) * n + col] = v;
  } else {
    d[TSR_D(row, col)] = tsr_tail(v, row, col, ldd, bias, residual, activation);
  }
}
)";

// One TSR_TM x 64 tile of the result over K in [z * k_chunk, (z + 1) * k_chunk), a 4 x 4 (or 2 x 4)
// block of it per thread. (A last-block-adds-the-splits variant, one launch fewer, was slower: the MLP
// step at batch 64 took 262 instead of 191 us, with one block per tile left to add every split.)
// With TSR_CLUSTER = S (2..8), the S splits of a tile are one thread-block cluster (sm_90): each block
// leaves its partial tile in shared memory, and after a cluster barrier block r adds, for its share of
// the tile, the S partials in split order read from the blocks' shared memory (distributed shared
// memory), then applies the tail: no partials in global memory and no second launch.
constexpr const char* kSimtKernel = R"(
#ifndef TSR_CLUSTER
#define TSR_CLUSTER 0
#endif
#if TSR_CLUSTER
__device__ __forceinline__ void tsr_cluster_sync() {
  asm volatile("barrier.cluster.arrive.release.aligned;\n\tbarrier.cluster.wait.acquire.aligned;" ::: "memory");
}

// This thread's view of `local` in the shared memory of the cluster's block `rank`.
__device__ __forceinline__ float tsr_cluster_load(const float* local, unsigned rank) {
  const unsigned address = (unsigned)__cvta_generic_to_shared(local);
  unsigned remote;
  asm volatile("mapa.shared::cluster.u32 %0, %1, %2;" : "=r"(remote) : "r"(address), "r"(rank));
  float v;
  asm volatile("ld.shared::cluster.f32 %0, [%1];" : "=f"(v) : "r"(remote) : "memory");
  return v;
}
#endif

extern "C" __global__ void __launch_bounds__(256, TSR_MIN_BLOCKS)
#if TSR_CLUSTER
__cluster_dims__(1, 1, TSR_CLUSTER)
#endif
tsr_simt_gemm(TSR_GEMM_PARAMS) {
  TSR_GRID_PROLOGUE();
  __shared__ __align__(16) float as[TSR_SLICE][TSR_PADM];
  __shared__ __align__(16) float bs[TSR_SLICE][TSR_PAD];
  const int tid = threadIdx.x, tx = tid & 15, ty = tid >> 4;
  const long long m0 = (long long)blockIdx.y * TSR_TM, n0 = (long long)blockIdx.x * TSR_TILE;
  const long long k0 = (long long)blockIdx.z * k_chunk, k1 = min(k, k0 + k_chunk);
  float acc[TSR_RM][4];
#pragma unroll
  for (int i = 0; i < TSR_RM; ++i)
#pragma unroll
    for (int j = 0; j < 4; ++j) acc[i][j] = 0.f;
  tsr_k_loop(a, b, as, bs, m0, n0, k0, k1, m, n, lda, ldb, tid, [&] {
#pragma unroll
    for (int kk = 0; kk < TSR_SLICE; ++kk) {
#if TSR_RM == 4
      const float4 av = *reinterpret_cast<const float4*>(&as[kk][ty * 4]);
      const float a4[4] = {av.x, av.y, av.z, av.w};
#else
      const float2 av = *reinterpret_cast<const float2*>(&as[kk][ty * 2]);
      const float a4[2] = {av.x, av.y};
#endif
      const float4 bv = *reinterpret_cast<const float4*>(&bs[kk][tx * 4]);
      const float b4[4] = {bv.x, bv.y, bv.z, bv.w};
#pragma unroll
      for (int i = 0; i < TSR_RM; ++i)
#pragma unroll
        for (int j = 0; j < 4; ++j) acc[i][j] = fmaf(a4[i], b4[j], acc[i][j]);
    }
  });
#if TSR_CLUSTER
  __shared__ __align__(16) float part[TSR_TM * TSR_TILE];
#pragma unroll
  for (int i = 0; i < TSR_RM; ++i)
#pragma unroll
    for (int j = 0; j < 4; ++j) part[(ty * TSR_RM + i) * TSR_TILE + tx * 4 + j] = acc[i][j];
  tsr_cluster_sync();
  constexpr int share = (TSR_TM * TSR_TILE + TSR_CLUSTER - 1) / TSR_CLUSTER;
  const int first = (int)blockIdx.z * share, last = min(first + share, TSR_TM * TSR_TILE);
  for (int e = first + tid; e < last; e += 256) {
    float v = 0.f;
#pragma unroll
    for (int z = 0; z < TSR_CLUSTER; ++z) v += tsr_cluster_load(&part[e], z);
    tsr_store(v, m0 + e / TSR_TILE, n0 + e % TSR_TILE, m, n, 0, false, d, partials, ldd, bias, residual, activation);
  }
  tsr_cluster_sync();  // the other blocks' shared memory is read until every block has added its share
#else
#pragma unroll
  for (int i = 0; i < TSR_RM; ++i)
#pragma unroll
    for (int j = 0; j < 4; ++j) {
      tsr_store(acc[i][j], m0 + ty * TSR_RM + i, n0 + tx * 4 + j, m, n, blockIdx.z, gridDim.z > 1, d, partials, ldd,
                bias, residual, activation);
    }
#endif
}
)";

// The same tile on the tensor cores: mma.sync m16n8k8 with TF32 operands and f32 sums, each f32 operand
// split into a TF32 value and the TF32 rounding of what it drops, hi*hi + hi*lo + lo*hi (the small terms
// first): close to f32's accuracy ("3xTF32"; the lo*lo term is below f32's rounding). Not the rule's
// choice (simt_gemm.h says why); forced with SimtKernel::mma. The 8 warps as 2 x 4, each a TSR_TM/2 x 16 part of the
// tile: TSR_MT m16 tiles by two n8 tiles. Fragment layouts (PTX ISA, mma.m16n8k8 .tf32): g = lane / 4, t = lane % 4; A
// a0 (g, t) a1 (g+8, t) a2 (g, t+4) a3 (g+8, t+4); B b0 (k t, col g) b1 (k t+4, col g); C c0 (g, 2t) c1 (g, 2t+1) c2
// (g+8, 2t) c3 (g+8, 2t+1).
constexpr const char* kMmaKernel = R"(
#define TSR_MT (TSR_TM / 32)
__device__ __forceinline__ void tsr_split_tf32(float x, unsigned& hi, unsigned& lo) {
  asm("cvt.rna.tf32.f32 %0, %1;" : "=r"(hi) : "f"(x));
  asm("cvt.rna.tf32.f32 %0, %1;" : "=r"(lo) : "f"(x - __uint_as_float(hi)));
}

__device__ __forceinline__ void tsr_mma_tf32(float c[4], const unsigned a[4], const unsigned b[2]) {
  asm volatile("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};"
               : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
               : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}

extern "C" __global__ void __launch_bounds__(256, TSR_MIN_BLOCKS)
tsr_mma_gemm(TSR_GEMM_PARAMS) {
  TSR_GRID_PROLOGUE();
  __shared__ __align__(16) float as[TSR_SLICE][TSR_PADM];
  __shared__ __align__(16) float bs[TSR_SLICE][TSR_PAD];
  const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5, g = lane >> 2, t = lane & 3;
  const int wm = (warp >> 2) * (TSR_TM / 2), wn = (warp & 3) * 16;
  const long long m0 = (long long)blockIdx.y * TSR_TM, n0 = (long long)blockIdx.x * TSR_TILE;
  const long long k0 = (long long)blockIdx.z * k_chunk, k1 = min(k, k0 + k_chunk);
  float acc[TSR_MT][2][4];
#pragma unroll
  for (int i = 0; i < TSR_MT; ++i)
#pragma unroll
    for (int j = 0; j < 2; ++j)
#pragma unroll
      for (int q = 0; q < 4; ++q) acc[i][j][q] = 0.f;
  tsr_k_loop(a, b, as, bs, m0, n0, k0, k1, m, n, lda, ldb, tid, [&] {
#pragma unroll
    for (int k8 = 0; k8 < TSR_SLICE; k8 += 8) {
      unsigned ah[TSR_MT][4], al[TSR_MT][4], bh[2][2], bl[2][2];
#pragma unroll
      for (int i = 0; i < TSR_MT; ++i) {
        const int r = wm + i * 16 + g;
        tsr_split_tf32(as[k8 + t][r], ah[i][0], al[i][0]);
        tsr_split_tf32(as[k8 + t][r + 8], ah[i][1], al[i][1]);
        tsr_split_tf32(as[k8 + t + 4][r], ah[i][2], al[i][2]);
        tsr_split_tf32(as[k8 + t + 4][r + 8], ah[i][3], al[i][3]);
      }
#pragma unroll
      for (int j = 0; j < 2; ++j) {
        const int c = wn + j * 8 + g;
        tsr_split_tf32(bs[k8 + t][c], bh[j][0], bl[j][0]);
        tsr_split_tf32(bs[k8 + t + 4][c], bh[j][1], bl[j][1]);
      }
#pragma unroll
      for (int i = 0; i < TSR_MT; ++i)
#pragma unroll
        for (int j = 0; j < 2; ++j) {
          tsr_mma_tf32(acc[i][j], al[i], bh[j]);
          tsr_mma_tf32(acc[i][j], ah[i], bl[j]);
          tsr_mma_tf32(acc[i][j], ah[i], bh[j]);
        }
    }
  });
#pragma unroll
  for (int i = 0; i < TSR_MT; ++i)
#pragma unroll
    for (int j = 0; j < 2; ++j)
#pragma unroll
      for (int q = 0; q < 4; ++q) {
        tsr_store(acc[i][j][q], m0 + wm + i * 16 + g + (q >> 1) * 8, n0 + wn + j * 8 + 2 * t + (q & 1), m, n,
                  blockIdx.z, gridDim.z > 1, d, partials, ldd, bias, residual, activation);
      }
}
)";

// Products with a short sum (K = TSR_SK_K <= 32) of few rows (M = TSR_SK_M <= 64) into many columns: a
// thread per column computes every row, so a column's K operands are read once (a convolution of one
// input channel: its 9 taps) and A, the same for every thread, is read from shared memory.
constexpr const char* kShortKKernel = R"(
extern "C" __global__ void __launch_bounds__(256)
tsr_short_k_gemm(TSR_GEMM_PARAMS) {
  TSR_GRID_PROLOGUE();
  __shared__ float as[TSR_SK_M * TSR_SK_K];
  for (int e = threadIdx.x; e < TSR_SK_M * TSR_SK_K; e += blockDim.x) as[e] = TSR_A(e / TSR_SK_K, e % TSR_SK_K);
  __syncthreads();
  for (long long col = (long long)blockIdx.x * blockDim.x + threadIdx.x; col < n;
       col += (long long)gridDim.x * blockDim.x) {
    float bv[TSR_SK_K];
#pragma unroll
    for (int kk = 0; kk < TSR_SK_K; ++kk) bv[kk] = TSR_B(kk, col);
#pragma unroll 4
    for (int r = 0; r < TSR_SK_M; ++r) {
      float v = 0.f;
#pragma unroll
      for (int kk = 0; kk < TSR_SK_K; ++kk) v = fmaf(as[r * TSR_SK_K + kk], bv[kk], v);
      d[TSR_D(r, col)] = tsr_tail(v, r, col, ldd, bias, residual, activation);
    }
  }
}
)";

// Long sums into few columns (N = TSR_NN <= 16; a convolution of one input channel's weight gradient,
// 32 x 9 over 173,056 positions): each thread walks K for TSR_NR rows and every column, keeping
// TSR_NR x TSR_NN sums; the block adds its threads' sums in a fixed order (a butterfly per warp, then the
// warps in order) and stores them as split blockIdx.x of the partials (or, unsplit, with the tail).
constexpr const char* kNarrowKernel = R"(
extern "C" __global__ void __launch_bounds__(256)
tsr_narrow_gemm(TSR_GEMM_PARAMS) {
  TSR_GRID_PROLOGUE();
  __shared__ float sums[8][TSR_NR * TSR_NN];
  const long long r0 = (long long)blockIdx.y * TSR_NR;
  const long long k0 = (long long)blockIdx.x * k_chunk, k1 = min(k, k0 + k_chunk);
  float acc[TSR_NR][TSR_NN];
#pragma unroll
  for (int r = 0; r < TSR_NR; ++r)
#pragma unroll
    for (int c = 0; c < TSR_NN; ++c) acc[r][c] = 0.f;
  for (long long kk = k0 + threadIdx.x; kk < k1; kk += 256) {
    float bv[TSR_NN];
#pragma unroll
    for (int c = 0; c < TSR_NN; ++c) bv[c] = TSR_B(kk, c);
#pragma unroll
    for (int r = 0; r < TSR_NR; ++r) {
      if (r0 + r < m) {
        const float av = TSR_A(r0 + r, kk);
#pragma unroll
        for (int c = 0; c < TSR_NN; ++c) acc[r][c] = fmaf(av, bv[c], acc[r][c]);
      }
    }
  }
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
#pragma unroll
  for (int r = 0; r < TSR_NR; ++r)
#pragma unroll
    for (int c = 0; c < TSR_NN; ++c) {
      float v = acc[r][c];
#pragma unroll
      for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
      if (lane == 0) sums[warp][r * TSR_NN + c] = v;
    }
  __syncthreads();
  for (int e = threadIdx.x; e < TSR_NR * TSR_NN; e += blockDim.x) {
    float v = 0.f;
#pragma unroll
    for (int w = 0; w < 8; ++w) v += sums[w][e];
    tsr_store(v, r0 + e / TSR_NN, e % TSR_NN, m, n, blockIdx.x, gridDim.x > 1, d, partials, ldd, bias, residual,
              activation);
  }
}
)";

// D = the splits' partial sums added in split order, then the tail: one output per thread, its loads
// issued four splits at a time.
constexpr const char* kReduceKernel = R"(
extern "C" __global__ void __launch_bounds__(256)
tsr_simt_gemm_reduce(const float* partials, float* d, long long m, long long n, long long ldd, int splits,
                     const float* bias, const float* residual, int activation) {
  TSR_GRID_PROLOGUE();
  const long long total = m * n;
  for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < total; i += (long long)gridDim.x * blockDim.x) {
    float v = 0.f;
    int z = 0;
    for (; z + 4 <= splits; z += 4) {
      const float p0 = partials[z * total + i], p1 = partials[(z + 1) * total + i];
      const float p2 = partials[(z + 2) * total + i], p3 = partials[(z + 3) * total + i];
      v = (((v + p0) + p1) + p2) + p3;
    }
    for (; z < splits; ++z) v += partials[z * total + i];
    const long long row = i / n, col = i - row * n;
    d[TSR_D(row, col)] = tsr_tail(v, row, col, ldd, bias, residual, activation);
  }
}
)";

// The same for many splits into few outputs: a warp per output, lane l adding splits l, l + 32, ... in
// order, then the lanes' sums by a fixed butterfly (deterministic as well).
constexpr const char* kReduceWarpsKernel = R"(
extern "C" __global__ void __launch_bounds__(256)
tsr_simt_gemm_reduce_warps(const float* partials, float* d, long long m, long long n, long long ldd, int splits,
                           const float* bias, const float* residual, int activation) {
  TSR_GRID_PROLOGUE();
  const long long total = m * n, warps = ((long long)gridDim.x * blockDim.x) >> 5;
  const int lane = threadIdx.x & 31;
  for (long long i = ((long long)blockIdx.x * blockDim.x + threadIdx.x) >> 5; i < total; i += warps) {
    float v = 0.f;
    for (int z = lane; z < splits; z += 32) v += partials[z * total + i];
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
    if (lane == 0) {
      const long long row = i / n, col = i - row * n;
      d[TSR_D(row, col)] = tsr_tail(v, row, col, ldd, bias, residual, activation);
    }
  }
}
)";

// Row-major or transposed matrices with row strides lda, ldb, ldd; the bias runs along the columns.
constexpr const char* kMatrixOperands = R"(
#if TSR_A_T
#define TSR_A(r, k) a[(k) * lda + (r)]
#else
#define TSR_A(r, k) a[(r) * lda + (k)]
#endif
#if TSR_B_T
#define TSR_B(k, c) b[(c) * ldb + (k)]
#else
#define TSR_B(k, c) b[(k) * ldb + (c)]
#endif
#define TSR_D(r, c) ((r) * ldd + (c))
#define TSR_BIAS(r, c) (c)
)";

// Settings read from the environment at first use unless a setter decided first.
constexpr int kUnread = -100;

template <class Parse>
int setting(std::atomic<int>& slot, const char* variable, Parse parse) {
  int v = slot.load();
  if (v == kUnread) {
    const char* env = std::getenv(variable);
    v = parse(env == nullptr ? std::string() : std::string(env));
    slot.store(v);
  }
  return v;
}

std::atomic<int>& mode_slot() {
  static std::atomic<int> slot{kUnread};
  return slot;
}

int simt_mode() {
  return setting(mode_slot(), "TESSERA_CUDA_SIMT_GEMM", [](const std::string& v) {
    return v == "0" ? 0 : v == "1" ? 1 : -1;
  });
}

std::atomic<int>& kernel_slot() {
  static std::atomic<int> slot{kUnread};
  return slot;
}

SimtKernel kernel_choice() {
  return static_cast<SimtKernel>(setting(kernel_slot(), "TESSERA_CUDA_SIMT_KERNEL", [](const std::string& v) {
    return static_cast<int>(v == "simt" ? SimtKernel::simt : v == "mma" ? SimtKernel::mma : SimtKernel::automatic);
  }));
}

int64_t ceil_div(int64_t a, int64_t b) {
  return (a + b - 1) / b;
}

std::string simt_matrix_operands(const GemmShape& s) {
  return fmt::format("#define TSR_A_T {}\n#define TSR_B_T {}\n", s.a_transposed ? 1 : 0, s.b_transposed ? 1 : 0) +
         kMatrixOperands;
}

// The short-K kernel: a sum of at most 32 into at most 64 rows, with columns enough for a thread each
// to fill the GPU (a convolution of one to three input channels over a batch of images).
bool short_k_suits(const GemmShape& s) {
  return s.k <= 32 && s.m <= 64 && s.n >= 16384;
}

// The narrow kernel: at most 16 columns over a long sum (a weight gradient of such a convolution).
bool clusters_allowed() {
  const char* env = std::getenv("TESSERA_CUDA_SIMT_CLUSTER");
  return env == nullptr || std::strcmp(env, "0") != 0;
}

bool narrow_suits(const GemmShape& s) {
  return s.n <= 16 && s.k >= 8192;
}

}  // namespace

void set_simt_gemm(int mode) {
  mode_slot().store(mode < 0 ? -1 : mode > 0 ? 1 : 0);
}

void set_simt_kernel(SimtKernel choice) {
  kernel_slot().store(static_cast<int>(choice));
}

bool simt_gemm_suits(const GemmShape& s, int multiprocessors) {
  const bool possible =
      s.dtype == DType::f32 && !s.tf32 && !s.f32_output && s.batch == 1 && s.m > 0 && s.n > 0 && s.k > 0;
  const int mode = simt_mode();
  if (!possible || mode == 0) return false;
  if (mode == 1) return true;
  // cuBLASLt's tiles leave most multiprocessors idle when the result has few rows (64: a batch) or the
  // product a short K (the weight gradients of such a batch). Measured on an H200 (the MLP step at batch
  // 64: 191 us against 210 with cuBLASLt for all); long sums into few outputs (a convolution's weight
  // gradient, 32x9x173056) and the CNN's larger products stayed faster with cuBLASLt.
  const int64_t tiles = ceil_div(s.m, kTile) * ceil_div(s.n, kTile);
  const bool few_rows = s.m >= 8 && s.m <= 128 && s.k <= 8192;
  const bool short_k = s.k <= 128 && s.m >= 8;
  return (few_rows || short_k) && tiles < 2 * int64_t{multiprocessors};
}

SimtGemm::SimtGemm(Context& ctx, const GemmShape& s) : SimtGemm(ctx, s, simt_matrix_operands(s), "", false) {}

SimtGemm::SimtGemm(Context& ctx, const GemmShape& s, const std::string& operands, std::string label,
                   bool gathered_operands)
    : shape_(s), label_(std::move(label)), multiprocessors_(ctx.multiprocessors()) {
  TESSERA_CHECK(s.dtype == DType::f32 && s.batch == 1, "cuda simt gemm: {} batch {} (f32, one matrix)",
                dtype_name(s.dtype), s.batch);
  const SimtKernel choice = kernel_choice();
  const bool mma_possible = ctx.device().compute_capability() >= 80;  // mma.sync with TF32 operands
  if (choice == SimtKernel::automatic && short_k_suits(s)) {
    variant_ = Variant::short_k;
  } else if (choice == SimtKernel::automatic && narrow_suits(s)) {
    variant_ = Variant::narrow;
  } else if (mma_possible && choice == SimtKernel::mma) {
    variant_ = Variant::mma;
  }
  partials_ = static_cast<float*>(ctx.workspace());
  const int64_t room = static_cast<int64_t>(ctx.workspace_bytes() / (sizeof(float) * static_cast<size_t>(s.m * s.n)));
  std::string defines;
  std::string kernels;
  const char* kernel_name = "tsr_simt_gemm";
  if (variant_ == Variant::short_k) {
    defines = fmt::format("#define TSR_SK_M {}\n#define TSR_SK_K {}\n", s.m, s.k);
    kernels = kShortKKernel;
    kernel_name = "tsr_short_k_gemm";
    grid_ = dim3(static_cast<unsigned>(std::min<int64_t>(ceil_div(s.n, kThreads), int64_t{multiprocessors_} * 16)));
  } else if (variant_ == Variant::narrow) {
    // Rows per block as many as keep the sums in registers; K split so that the blocks fill about four
    // waves (TESSERA_CUDA_NARROW_WAVES for measuring it; 4 beat 8 on the CNN step) with at least 4 values
    // per thread.
    const int64_t rows_per_block = std::min<int64_t>(s.m, s.n <= 9 ? 8 : 4);
    const int64_t row_blocks = ceil_div(s.m, rows_per_block);
    const char* waves_env = std::getenv("TESSERA_CUDA_NARROW_WAVES");
    const int64_t waves = waves_env != nullptr && std::atoi(waves_env) >= 1 ? std::atoi(waves_env) : 4;
    const int64_t wanted =
        std::max<int64_t>(1, std::min({int64_t{multiprocessors_} * waves / row_blocks, s.k / (kThreads * 4), room}));
    k_chunk_ = ceil_div(s.k, wanted);
    splits_ = static_cast<int>(ceil_div(s.k, k_chunk_));
    defines = fmt::format("#define TSR_NR {}\n#define TSR_NN {}\n", rows_per_block, s.n);
    kernels = kNarrowKernel;
    kernel_name = "tsr_narrow_gemm";
    grid_ = dim3(static_cast<unsigned>(splits_), static_cast<unsigned>(row_blocks));
  } else {
    // Products of at most 32 rows take 32-row tiles (two rows per thread): a 64-row tile would compute
    // as many rows of zeros. TESSERA_CUDA_SIMT_TM=64 keeps 64 (for measuring it).
    const char* tm = std::getenv("TESSERA_CUDA_SIMT_TM");
    tile_m_ = s.m <= 32 && (tm == nullptr || std::strcmp(tm, "64") != 0) ? 32 : 64;
    // TESSERA_CUDA_SIMT_SLICE=32 / TESSERA_CUDA_MMA_SLICE=32 (K per stage: twice the loads in flight) and
    // TESSERA_CUDA_TILE_MIN_BLOCKS (blocks per multiprocessor the registers must allow) are for measuring
    // the choices.
    int slice = kSlice;
    const char* slice_env = std::getenv(variant_ == Variant::mma ? "TESSERA_CUDA_MMA_SLICE" : "TESSERA_CUDA_SIMT_SLICE");
    if (slice_env != nullptr && std::strcmp(slice_env, "32") == 0) slice = 2 * kSlice;
    // Operands gathered through taps keep more loads in flight with three blocks per multiprocessor
    // (the CNN step at batch 256: 546K samples/s against 534K with the registers unbounded); plain
    // matrices measured no better.
    int min_blocks = gathered_operands ? 3 : 1;
    if (const char* env = std::getenv("TESSERA_CUDA_TILE_MIN_BLOCKS"); env != nullptr && std::atoi(env) >= 1) {
      min_blocks = std::min(8, std::atoi(env));
    }
    defines = fmt::format("#define TSR_TM {}\n#define TSR_MIN_BLOCKS {}\n", tile_m_, min_blocks);
    defines += fmt::format("#define TSR_SLICE {}\n", slice);
    if (variant_ == Variant::mma) defines += "#define TSR_SHARED_PAD 8\n";
    kernels = variant_ == Variant::mma ? kMmaKernel : kSimtKernel;
    kernel_name = variant_ == Variant::mma ? "tsr_mma_gemm" : "tsr_simt_gemm";
    // Split K while the blocks still fit in one wave (kLongKWaves for long sums) and every split keeps
    // kMinChunk values: a further wave of blocks costs as much as the first.
    // TESSERA_CUDA_SIMT_WAVES=n forces n waves for long sums (for measuring the rule).
    const int64_t tiles = ceil_div(s.m, tile_m_) * ceil_div(s.n, kTile);
    int waves = s.k >= kLongK ? kLongKWaves : 1;
    if (const char* env = std::getenv("TESSERA_CUDA_SIMT_WAVES");
        env != nullptr && std::atoi(env) >= 1 && s.k >= kLongK) {
      waves = std::atoi(env);
    }
    const int64_t most = std::max<int64_t>(1, std::min(int64_t{multiprocessors_} * waves / tiles, s.k / kMinChunk));
    const int64_t wanted = std::max<int64_t>(1, std::min(most, room));
    k_chunk_ = ceil_div(ceil_div(s.k, wanted), slice) * slice;
    // TESSERA_CUDA_SIMT_CHUNK forces the K per split (a multiple of the slice) for measuring the rule above.
    if (const char* env = std::getenv("TESSERA_CUDA_SIMT_CHUNK"); env != nullptr && std::atoi(env) >= slice) {
      const int64_t forced = std::atoi(env) / slice * slice;
      if (ceil_div(s.k, forced) <= room) k_chunk_ = forced;
    }
    splits_ = static_cast<int>(ceil_div(s.k, k_chunk_));
    // A few splits (up to twice a cluster's, then as many as one takes) are added inside a thread-block
    // cluster on sm_90 instead of by a second launch (TESSERA_CUDA_SIMT_CLUSTER=0 keeps the launch).
    if (variant_ == Variant::simt && splits_ > 1 && splits_ <= 2 * kMaxCluster && clusters_allowed() &&
        ctx.device().compute_capability() >= 90) {
      k_chunk_ = ceil_div(ceil_div(s.k, std::min(splits_, kMaxCluster)), slice) * slice;
      splits_ = static_cast<int>(ceil_div(s.k, k_chunk_));
      if (splits_ > 1) {
        cluster_ = splits_;
        defines += fmt::format("#define TSR_CLUSTER {}\n", cluster_);
      }
    }
    grid_ = dim3(static_cast<unsigned>(ceil_div(s.n, kTile)), static_cast<unsigned>(ceil_div(s.m, tile_m_)),
                 static_cast<unsigned>(splits_));
  }
  reduce_warps_ = splits_ >= kWarpReduceSplits;
  const bool reduce_launch = splits_ > 1 && cluster_ == 0;
  if (reduce_launch) kernels += reduce_warps_ ? kReduceWarpsKernel : kReduceKernel;
  module_ =
      ctx.compiler().module(defines + operands + kTailActivation + kCommon + kernels, fmt::format("simt gemm kernels ({})", describe()));
  kernel_ = module_->kernel(kernel_name);
  if (reduce_launch)
    reduce_kernel_ = module_->kernel(reduce_warps_ ? "tsr_simt_gemm_reduce_warps" : "tsr_simt_gemm_reduce");
}

void SimtGemm::run(const void* a, const void* b, const void* bias, const void* c, void* d, cudaStream_t stream) const {
  const GemmShape& s = shape_;
  long long m = s.m, n = s.n, k = s.k, lda = s.lda, ldb = s.ldb, ldd = s.ldd, chunk = k_chunk_;
  const float* pbias = s.bias ? static_cast<const float*>(bias) : nullptr;
  const float* pres = s.residual ? static_cast<const float*>(c) : nullptr;
  int act = activation_code(s.activation);
  float* parts = partials_;
  void* params[] = {&a, &b, &d, &parts, &m, &n, &k, &lda, &ldb, &ldd, &chunk, &pbias, &pres, &act};
  launch_kernel(reinterpret_cast<const void*>(kernel_), grid_, dim3(kThreads), params, 0, stream,
                "cudaLaunchKernel (simt gemm)");
  if (splits_ == 1 || cluster_ > 0) return;
  const float* cparts = partials_;
  int splits = splits_;
  void* reduce_params[] = {&cparts, &d, &m, &n, &ldd, &splits, &pbias, &pres, &act};
  const int64_t threads = s.m * s.n * (reduce_warps_ ? 32 : 1);
  const int64_t blocks = std::min<int64_t>(ceil_div(threads, kThreads), int64_t{multiprocessors_} * 8);
  launch_kernel(reinterpret_cast<const void*>(reduce_kernel_), dim3(static_cast<unsigned>(blocks)), dim3(kThreads),
                reduce_params, 0, stream, "cudaLaunchKernel (simt gemm reduce)");
}

std::string SimtGemm::describe() const {
  const GemmShape& s = shape_;
  const char* kernel = variant_ == Variant::mma       ? " 3xtf32 tensor cores"
                       : variant_ == Variant::short_k ? " thread per column"
                       : variant_ == Variant::narrow  ? " narrow"
                                                      : "";
  const std::string split =
      kernel + (splits_ > 1 ? fmt::format(" split {}", splits_) : "") + (cluster_ > 0 ? " in a cluster" : "") +
      (tile_m_ == 32 ? " (32-row tiles)" : "");
  if (!label_.empty()) return label_ + split;
  return fmt::format("f32 simt gemm {}x{}x{}{}{}{}{}{}{}", s.m, s.n, s.k, s.a_transposed ? " A^T" : "",
                     s.b_transposed ? " B^T" : "", s.bias ? " +bias" : "", s.residual ? " +residual" : "",
                     s.activation == GemmActivation::relu   ? " relu"
                     : s.activation == GemmActivation::gelu ? " gelu"
                                                            : "",
                     split);
}

}  // namespace tessera::backends::cuda
