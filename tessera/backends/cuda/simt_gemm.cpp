#include "tessera/backends/cuda/simt_gemm.h"

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <cstring>

#include <fmt/format.h>

#include "tessera/backends/cuda/launch.h"
#include "tessera/core/error.h"

namespace tessera::backends::cuda {

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

// The kernels read A and B through TSR_A(row, k) and TSR_B(k, col) (an element inside the product; the
// text before this one defines them), write D at index TSR_D(row, col) and add the bias at
// TSR_BIAS(row, col). TSR_A_T / TSR_B_T choose which index runs along a warp's loads (1: A's rows, B's
// K), so that the operand's memory is read in runs. Plain matrices (kMatrixOperands) and convolutions
// read through taps (conv_gemm.cpp) share this text.
constexpr const char* kCore = R"(
#define TSR_TILE 64
#define TSR_SLICE 16
#define TSR_PAD 68
#ifndef TSR_TM
#define TSR_TM 64
#endif
#define TSR_RM (TSR_TM / 16)
#define TSR_PADM (TSR_TM + 4)

// This thread's elements of each operand's next K slice into registers (the loads of slice s + 1 are in
// flight while slice s is multiplied): TSR_RM of A's TSR_TM x 16, four of B's 16 x 64.
__device__ __forceinline__ void tsr_fetch(const float* a, const float* b, long long m0, long long n0, long long kb,
                                          long long k1, long long m, long long n, long long lda, long long ldb,
                                          int tid, float ra[TSR_RM], float rb[4]) {
#pragma unroll
  for (int i = 0; i < TSR_RM; ++i) {
    const int e = tid + i * 256;
#if TSR_A_T
    const int ar = e % TSR_TM, ak = e / TSR_TM;
#else
    const int ak = e & 15, ar = e >> 4;
#endif
    ra[i] = m0 + ar < m && kb + ak < k1 ? TSR_A(m0 + ar, kb + ak) : 0.f;
  }
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    const int e = tid + i * 256;
#if TSR_B_T
    const int bk = e & 15, bc = e >> 4;
#else
    const int bc = e & 63, bk = e >> 6;
#endif
    rb[i] = n0 + bc < n && kb + bk < k1 ? TSR_B(kb + bk, n0 + bc) : 0.f;
  }
}

__device__ __forceinline__ void tsr_stash(float (*as)[TSR_PADM], float (*bs)[TSR_PAD], int tid, const float ra[TSR_RM],
                                          const float rb[4]) {
#pragma unroll
  for (int i = 0; i < TSR_RM; ++i) {
    const int e = tid + i * 256;
#if TSR_A_T
    as[e / TSR_TM][e % TSR_TM] = ra[i];
#else
    as[e & 15][e >> 4] = ra[i];
#endif
  }
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    const int e = tid + i * 256;
#if TSR_B_T
    bs[e & 15][e >> 4] = rb[i];
#else
    bs[e >> 6][e & 63] = rb[i];
#endif
  }
}

// The fused tail, as cuBLASLt's epilogues order it: activation(v + bias + residual).
__device__ __forceinline__ float tsr_tail(float v, long long row, long long col, long long ldd, const float* bias,
                                          const float* residual, int activation) {
  if (bias != nullptr) v += bias[TSR_BIAS(row, col)];
  if (residual != nullptr) v += residual[TSR_D(row, col)];
  if (activation == 1) v = fmaxf(v, 0.f);
  if (activation == 2) v = 0.5f * v * (1.f + tanhf(0.7978845608028654f * (v + 0.044715f * v * v * v)));
  return v;
}

// One TSR_TM x 64 tile of the result over K in [z * k_chunk, (z + 1) * k_chunk). Unsplit (gridDim.z == 1) it
// stores the tile with the tail; split, it stores its partial sums (rows of n in split z of `partials`)
// for tsr_simt_gemm_reduce. (A last-block-adds-them variant, one launch fewer, was slower: the MLP step
// at batch 64 took 262 instead of 191 us, with one block per tile left to add every split.)
extern "C" __global__ void __launch_bounds__(256)
tsr_simt_gemm(const float* a, const float* b, float* d, float* partials, long long m, long long n,
              long long k, long long lda, long long ldb, long long ldd, long long k_chunk, const float* bias,
              const float* residual, int activation) {
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
  float ra[TSR_RM], rb[4];
  if (k0 < k1) tsr_fetch(a, b, m0, n0, k0, k1, m, n, lda, ldb, tid, ra, rb);
  for (long long kb = k0; kb < k1; kb += TSR_SLICE) {
    tsr_stash(as, bs, tid, ra, rb);
    __syncthreads();
    if (kb + TSR_SLICE < k1) tsr_fetch(a, b, m0, n0, kb + TSR_SLICE, k1, m, n, lda, ldb, tid, ra, rb);
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
    __syncthreads();
  }
  const bool split = gridDim.z > 1;
#pragma unroll
  for (int i = 0; i < TSR_RM; ++i) {
    const long long row = m0 + ty * TSR_RM + i;
#pragma unroll
    for (int j = 0; j < 4; ++j) {
      const long long col = n0 + tx * 4 + j;
      if (row < m && col < n) {
        if (split) {
          partials[((long long)blockIdx.z * m + row) * n + col] = acc[i][j];
        } else {
          d[TSR_D(row, col)] = tsr_tail(acc[i][j], row, col, ldd, bias, residual, activation);
        }
      }
    }
  }
}

// D = the splits' partial sums added in split order, then the tail: one output per thread, its loads
// issued four splits at a time.
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

