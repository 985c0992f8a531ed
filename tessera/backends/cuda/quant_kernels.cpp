#include "tessera/backends/cuda/quant_kernels.h"

#include <algorithm>
#include <cstdlib>
#include <string>

#include <fmt/format.h>

#include "tessera/backends/common/epilogues.h"
#include "tessera/backends/cuda/cuda_check.h"
#include "tessera/backends/cuda/launch.h"
#include "tessera/backends/cuda/grid.h"
#include "tessera/core/error.h"

namespace tessera::backends::cuda {

namespace {

using quant::GgmlType;

// Shared by every module: byte loads of a row and the 16-bit float formats.
constexpr const char* kPrelude = R"CUDA(
#include <cuda_fp16.h>
#include <cuda_bf16.h>
typedef unsigned char u8;
typedef unsigned short u16;
typedef unsigned int u32;
__device__ __forceinline__ u16 ld16(const u8* p) { return *(const u16*)p; }
__device__ __forceinline__ u32 ld32(const u8* p) { return *(const u32*)p; }
__device__ __forceinline__ float half_bits(u16 b) { return __half2float(__ushort_as_half(b)); }
__device__ __forceinline__ float bf16_bits(u16 b) { return __uint_as_float(((u32)b) << 16); }
// v - bias as a float for 0 <= v < 2^23, exactly, without the int-to-float converter (a quarter-rate
// unit that 4-bit rows would keep busy): 2^23 + v is the float with v in its mantissa.
__device__ __forceinline__ float small_int(u32 v, float bias) { return __uint_as_float(0x4B000000u | v) - (8388608.0f + bias); }
)CUDA";

// Per type, `decode(row, s, q, s0, s1, off)` reads group s of a row (GROUP consecutive values): value
// j is s0 * q[j] + off for j < GROUP/2 and s1 * q[j] + off above (two scales: Q6_K's groups of 16);
// HAS_OFFSET says whether off can be non-zero (else the products skip the sum of x it multiplies).
// The scale products are formed in the reference's order (quant/dequantize.cpp), so decoded values
// equal its bit for bit. Formats that share a body differ in the defines before it.
constexpr const char* kQ4_0 = R"CUDA(
#define GROUP 32
#define HAS_OFFSET 0
__device__ __forceinline__ void decode(const u8* row, long long s, float* q, float& s0, float& s1, float& off) {
  const u8* b = row + 18 * s;
  s0 = s1 = half_bits(ld16(b));
  off = 0.0f;
#pragma unroll
  for (int j = 0; j < 8; ++j) {
    const u32 w = ld16(b + 2 + 2 * j);
    q[2 * j] = small_int(w & 15, 8.0f);
    q[2 * j + 1] = small_int((w >> 8) & 15, 8.0f);
    q[2 * j + 16] = small_int((w >> 4) & 15, 8.0f);
    q[2 * j + 17] = small_int(w >> 12, 8.0f);
  }
}
)CUDA";

constexpr const char* kQ4_1 = R"CUDA(
#define GROUP 32
#define HAS_OFFSET 1
__device__ __forceinline__ void decode(const u8* row, long long s, float* q, float& s0, float& s1, float& off) {
  const u8* b = row + 20 * s;
  s0 = s1 = half_bits(ld16(b));
  off = half_bits(ld16(b + 2));
#pragma unroll
  for (int j = 0; j < 4; ++j) {
    const u32 w = ld32(b + 4 + 4 * j);
#pragma unroll
    for (int t = 0; t < 4; ++t) {
      q[4 * j + t] = small_int((w >> (8 * t)) & 15, 0.0f);
      q[4 * j + t + 16] = small_int((w >> (8 * t + 4)) & 15, 0.0f);
    }
  }
}
)CUDA";

