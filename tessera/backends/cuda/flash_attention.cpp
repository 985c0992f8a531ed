#include "tessera/backends/cuda/flash_attention.h"

#include <cstdint>
#include <cstdlib>
#include <cstring>

#include <fmt/format.h>

namespace tessera::backends::cuda {

namespace {

// A block takes 64 consecutive queries of HEADS query heads of one KV group (16 rows per warp, four
// warps per head: the heads share every staged key and value) and walks the cache rows of the group in
// tiles of KT keys, up to the block's last position. Tiles are staged in shared memory as f16 (rows
// padded by 8 halves so the fragment loads of a quad's 8 rows hit 32 banks); with 16-byte rows of an
// f16 cache the next tile is fetched by cp.async while the current one is multiplied (two stages).
// S = Q K^T and O += P V are m16n8k16 products. The scores' accumulator fragment is, value for value,
// the A fragment of the next product (rows g and g + 8, keys 2t and 2t + 1 of each 8), so P goes from
// S to the tensor cores without shared memory. Scores are in base 2 (Q is scaled by log2 e) so the
// softmax uses ex2. A key past a query's position is -inf (only tiles that reach past a warp's first
// position are masked); a query whose position is outside the cache raises the error flag and gets
// zeros. Q passes through the staging memory once, into registers, before the first tile.
constexpr const char* kFlashAttentionSource = R"CUDA(
#include <cuda_fp16.h>
typedef unsigned int u32;
#define DP (D + 8)
#define DVP (DV + 8)
#define ROWS (QUERIES * HEADS)
#define NEG_INF (-__int_as_float(0x7f800000))
#define ASYNC (VEC && KV_HALF)
#define STAGES (ASYNC ? 2 : 1)
#define TILE_HALVES (KT * DP + KT * DVP)
#define Q_HALVES (ROWS * DP)
#define SMEM_HALVES (STAGES * TILE_HALVES > Q_HALVES ? STAGES * TILE_HALVES : Q_HALVES)
// Up to 64 channels: two blocks of two heads (128 registers a thread, a few spilled) or three of one
// head (166, none) per multiprocessor.
#define MIN_BLOCKS (D <= 64 && DV <= 64 ? (HEADS == 2 ? 2 : 3) : 1)
__device__ __forceinline__ void mma16816(float* c, const u32* a, u32 b0, u32 b1) {
  asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
               : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
               : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}
__device__ __forceinline__ float ex2(float x) {
  float y;
  asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x));
  return y;
}
__device__ __forceinline__ u32 pack(float lo, float hi) {
  const __half2 h = __floats2half2_rn(lo, hi);
  return *(const u32*)&h;
}
// Four 8x8 f16 tiles of shared memory: lane l names row l % 8 of tile l / 8, and gets two values of
// each tile's row l / 4 (B fragments of a row-major [key][channel] tile for S = Q K^T).
__device__ __forceinline__ void ldmatrix_x4(u32* r, const __half* row) {
  const unsigned address = (unsigned)__cvta_generic_to_shared(row);
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(address));
}
// Four 8x8 f16 tiles of shared memory, transposed: lane l names row l % 8 of tile l / 8, and gets
// two values of each tile's column l / 4 (the B fragment of a row-major [key][channel] tile).
__device__ __forceinline__ void ldmatrix_x4_trans(u32* r, const __half* row) {
  const unsigned address = (unsigned)__cvta_generic_to_shared(row);
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0,%1,%2,%3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(address));
}
// Rows t0 .. t0 + KT - 1 of one KV head into shared memory as f16 (rows past the cache are zeros):
// asynchronous 16-byte copies for an f16 cache with 16-byte rows, converting loads otherwise.
template <int W, int WP>
__device__ __forceinline__ void stage(const KV_T* __restrict__ src, __half* dst, long long t0, long long rows, int hk,
                                      int g) {
#if ASYNC
  constexpr int per_row = W / 8;  // 16-byte pieces
  for (int c = threadIdx.x; c < KT * per_row; c += THREADS) {
    const int r = c / per_row, piece = c % per_row;
    const bool inside = t0 + r < rows;
    const uint4* from = (const uint4*)(src + ((inside ? t0 + r : 0) * hk + g) * W) + piece;
    const unsigned to = (unsigned)__cvta_generic_to_shared(dst + r * WP + piece * 8);
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(to), "l"(from), "r"(inside ? 16 : 0));
  }