// The same for many splits into few outputs: a warp per output, lane l adding splits l, l + 32, ... in
// order, then the lanes' sums by a fixed butterfly (deterministic as well).
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

std::atomic<int>& mode_slot() {
  static std::atomic<int> slot{-2};  // -2: not read from the environment yet
  return slot;
}

int simt_mode() {
  int v = mode_slot().load();
  if (v == -2) {
    const char* env = std::getenv("TESSERA_CUDA_SIMT_GEMM");
    v = env == nullptr ? -1 : std::strcmp(env, "0") == 0 ? 0 : std::strcmp(env, "1") == 0 ? 1 : -1;
    mode_slot().store(v);
  }
  return v;
}

int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

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

std::string simt_matrix_operands(const GemmShape& s) {
  return fmt::format("#define TSR_A_T {}\n#define TSR_B_T {}\n", s.a_transposed ? 1 : 0, s.b_transposed ? 1 : 0) +
         kMatrixOperands;
}

}  // namespace

void set_simt_gemm(int mode) { mode_slot().store(mode < 0 ? -1 : mode > 0 ? 1 : 0); }

bool simt_gemm_suits(const GemmShape& s, int multiprocessors) {
  const bool possible = s.dtype == DType::f32 && !s.tf32 && !s.f32_output && s.batch == 1 && s.m > 0 && s.n > 0 &&
                        s.k > 0;
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

SimtGemm::SimtGemm(Context& ctx, const GemmShape& s) : SimtGemm(ctx, s, simt_matrix_operands(s), "") {}

SimtGemm::SimtGemm(Context& ctx, const GemmShape& s, const std::string& operands, std::string label)
    : shape_(s), label_(std::move(label)), multiprocessors_(ctx.multiprocessors()) {
  TESSERA_CHECK(s.dtype == DType::f32 && s.batch == 1, "cuda simt gemm: {} batch {} (f32, one matrix)",
                dtype_name(s.dtype), s.batch);
  // Products of at most 32 rows take 32-row tiles (two rows per thread): a 64-row tile would compute
  // as many rows of zeros. TESSERA_CUDA_SIMT_TM=64 keeps 64 (for measuring it).
  const char* tm = std::getenv("TESSERA_CUDA_SIMT_TM");
  tile_m_ = s.m <= 32 && (tm == nullptr || std::strcmp(tm, "64") != 0) ? 32 : 64;
  module_ = ctx.compiler().module(fmt::format("#define TSR_TM {}\n", tile_m_) + operands + kCore,
                                  fmt::format("simt gemm kernels ({})", describe()));
  kernel_ = module_->kernel("tsr_simt_gemm");
  // Split K while the blocks still fit in one wave (kLongKWaves for long sums) and every split keeps
  // kMinChunk values: a further wave of blocks costs as much as the first.
  // TESSERA_CUDA_SIMT_WAVES=n forces n waves for long sums (for measuring the rule).
  const int64_t tiles = ceil_div(s.m, tile_m_) * ceil_div(s.n, kTile);
  int waves = s.k >= kLongK ? kLongKWaves : 1;
  if (const char* env = std::getenv("TESSERA_CUDA_SIMT_WAVES"); env != nullptr && std::atoi(env) >= 1 && s.k >= kLongK) {
    waves = std::atoi(env);
  }
  const int64_t most = std::max<int64_t>(1, std::min(int64_t{multiprocessors_} * waves / tiles, s.k / kMinChunk));
  const int64_t room = static_cast<int64_t>(ctx.workspace_bytes() / (sizeof(float) * static_cast<size_t>(s.m * s.n)));
  const int64_t wanted = std::max<int64_t>(1, std::min(most, room));
  k_chunk_ = ceil_div(ceil_div(s.k, wanted), kSlice) * kSlice;
  // TESSERA_CUDA_SIMT_CHUNK forces the K per split (a multiple of 16) for measuring the rule above.
  if (const char* env = std::getenv("TESSERA_CUDA_SIMT_CHUNK"); env != nullptr && std::atoi(env) >= kSlice) {
    const int64_t forced = std::atoi(env) / kSlice * kSlice;
    if (ceil_div(s.k, forced) <= room) k_chunk_ = forced;
  }
  splits_ = static_cast<int>(ceil_div(s.k, k_chunk_));
  partials_ = static_cast<float*>(ctx.workspace());
  reduce_warps_ = splits_ >= kWarpReduceSplits;
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
  const dim3 grid(static_cast<unsigned>(ceil_div(s.n, kTile)), static_cast<unsigned>(ceil_div(s.m, tile_m_)),
                  static_cast<unsigned>(splits_));
  launch_kernel(reinterpret_cast<const void*>(kernel_), grid, dim3(kThreads), params, 0, stream,
                "cudaLaunchKernel (simt gemm)");
  if (splits_ == 1) return;
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
  const std::string split =
      (splits_ > 1 ? fmt::format(" split {}", splits_) : "") + (tile_m_ == 32 ? " (32-row tiles)" : "");
  if (!label_.empty()) return label_ + split;
  return fmt::format("f32 simt gemm {}x{}x{}{}{}{}{}{}{}", s.m, s.n, s.k, s.a_transposed ? " A^T" : "",
                     s.b_transposed ? " B^T" : "", s.bias ? " +bias" : "", s.residual ? " +residual" : "",
                     s.activation == GemmActivation::relu ? " relu" : s.activation == GemmActivation::gelu ? " gelu" : "",
                     split);
}

}  // namespace tessera::backends::cuda