// Q5_0: d, qh[4], qs[16] (22 bytes), x = d * (q - 16); Q5_1: d, m, qh[4], qs[16] (24), x = d * q + m.
// Bit 4 of value v is bit v of qh.
constexpr const char* kQ5_0 = "#define Q5_BYTES 22\n#define Q5_QH 2\n#define Q5_BIAS 16\n#define Q5_MIN 0\n";
constexpr const char* kQ5_1 = "#define Q5_BYTES 24\n#define Q5_QH 4\n#define Q5_BIAS 0\n#define Q5_MIN 1\n";
constexpr const char* kQ5Body = R"CUDA(
#define GROUP 32
#define HAS_OFFSET Q5_MIN
__device__ __forceinline__ void decode(const u8* row, long long s, float* q, float& s0, float& s1, float& off) {
  const u8* b = row + Q5_BYTES * s;
  s0 = s1 = half_bits(ld16(b));
  off = Q5_MIN ? half_bits(ld16(b + 2)) : 0.0f;
  const u32 qh = (u32)ld16(b + Q5_QH) | ((u32)ld16(b + Q5_QH + 2) << 16);
#pragma unroll
  for (int j = 0; j < 8; ++j) {
    const u32 w = ld16(b + Q5_QH + 4 + 2 * j);
#pragma unroll
    for (int t = 0; t < 2; ++t) {
      const int v = 2 * j + t;
      q[v] = small_int(((w >> (8 * t)) & 15) | (((qh >> v) << 4) & 16), (float)Q5_BIAS);
      q[v + 16] = small_int(((w >> (8 * t + 4)) & 15) | ((qh >> (v + 12)) & 16), (float)Q5_BIAS);
    }
  }
}
)CUDA";

constexpr const char* kQ8_0 = R"CUDA(
#define GROUP 32
#define HAS_OFFSET 0
__device__ __forceinline__ void decode(const u8* row, long long s, float* q, float& s0, float& s1, float& off) {
  const u8* b = row + 34 * s;
  s0 = s1 = half_bits(ld16(b));
  off = 0.0f;
#pragma unroll
  for (int j = 0; j < 16; ++j) {
    const u32 w = ld16(b + 2 + 2 * j);
    q[2 * j] = small_int((w & 255) ^ 128u, 128.0f);
    q[2 * j + 1] = small_int((w >> 8) ^ 128u, 128.0f);
  }
}
)CUDA";

// Q4_K (144 bytes: d, dmin, scales[12], qs[128]) and Q5_K (176: the same plus qh[32] before qs):
// groups of 32 within a 256-value super-block, 6-bit scales and mins (quant/blocks.h k4_scale_min).
constexpr const char* kQ4_K = "#define K_BYTES 144\n#define K_QS 16\n#define K_HIGH 0\n";
constexpr const char* kQ5_K = "#define K_BYTES 176\n#define K_QS 48\n#define K_HIGH 1\n";
constexpr const char* kKBody = R"CUDA(
#define GROUP 32
#define HAS_OFFSET 1
__device__ __forceinline__ void k4_scale_min(int j, const u8* sc, int& scale, int& mn) {
  if (j < 4) {
    scale = sc[j] & 63;
    mn = sc[j + 4] & 63;
  } else {
    scale = (sc[j + 4] & 15) | ((sc[j - 4] >> 6) << 4);
    mn = (sc[j + 4] >> 4) | ((sc[j] >> 6) << 4);
  }
}
__device__ __forceinline__ void decode(const u8* row, long long s, float* q, float& s0, float& s1, float& off) {
  const u8* b = row + K_BYTES * (s >> 3);
  const int p = (int)(s & 7), chunk = p >> 1, shift = (p & 1) * 4;
  int scale, mn;
  k4_scale_min(p, b + 4, scale, mn);
  s0 = s1 = __fmul_rn(half_bits(ld16(b)), (float)scale);
  off = -__fmul_rn(half_bits(ld16(b + 2)), (float)mn);
  const u8* qs = b + K_QS + 32 * chunk;
  const u32 bit = 1u << (2 * chunk + (p & 1));
#pragma unroll
  for (int j = 0; j < 8; ++j) {
    const u32 w = ld32(qs + 4 * j);
    const u32 h = K_HIGH ? ld32(b + 16 + 4 * j) : 0u;
#pragma unroll
    for (int t = 0; t < 4; ++t) {
      const u32 high = K_HIGH ? (((h >> (8 * t)) & bit) ? 16u : 0u) : 0u;
      q[4 * j + t] = small_int(((w >> (8 * t + shift)) & 15) + high, 0.0f);
    }
  }
}
)CUDA";