#else
  for (int c = threadIdx.x; c < KT * W; c += THREADS) {
    const int r = c / W, col = c % W;
    float value = 0.0f;
    if (t0 + r < rows) value = (float)src[((t0 + r) * hk + g) * W + col];
    dst[r * WP + col] = __float2half_rn(value);
  }
#endif
}
__device__ __forceinline__ void stage_tile(const KV_T* __restrict__ k, const KV_T* __restrict__ v, __half* tile,
                                           long long t0, long long rows, int hk, int g) {
  stage<D, DP>(k, tile, t0, rows, hk, g);
  stage<DV, DVP>(v, tile + KT * DP, t0, rows, hk, g);
#if ASYNC
  asm volatile("cp.async.commit_group;\n" ::);
#endif
}
extern "C" __global__ void __launch_bounds__(THREADS, MIN_BLOCKS) tsr_flash_attention(const float* __restrict__ q,
    const KV_T* __restrict__ k, const KV_T* __restrict__ v, const POS_T* __restrict__ pos, float* __restrict__ out,
    int* error, int m, int hq, int hk, long long rows, float scale, long long q_stride) {
  TSR_GRID_PROLOGUE();
  __shared__ __align__(16) __half smem[SMEM_HALVES];
  __shared__ int last[QUERIES];  // the last cache row each query reads; -1: none (rows < 2^31, see fits)
  // The last queries read the most rows (causal prefill): their tiles start first.
  const int i0 = (gridDim.x - 1 - blockIdx.x) * QUERIES;
  const int tid = threadIdx.x, warp = tid >> 5, lane = tid & 31, gq = lane >> 2, tq = lane & 3;
  const int h = blockIdx.y * HEADS + warp / (QUERIES / 16), g = blockIdx.y * HEADS / (hq / hk);
  if (tid < QUERIES) {
    int p = -1;
    if (i0 + tid < m) {
      const long long at = (long long)pos[i0 + tid];
      if (at >= 0 && at < rows) p = (int)at;
      else *error = 1;
    }
    last[tid] = p;
  }
  const float q_scale = scale * 1.4426950408889634f;
  for (int c = tid; c < ROWS * D; c += THREADS) {
    const int r = c / D, col = c % D, i = i0 + r % QUERIES, head = blockIdx.y * HEADS + r / QUERIES;
    const float value = i < m ? q[(long long)i * q_stride + (long long)head * D + col] * q_scale : 0.0f;
    smem[r * DP + col] = __float2half_rn(value);
  }
  __syncthreads();
  const int row0 = (warp % (QUERIES / 16)) * 16 + gq;  // this lane's first query of the block
  int block_last = -1, warp_last = -1, warp_first = 0x7fffffff;
  for (int r = 0; r < QUERIES; ++r) {
    block_last = max(block_last, last[r]);
    if (r / 16 == row0 / 16) warp_last = max(warp_last, last[r]), warp_first = min(warp_first, last[r]);
  }
  const int last0 = last[row0], last1 = last[row0 + 8];
  u32 qa[D / 16][4];
  const __half* qrow = smem + (warp * 16 + gq) * DP;
#pragma unroll
  for (int kk = 0; kk < D / 16; ++kk) {
    const __half* r0 = qrow + kk * 16 + 2 * tq;
    qa[kk][0] = *(const u32*)r0;
    qa[kk][1] = *(const u32*)(r0 + 8 * DP);
    qa[kk][2] = *(const u32*)(r0 + 8);
    qa[kk][3] = *(const u32*)(r0 + 8 * DP + 8);
  }
  __syncthreads();  // Q is in registers: the staging memory is free for the tiles
  float o[DV / 8][4];
#pragma unroll
  for (int j = 0; j < DV / 8; ++j) o[j][0] = o[j][1] = o[j][2] = o[j][3] = 0.0f;
  float run_max[2] = {NEG_INF, NEG_INF}, run_sum[2] = {0.0f, 0.0f};
#if ASYNC
  if (block_last >= 0) stage_tile(k, v, smem, 0, rows, hk, g);
#endif
  int stage_index = 0;
  for (int t0 = 0; t0 <= block_last; t0 += KT, stage_index ^= (STAGES - 1)) {
    __half* tile = smem + stage_index * TILE_HALVES;
#if ASYNC
    // Fetch the next tile into the other stage (its last readers passed the barrier at the loop's end),
    // then wait for this one.
    if (t0 + KT <= block_last) stage_tile(k, v, smem + (stage_index ^ 1) * TILE_HALVES, t0 + KT, rows, hk, g);
    else asm volatile("cp.async.commit_group;\n" ::);
    asm volatile("cp.async.wait_group 1;\n" ::);
#else
    stage_tile(k, v, tile, t0, rows, hk, g);
#endif
    __syncthreads();
    if (t0 <= warp_last) {  // else every query of this warp is done (causal prefill)
      const __half* ks = tile;
      const __half* vs = tile + KT * DP;
      float s[KT / 8][4];
#pragma unroll
      for (int j = 0; j < KT / 8; ++j) {
        s[j][0] = s[j][1] = s[j][2] = s[j][3] = 0.0f;
        // Keys j * 8 + l % 8, channels kk * 16 + (l / 8) * 8: the B fragments of two k-steps at once.
        const __half* krow = ks + (j * 8 + (lane & 7)) * DP + (lane >> 3) * 8;
#pragma unroll
        for (int kk = 0; kk + 1 < D / 16; kk += 2) {
          u32 b[4];
          ldmatrix_x4(b, krow + kk * 16);
          mma16816(s[j], qa[kk], b[0], b[1]);
          mma16816(s[j], qa[kk + 1], b[2], b[3]);
        }
        if ((D / 16) % 2 == 1) {  // an odd number of k-steps: the last by two 32-bit loads
          const __half* kr = ks + (j * 8 + gq) * DP + 2 * tq + (D / 16 - 1) * 16;
          mma16816(s[j], qa[D / 16 - 1], *(const u32*)kr, *(const u32*)(kr + 8));
        }
      }
      if (t0 + KT - 1 > warp_first) {  // some key of the tile lies past some query's position
#pragma unroll
        for (int j = 0; j < KT / 8; ++j) {
#pragma unroll
          for (int e = 0; e < 2; ++e) {
            const int key = t0 + j * 8 + 2 * tq + e;
            if (key > last0) s[j][e] = NEG_INF;
            if (key > last1) s[j][2 + e] = NEG_INF;
          }
        }
      }
      float mx0 = run_max[0], mx1 = run_max[1];
#pragma unroll
      for (int j = 0; j < KT / 8; ++j) {
        mx0 = fmaxf(mx0, fmaxf(s[j][0], s[j][1]));
        mx1 = fmaxf(mx1, fmaxf(s[j][2], s[j][3]));
      }
#pragma unroll
      for (int o2 = 1; o2 < 4; o2 <<= 1) {
        mx0 = fmaxf(mx0, __shfl_xor_sync(0xffffffffu, mx0, o2));
        mx1 = fmaxf(mx1, __shfl_xor_sync(0xffffffffu, mx1, o2));
      }
      // A row with no key yet keeps -inf; subtracting 0 then keeps its weights 0 instead of NaN.
      const float sub0 = mx0 == NEG_INF ? 0.0f : mx0, sub1 = mx1 == NEG_INF ? 0.0f : mx1;
      const float corr0 = ex2(run_max[0] - sub0), corr1 = ex2(run_max[1] - sub1);
      run_max[0] = mx0;
      run_max[1] = mx1;
      run_sum[0] *= corr0;
      run_sum[1] *= corr1;
#pragma unroll
      for (int j = 0; j < DV / 8; ++j) {
        o[j][0] *= corr0;
        o[j][1] *= corr0;
        o[j][2] *= corr1;
        o[j][3] *= corr1;
      }
      u32 pa[KT / 16][4];
#pragma unroll
      for (int j = 0; j < KT / 8; ++j) {
        const float p0 = ex2(s[j][0] - sub0), p1 = ex2(s[j][1] - sub0);
        const float p2 = ex2(s[j][2] - sub1), p3 = ex2(s[j][3] - sub1);
        run_sum[0] += p0 + p1;
        run_sum[1] += p2 + p3;
        pa[j / 2][(j % 2) * 2] = pack(p0, p1);
        pa[j / 2][(j % 2) * 2 + 1] = pack(p2, p3);
      }
      // Tiles of lane l: keys kk * 16 + (l / 8 % 2) * 8 + l % 8, channels (j + l / 16) * 8 .. + 7.
      const __half* vrow = vs + (((lane >> 3) & 1) * 8 + (lane & 7)) * DVP + (lane >> 4) * 8;
#pragma unroll
      for (int j = 0; j < DV / 8; j += 2) {
#pragma unroll
        for (int kk = 0; kk < KT / 16; ++kk) {
          u32 b[4];
          ldmatrix_x4_trans(b, vrow + kk * 16 * DVP + j * 8);
          mma16816(o[j], pa[kk], b[0], b[1]);
          mma16816(o[j + 1], pa[kk], b[2], b[3]);
        }
      }
    }
    __syncthreads();  // this stage's rows are no longer read
  }
#if ASYNC
  asm volatile("cp.async.wait_group 0;\n" ::);
#endif
#pragma unroll
  for (int o2 = 1; o2 < 4; o2 <<= 1) {
    run_sum[0] += __shfl_xor_sync(0xffffffffu, run_sum[0], o2);
    run_sum[1] += __shfl_xor_sync(0xffffffffu, run_sum[1], o2);
  }
#pragma unroll
  for (int half = 0; half < 2; ++half) {
    const int i = i0 + row0 + 8 * half;
    if (i >= m) continue;
    const bool valid = (half == 0 ? last0 : last1) >= 0;
    const float inv = valid ? 1.0f / run_sum[half] : 0.0f;
    float* dst = out + ((long long)i * hq + h) * DV + 2 * tq;
#pragma unroll
    for (int j = 0; j < DV / 8; ++j) *(float2*)(dst + j * 8) = make_float2(o[j][2 * half] * inv, o[j][2 * half + 1] * inv);
  }
}
)CUDA";