// Q6_K: ql[128], qh[64], scales[16] (int8), d. Group p of 32 takes nibble (p%4)/2 of ql[64*(p/4) +
// 32*(p%2) + l] and bits 2*(p%4).. of qh[32*(p/4) + l]; its halves have scales 2*(p%4) and one more.
constexpr const char* kQ6_K = R"CUDA(
#define GROUP 32
#define HAS_OFFSET 0
__device__ __forceinline__ void decode(const u8* row, long long s, float* q, float& s0, float& s1, float& off) {
  const u8* b = row + 210 * (s >> 3);
  const int p = (int)(s & 7), half = p >> 2, r = p & 3;
  const float d = half_bits(ld16(b + 208));
  const signed char* sc = (const signed char*)(b + 192 + 8 * half + 2 * r);
  s0 = __fmul_rn(d, (float)sc[0]);
  s1 = __fmul_rn(d, (float)sc[1]);
  off = 0.0f;
  const u8* ql = b + 64 * half + 32 * (r & 1);
  const u8* qh = b + 128 + 32 * half;
  const int shift = 4 * (r >> 1), hshift = 2 * r;
#pragma unroll
  for (int j = 0; j < 16; ++j) {
    const u32 l = ld16(ql + 2 * j), h = ld16(qh + 2 * j);
#pragma unroll
    for (int t = 0; t < 2; ++t) {
      const int v = (int)(((l >> (8 * t + shift)) & 15) | (((h >> (8 * t + hshift)) & 3) << 4));
      q[2 * j + t] = small_int((u32)v, 32.0f);
    }
  }
}
)CUDA";

// 16-bit float rows: 8 values per 16-byte load.
constexpr const char* kF16 = "#define WIDEN half_bits\n";
constexpr const char* kBF16 = "#define WIDEN bf16_bits\n";
constexpr const char* kHalfBody = R"CUDA(
#define GROUP 8
#define HAS_OFFSET 0
__device__ __forceinline__ void decode(const u8* row, long long s, float* q, float& s0, float& s1, float& off) {
  const uint4 w = *(const uint4*)(row + 16 * s);
  const u32 words[4] = {w.x, w.y, w.z, w.w};
#pragma unroll
  for (int j = 0; j < 4; ++j) {
    q[2 * j] = WIDEN((u16)(words[j] & 0xFFFF));
    q[2 * j + 1] = WIDEN((u16)(words[j] >> 16));
  }
  s0 = s1 = 1.0f;
  off = 0.0f;
}
)CUDA";

constexpr const char* kF32 = R"CUDA(
#define GROUP 4
#define HAS_OFFSET 0
__device__ __forceinline__ void decode(const u8* row, long long s, float* q, float& s0, float& s1, float& off) {
  const float4 w = *(const float4*)(row + 16 * s);
  q[0] = w.x;
  q[1] = w.y;
  q[2] = w.z;
  q[3] = w.w;
  s0 = s1 = 1.0f;
  off = 0.0f;
}
)CUDA";

// The decode function of `type`, or "" when there is none.
std::string decode_source(GgmlType type) {
  switch (type) {
    case GgmlType::q4_0:
      return kQ4_0;
    case GgmlType::q4_1:
      return kQ4_1;
    case GgmlType::q5_0:
      return std::string(kQ5_0) + kQ5Body;
    case GgmlType::q5_1:
      return std::string(kQ5_1) + kQ5Body;
    case GgmlType::q8_0:
      return kQ8_0;
    case GgmlType::q4_k:
      return std::string(kQ4_K) + kKBody;
    case GgmlType::q5_k:
      return std::string(kQ5_K) + kKBody;
    case GgmlType::q6_k:
      return kQ6_K;
    case GgmlType::f16:
      return std::string(kF16) + kHalfBody;
    case GgmlType::bf16:
      return std::string(kBF16) + kHalfBody;
    case GgmlType::f32:
      return kF32;
    default:
      return "";
  }
}

// A warp group of WARPS_PER_ROW (wpr) warps takes RPW consecutive weight rows, 8 / wpr groups per block
// of 8 warps: lane l of part p takes groups p * 32 + l, stepping 32 * wpr (consecutive lanes read
// consecutive blocks), UNROLL groups at a time so that UNROLL * RPW loads per lane are in flight. Each
// x group is loaded once for the RPW rows (x is read as f32: for 16-bit and narrower rows it is more
// bytes per value than the weight, so reading it once per row made the products L1-bound). Each group's
// dot products are scaled once per half; the offset term uses the sum of x over the group. A row's sum
// is formed in the same order whatever RPW is. Parts meet in shared memory.
constexpr const char* kMatvecSource = R"CUDA(
#ifndef UNROLL
#define UNROLL (GROUP == 32 ? 2 : 4)
#endif
__device__ __forceinline__ float warp_sum(float v) {
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
  return v;
}
__device__ __forceinline__ void accumulate(const float (*q)[GROUP], const float* s0, const float* s1, const float* off,
    const float* __restrict__ x, long long k, long long s, float (*acc)[ROWS]) {
#pragma unroll
  for (int r = 0; r < ROWS; ++r) {
    const float4* xp = (const float4*)(x + r * k + s * GROUP);
    float lo[RPW], hi[RPW], sum = 0.0f;
#pragma unroll
    for (int t = 0; t < RPW; ++t) lo[t] = hi[t] = 0.0f;
#pragma unroll
    for (int i = 0; i < GROUP / 4; ++i) {
      const float4 v = __ldg(xp + i);
#pragma unroll
      for (int t = 0; t < RPW; ++t) {
        const float part = q[t][4 * i] * v.x + q[t][4 * i + 1] * v.y + q[t][4 * i + 2] * v.z + q[t][4 * i + 3] * v.w;
        if (4 * i < GROUP / 2) lo[t] += part; else hi[t] += part;
      }
      if (HAS_OFFSET) sum += (v.x + v.y) + (v.z + v.w);
    }
#pragma unroll
    for (int t = 0; t < RPW; ++t) {
      acc[t][r] += HAS_OFFSET ? s0[t] * lo[t] + s1[t] * hi[t] + off[t] * sum : s0[t] * lo[t] + s1[t] * hi[t];
    }
  }
}
// The stored value: the product, then + bias[j], then the activation ACT (0 none, 1 ReLU, 2 tanh-GELU,
// as kernels/cpu/activation.h), then + the residual (the graph's order).
__device__ __forceinline__ float finish(float v, const float* bias, const float* res, long long n, int r, long long j) {
  if (bias != nullptr) v += bias[j];
#if ACT == 1
  v = v < 0.0f ? 0.0f : v;
#elif ACT == 2
  v = 0.5f * v * (1.0f + tanhf(0.7978845608028654f * (v + 0.044715f * v * v * v)));
#endif
  if (res != nullptr) v += res[r * n + j];
  return v;
}
// Rows j0 .. j0 + RPW - 1; rows past n read row n - 1 again (their sums are not stored).
__device__ __forceinline__ void row_products(const u8* __restrict__ w, const float* __restrict__ x, long long n,
    long long k, long long row_bytes, int wpr, int part, int lane, long long j0, float (*acc)[ROWS]) {
  const u8* rows[RPW];
#pragma unroll
  for (int t = 0; t < RPW; ++t) rows[t] = w + (j0 + t < n ? j0 + t : n - 1) * row_bytes;
  const long long groups = k / GROUP, stride = 32LL * wpr;
  long long s = (long long)part * 32 + lane;
  for (; s + (UNROLL - 1) * stride < groups; s += UNROLL * stride) {
    float q[UNROLL][RPW][GROUP], s0[UNROLL][RPW], s1[UNROLL][RPW], off[UNROLL][RPW];
#pragma unroll
    for (int u = 0; u < UNROLL; ++u) {
#pragma unroll
      for (int t = 0; t < RPW; ++t) decode(rows[t], s + u * stride, q[u][t], s0[u][t], s1[u][t], off[u][t]);
    }
#pragma unroll
    for (int u = 0; u < UNROLL; ++u) accumulate(q[u], s0[u], s1[u], off[u], x, k, s + u * stride, acc);
  }
  for (; s < groups; s += stride) {
    float q[RPW][GROUP], s0[RPW], s1[RPW], off[RPW];
#pragma unroll
    for (int t = 0; t < RPW; ++t) decode(rows[t], s, q[t], s0[t], s1[t], off[t]);
    accumulate(q, s0, s1, off, x, k, s, acc);
  }
}
extern "C" __global__ void __launch_bounds__(256) tsr_quant_matvec(const u8* __restrict__ w, const float* __restrict__ x,
    float* __restrict__ y, long long n, long long k, long long row_bytes, int wpr, const float* __restrict__ bias,
    const float* __restrict__ res) {
  TSR_GRID_PROLOGUE();
  __shared__ float partial[8][RPW * ROWS];
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, part = warp % wpr;
  const long long j0 = ((long long)blockIdx.x * (8 / wpr) + warp / wpr) * RPW;
  float acc[RPW][ROWS];
#pragma unroll
  for (int t = 0; t < RPW; ++t) {
#pragma unroll
    for (int r = 0; r < ROWS; ++r) acc[t][r] = 0.0f;
  }
  if (j0 < n) row_products(w, x, n, k, row_bytes, wpr, part, lane, j0, acc);
#pragma unroll
  for (int t = 0; t < RPW; ++t) {
#pragma unroll
    for (int r = 0; r < ROWS; ++r) acc[t][r] = warp_sum(acc[t][r]);
  }
  if (wpr == 1) {
    // Every lane holds every sum; lane t * ROWS + r stores row j0 + t of activation row r.
#pragma unroll
    for (int t = 0; t < RPW; ++t) {
#pragma unroll
      for (int r = 0; r < ROWS; ++r) {
        if (lane == t * ROWS + r && j0 + t < n) y[r * n + j0 + t] = finish(acc[t][r], bias, res, n, r, j0 + t);
      }
    }
    return;
  }
  if (lane == 0) {
#pragma unroll
    for (int t = 0; t < RPW; ++t) {
#pragma unroll
      for (int r = 0; r < ROWS; ++r) partial[warp][t * ROWS + r] = acc[t][r];
    }
  }
  __syncthreads();
  if (part == 0 && lane < RPW * ROWS) {
    const int t = lane / ROWS, r = lane % ROWS;
    if (j0 + t < n) {
      float total = 0.0f;
      for (int p = 0; p < wpr; ++p) total += partial[warp + p][lane];
      y[r * n + j0 + t] = finish(total, bias, res, n, r, j0 + t);
    }
  }
}
)CUDA";