// Query heads per block: one. TESSERA_CUDA_FLASH_HEADS=2 pairs the heads of a KV group (each staged
// tile then feeds twice the products) where the group is even: on an H200 the 2,048-token prefill of a
// Llama-1B shape ran 2% slower so (two blocks of 128 registers a thread with spills against three of
// 166 without).
int flash_heads_per_block(int64_t hq, int64_t hk) {
  const char* env = std::getenv("TESSERA_CUDA_FLASH_HEADS");
  if (env != nullptr && std::strcmp(env, "2") == 0) return (hq / hk) % 2 == 0 ? 2 : 1;
  return 1;
}

// Keys per tile: 64 while the tiles (two stages when copied asynchronously) fit the 48 KiB of static
// shared memory next to the position table, else 32 (Q passes through the same memory first).
int keys_per_tile(int64_t d, int64_t dv, bool async) {
  const int64_t stages = async ? 2 : 1;
  const int64_t budget = 48 * 1024 - kFlashQueries * 4;
  return stages * 2 * 64 * ((d + 8) + (dv + 8)) <= budget ? 64 : 32;
}

}  // namespace

bool flash_attention_fits(const ir::Node& node, int compute_capability) {
  const char* env = std::getenv("TESSERA_CUDA_FLASH_ATTENTION");
  if (env != nullptr && std::strcmp(env, "0") == 0) return false;
  const int64_t min_queries = env != nullptr && std::strcmp(env, "1") == 0 ? 1 : kFlashQueries;
  if (compute_capability < 80) return false;  // m16n8k16 f16 products
  const Shape &q = node.input(0).shape(), &k = node.input(1).shape(), &v = node.input(2).shape();
  const int64_t d = q[2], dv = v[2];
  // Cache positions are 32-bit ints in the kernel.
  return q[0] >= min_queries && k[1] > 0 && q[1] % k[1] == 0 && d % 16 == 0 && dv % 16 == 0 && d <= 128 &&
         dv <= 128 && k[0] < INT32_MAX - 64;
}

FlashAttentionKernel flash_attention_kernel(int64_t d, int64_t dv, DType cache, DType pos, bool vector_rows,
                                            int64_t m, int64_t hq, int64_t hk) {
  const bool half = cache == DType::f16;
  const int heads = flash_heads_per_block(hq, hk);
  const int threads = 32 * (kFlashQueries / 16) * heads;
  FlashAttentionKernel k;
  k.source = fmt::format(
                 "#define THREADS {}\n#define QUERIES {}\n#define HEADS {}\n#define KT {}\n#define D {}\n#define DV {}\n"
                 "#define KV_T {}\n#define KV_HALF {}\n#define VEC {}\n#define POS_T {}\n",
                 threads, kFlashQueries, heads, keys_per_tile(d, dv, half && vector_rows), d, dv,
                 half ? "__half" : "float", half ? 1 : 0, vector_rows ? 1 : 0, pos == DType::i32 ? "int" : "long long") +
             kFlashAttentionSource;
  k.grid = dim3(static_cast<unsigned>((m + kFlashQueries - 1) / kFlashQueries), static_cast<unsigned>(hq / heads));
  k.block = dim3(static_cast<unsigned>(threads));
  return k;
}

}  // namespace tessera::backends::cuda