constexpr const char* kDequantizeSource = R"CUDA(
extern "C" __global__ void tsr_dequantize(const u8* __restrict__ w, OUT* __restrict__ y, long long rows, long long k,
    long long row_bytes) {
  TSR_GRID_PROLOGUE();
  const long long groups = k / GROUP, total = rows * groups;
  const long long step = (long long)gridDim.x * blockDim.x;
  for (long long t = (long long)blockIdx.x * blockDim.x + threadIdx.x; t < total; t += step) {
    const long long r = t / groups, s = t - r * groups;
    float q[GROUP], s0, s1, off;
    decode(w + r * row_bytes, s, q, s0, s1, off);
    OUT* out = y + r * k + s * GROUP;
#pragma unroll
    for (int i = 0; i < GROUP; ++i) out[i] = CONVERT(__fadd_rn(__fmul_rn(i < GROUP / 2 ? s0 : s1, q[i]), off));
  }
}
)CUDA";

constexpr const char* kNarrowSource = R"CUDA(
extern "C" __global__ void tsr_narrow(const float* __restrict__ x, OUT* __restrict__ y, long long n) {
  TSR_GRID_PROLOGUE();
  const long long step = (long long)gridDim.x * blockDim.x;
  for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += step) y[i] = CONVERT(x[i]);
}
)CUDA";

struct OutType {
  const char* name;
  const char* convert;
};

OutType out_type(DType out) {
  switch (out) {
    case DType::f32:
      return {"float", ""};
    case DType::f16:
      return {"__half", "__float2half_rn"};
    case DType::bf16:
      return {"__nv_bfloat16", "__float2bfloat16_rn"};
    default:
      throw Error(fmt::format("cuda quant kernels: no output type {} (f32, f16, bf16)", dtype_name(out)));
  }
}

std::string checked_decode(GgmlType type) {
  std::string src = decode_source(type);
  TESSERA_CHECK(!src.empty(), "cuda: no GPU decoding of {} rows", quant::type_name(type));
  return src;
}

QuantKernel load(Context& ctx, const std::string& source, const char* name, const std::string& what) {
  QuantKernel k;
  k.module = ctx.compiler().module(source, what);
  k.kernel = k.module->kernel(name);
  return k;
}

// Matvec launch shapes forced for measuring them: TESSERA_CUDA_MATVEC_UNROLL (groups in flight per
// lane, 1..8), TESSERA_CUDA_MATVEC_WPR (warps per weight row: 1, 2, 4 or 8) and
// TESSERA_CUDA_MATVEC_RPW (weight rows per warp group: 1, 2 or 4); 0 when unset.
int matvec_override(const char* name, int most) {
  const char* env = std::getenv(name);
  const int v = env != nullptr ? std::atoi(env) : 0;
  return v >= 1 && v <= most ? v : 0;
}

int64_t group_of(GgmlType type) {
  switch (type) {
    case GgmlType::f32:
      return 4;
    case GgmlType::f16:
    case GgmlType::bf16:
      return 8;
    default:
      return 32;
  }
}

}  // namespace

bool gpu_decodes(GgmlType type, int64_t k) {
  if (decode_source(type).empty() || k <= 0) return false;
  return k % group_of(type) == 0;
}

QuantKernel quant_matvec_kernel(Context& ctx, GgmlType type, int rows, kernels::Activation activation) {
  TESSERA_CHECK(rows >= 1 && rows <= kMaxMatvecRows, "cuda quant matvec: {} rows (1..{})", rows, kMaxMatvecRows);
  TESSERA_CHECK(common::gpu_tail_applies(activation), "cuda quant matvec: an activation tail other than ReLU or tanh-GELU");
  const int rpw = matvec_rows_per_warp(type, rows);
  const int act = activation == kernels::Activation::relu ? 1 : activation == kernels::Activation::gelu_tanh ? 2 : 0;
  std::string defines = fmt::format("#define ROWS {}\n#define RPW {}\n#define ACT {}\n", rows, rpw, act);
  if (const int unroll = matvec_override("TESSERA_CUDA_MATVEC_UNROLL", 8)) defines += fmt::format("#define UNROLL {}\n", unroll);
  const std::string src = std::string(kPrelude) + checked_decode(type) + defines + kMatvecSource;
  QuantKernel k = load(ctx, src, "tsr_quant_matvec",
                       fmt::format("{} matvec kernel ({} rows, {} per warp{}{})", quant::type_name(type), rows, rpw,
                                   act == 0 ? "" : ", ", kernels::activation_name(activation)));
  k.rows = rows;
  k.rows_per_warp = rpw;
  return k;
}

void launch_quant_matvec(const QuantKernel& k, const void* w, const float* x, float* y, int64_t n, int64_t values,
                         int64_t row_bytes, int warps_per_row, cudaStream_t stream, const MatvecTail& tail) {
  if (n == 0) return;
  long long nn = n, kk = values, rb = row_bytes;
  int wpr = warps_per_row;
  const float* bias = tail.bias;
  const float* res = tail.residual;
  void* params[] = {&w, &x, &y, &nn, &kk, &rb, &wpr, &bias, &res};
  const int64_t rows_per_block = int64_t{kMatvecWarps / warps_per_row} * k.rows_per_warp;
  const auto blocks = static_cast<unsigned>((n + rows_per_block - 1) / rows_per_block);
  launch_kernel(reinterpret_cast<const void*>(k.kernel), dim3(blocks), dim3(32 * kMatvecWarps), params, 0, stream,
                "cudaLaunchKernel (quant matvec)");
}

int matvec_rows_per_warp(GgmlType type, int rows) {
  if (const int forced = matvec_override("TESSERA_CUDA_MATVEC_RPW", 4); forced != 0 && (forced & (forced - 1)) == 0) {
    return forced;
  }
  // Measured on an H200 over whole decode steps (TESSERA_CUDA_MATVEC_RPW sweeps, two warps per row):
  // Llama-1B Q4_0 899 tok/s with 4 rows per warp against 583 with one, bf16 885 with 2 against 771,
  // GPT-2 bf16 1,540 with 2 against 1,490 (4: 1,408). Launches of many activation rows keep one row
  // per warp (their accumulators multiply).
  if (rows > 2) return 1;
  return group_of(type) == 32 ? 4 : 2;
}

int matvec_warps_per_row(GgmlType type, int64_t n, int64_t k, int rows_per_warp, int multiprocessors) {
  if (const int forced = matvec_override("TESSERA_CUDA_MATVEC_WPR", kMatvecWarps); forced != 0 && (forced & (forced - 1)) == 0) {
    return forced;
  }
  const int64_t groups = k / group_of(type), unroll = group_of(type) == 32 ? 2 : 4;
  // Measured on an H200 over whole decode steps (tokens/s with one warps-per-row for every product):
  // rows of a byte or more per value (bf16, Q8_0) and 2048 or more values ran best with two warps per
  // row (bf16 790 against 743 with one; Q8_0 536 against 493), 4-bit rows with one (Q4_0 577 against
  // 547), and short rows with one. Short products then take more warps per row while the grid has
  // fewer than three blocks per multiprocessor and every lane still gets whole unrolled batches (four
  // for blocks of 32 values). Several rows per warp (matvec_rows_per_warp) ran best with two warps
  // per row for every type measured.
  const quant::TypeTraits& t = quant::type_traits(type);
  const bool wide_values = t.type_size >= t.block_size;  // at least a byte per value
  const int64_t batches = group_of(type) == 32 ? 4 : 1;
  int wpr = rows_per_warp > 1 || (wide_values && k >= 2048) ? 2 : 1;
  const int64_t row_groups = (n + rows_per_warp - 1) / rows_per_warp;
  while (wpr < kMatvecWarps && row_groups * wpr / kMatvecWarps < int64_t{3} * multiprocessors &&
         groups >= int64_t{32} * (2 * wpr) * unroll * batches) {
    wpr *= 2;
  }
  return wpr;
}

QuantKernel dequantize_kernel(Context& ctx, GgmlType type, DType out) {
  const OutType o = out_type(out);
  const std::string src = std::string(kPrelude) + checked_decode(type) +
                          fmt::format("#define OUT {}\n#define CONVERT {}\n", o.name, o.convert) + kDequantizeSource;
  return load(ctx, src, "tsr_dequantize", fmt::format("{} dequantize kernel (to {})", quant::type_name(type), dtype_name(out)));
}

void launch_dequantize(const QuantKernel& k, const void* w, void* y, int64_t rows, int64_t values, int64_t row_bytes,
                       int multiprocessors, cudaStream_t stream) {
  if (rows == 0 || values == 0) return;
  long long r = rows, kk = values, rb = row_bytes;
  void* params[] = {&w, &y, &r, &kk, &rb};
  launch_kernel(reinterpret_cast<const void*>(k.kernel), dim3(grid_stride_blocks(rows * values / 8, multiprocessors)),
                         dim3(256), params, 0, stream, "cudaLaunchKernel (dequantize)");
}

QuantKernel narrow_kernel(Context& ctx, DType out) {
  const OutType o = out_type(out);
  const std::string src = std::string(kPrelude) + fmt::format("#define OUT {}\n#define CONVERT {}\n", o.name, o.convert) +
                          kNarrowSource;
  return load(ctx, src, "tsr_narrow", fmt::format("f32 to {} kernel", dtype_name(out)));
}

void launch_narrow(const QuantKernel& k, const float* x, void* y, int64_t n, int multiprocessors, cudaStream_t stream) {
  if (n == 0) return;
  long long nn = n;
  void* params[] = {&x, &y, &nn};
  launch_kernel(reinterpret_cast<const void*>(k.kernel), dim3(grid_stride_blocks(n, multiprocessors)), dim3(256), params,
                         0, stream, "cudaLaunchKernel (narrow)");
}

}  // namespace tessera::backends::cuda
