// The C and CUDA C tables (GLSL's is in dialect_glsl.cpp). They share the math library names (CUDA's
// device math library mirrors C99's), the kernel interface and literals; they differ in qualifiers,
// bool, f16/bf16 conversions, how the range is walked and pragmas.
#include <fmt/format.h>

#include "tessera/codegen/dialect.h"

namespace tessera::codegen {

namespace {

// C99 math names (f-suffixed for float), with an optional prefix such as "__builtin_".
std::array<std::array<std::string, 2>, lower::kNumMathFns> c99_math(const std::string& prefix) {
  // In MathFn order: exp, expm1, log, log1p, sqrt, sin, cos, tanh, erf, floor, ceil, nearbyint, fabs, pow.
  const char* base[] = {"exp",  "expm1", "log",   "log1p", "sqrt",      "sin",  "cos",
                        "tanh", "erf",   "floor", "ceil",  "nearbyint", "fabs", "pow"};
  std::array<std::array<std::string, 2>, lower::kNumMathFns> names;
  for (int i = 0; i < lower::kNumMathFns; ++i) {
    names[static_cast<size_t>(i)] = {prefix + base[i] + "f", prefix + base[i]};
  }
  return names;
}

// Both take the kernel's range and two arrays of buffer pointers: a host call for C and, for CUDA, the
// same four kernel parameters to cudaLaunchKernel (device arrays of device pointers).
void c_family_interface(Dialect& d) {
  d.kernel_signature = [](const Dialect& self, const std::string& symbol) {
    return fmt::format("{}void {}(const void* const* in_, void* const* out_, int64_t begin, int64_t end)",
                       self.kernel_qualifier.empty() ? "" : self.kernel_qualifier + " ", symbol);
  };
  d.bind_buffer = [](const Dialect& self, const BufferBinding& b) {
    const std::string r = self.restrict_qualifier.empty() ? "" : " " + self.restrict_qualifier;
    if (b.output) return fmt::format("{0}*{1} out{2} = ({0}*)out_[{2}];", b.elem_type, r, b.index);
    return fmt::format("const {0}*{1} in{2} = (const {0}*)in_[{2}];", b.elem_type, r, b.index);
  };
  d.index_type = "int64_t";
  d.and_op = "&";  // bools are 0 or 1: & and | without the branches of && and || (gcc vectorises them)
  d.or_op = "|";
  // In ScalarType order: f32, f64, i8, u8, i32, u32, i64, u64, bool, f16, bf16.
  d.int_literal = {"", "", "{}", "{}", "{}", "{}u", "{}ll", "{}ull", "", "", ""};
  d.f32_suffix = "f";
  d.nan_flag_decl = "int {flag} = 0";
  d.nan_flag_update = "{flag} |= {v} != {v};";
}

// f16 and bf16 in plain C on their bits (no _Float16, no F16C), bit for bit as tessera/core/half.cpp:
// round to nearest even, NaN stays a quiet NaN, overflow goes to infinity.
const char* const kCUint16 = "typedef __UINT16_TYPE__ uint16_t;\n";
const char* const kCF16Helpers = R"(
static inline float tsr_f16_to_f32(uint16_t h) {
  const uint32_t em = h & 0x7fffu;
  uint32_t bits;
  if (em >= 0x7c00u) {
    bits = 0x7f800000u | ((em & 0x3ffu) << 13);  // inf, NaN
  } else if (em >= 0x0400u) {
    bits = (em << 13) + 0x38000000u;  // normal: the exponent rebiased from 15 to 127
  } else {
    const float f = (float)em * 5.9604644775390625e-8f;  // zero, subnormal: em * 2^-24, exact
    __builtin_memcpy(&bits, &f, 4);
  }
  bits |= (uint32_t)(h & 0x8000u) << 16;
  float f;
  __builtin_memcpy(&f, &bits, 4);
  return f;
}
static inline uint16_t tsr_f32_to_f16(float f) {
  uint32_t x;
  __builtin_memcpy(&x, &f, 4);
  const uint32_t ax = x & 0x7fffffffu;
  uint32_t h;
  if (ax > 0x7f800000u) {
    h = 0x7e00u | ((ax >> 13) & 0x3ffu);
  } else if (ax >= 0x47800000u) {
    h = 0x7c00u;  // 2^16 and above (and inf)
  } else if (ax >= 0x38800000u) {
    h = (ax - 0x38000000u) >> 13;  // normal; a carry out of the mantissa rounds up correctly, to inf too
    const uint32_t rest = ax & 0x1fffu;
    h += rest > 0x1000u || (rest == 0x1000u && (h & 1u));
  } else if (ax >= 0x33000000u) {
    const uint32_t shift = 126u - (ax >> 23);  // subnormal: shift the whole significand into place
    const uint32_t m = (ax & 0x7fffffu) | 0x800000u;
    const uint32_t rest = m & ((1u << shift) - 1u), half = 1u << (shift - 1u);
    h = m >> shift;
    h += rest > half || (rest == half && (h & 1u));
  } else {
    h = 0;  // below 2^-25: rounds to zero
  }
  return (uint16_t)(h | ((x >> 16) & 0x8000u));
}
)";
const char* const kCBf16Helpers = R"(
static inline float tsr_bf16_to_f32(uint16_t h) {
  const uint32_t bits = (uint32_t)h << 16;
  float f;
  __builtin_memcpy(&f, &bits, 4);
  return f;
}
static inline uint16_t tsr_f32_to_bf16(float f) {
  uint32_t x;
  __builtin_memcpy(&x, &f, 4);
  if ((x & 0x7fffffffu) > 0x7f800000u) return (uint16_t)((x >> 16) | 0x40u);  // NaN: quiet, never inf
  return (uint16_t)((x + 0x7fffu + ((x >> 16) & 1u)) >> 16);
}
)";

Dialect make_c() {
  Dialect d;
  d.name = "c";
  d.schedule = Schedule::RowLoops;
  // No #include: glibc's math.h alone costs the compiler tens of milliseconds. gcc and clang predefine
  // the fixed-width types and know the math functions as builtins (they still call libm's expf etc.).
  d.prelude =
      "typedef __INT8_TYPE__ int8_t;\n"
      "typedef __UINT8_TYPE__ uint8_t;\n"
      "typedef __INT32_TYPE__ int32_t;\n"
      "typedef __UINT32_TYPE__ uint32_t;\n"
      "typedef __INT64_TYPE__ int64_t;\n"
      "typedef __UINT64_TYPE__ uint64_t;\n";
  c_family_interface(d);
  // In ScalarType order: f32, f64, i8, u8, i32, u32, i64, u64, bool, f16, bf16 (their bits).
  d.type_names = {"float",   "double",   "int8_t", "uint8_t",  "int32_t", "uint32_t",
                  "int64_t", "uint64_t", "_Bool",  "uint16_t", "uint16_t"};
  d.type_requirements[static_cast<size_t>(lower::ScalarType::f16)] = {kCUint16, kCF16Helpers};
  d.type_requirements[static_cast<size_t>(lower::ScalarType::bf16)] = {kCUint16, kCBf16Helpers};
  d.half_to_f32 = {"tsr_f16_to_f32", "tsr_bf16_to_f32"};
  d.f32_to_half = {"tsr_f32_to_f16", "tsr_f32_to_bf16"};
  d.bool_buffer_type = "uint8_t";  // gcc does not vectorise loads of _Bool
  d.math_names = c99_math("__builtin_");
  d.isnan_fn = "__builtin_isnan";
  d.isinf_fn = "__builtin_isinf";
  d.true_literal = "1";
  d.false_literal = "0";
  d.inf_literal = {"__builtin_inff()", "__builtin_inf()"};
  d.nan_literal = {"__builtin_nanf(\"\")", "__builtin_nan(\"\")"};
  d.kernel_qualifier = "";
  d.helper_qualifier = "static inline";
  d.shared_body_qualifier = "static __attribute__((noinline))";
  // No restrict (see Dialect::restrict_qualifier); the simd pragma alone lets gcc vectorise the inner loops.
  d.restrict_qualifier = "";
  // omp simd (with -fopenmp-simd) vectorises at any -O level and, like ivdep, promises independent
  // iterations; gcc's -O2 cost model would otherwise skip loops whose trip count it does not know.
  d.inner_loop_pragma = "#pragma omp simd";
  d.simd_reduction_pragma = "#pragma omp simd {}";
  // Streaming stores through compiler builtins rather than <immintrin.h>, whose parsing would cost
  // every cold compile: 32-byte stores with AVX, 16-byte with SSE2, clang's generic non-temporal
  // builtin, else plain copies (the generated C compiles on any target).
  d.stream_helpers = R"(
#if defined(__clang__)
typedef long long tsr_nt_vec __attribute__((vector_size(32), aligned(32)));
#define TSR_NT_STORE(p, v) __builtin_nontemporal_store((v), (tsr_nt_vec*)(p))
#elif defined(__AVX__)
typedef long long tsr_nt_vec __attribute__((vector_size(32), may_alias));
#define TSR_NT_STORE(p, v) __builtin_ia32_movntdq256((tsr_nt_vec*)(p), (v))
#elif defined(__SSE2__)
typedef long long tsr_nt_vec __attribute__((vector_size(16), may_alias));
#define TSR_NT_STORE(p, v) __builtin_ia32_movntdq((tsr_nt_vec*)(p), (v))
#endif
// Whole 64-byte destination lines go out with non-temporal stores; the partial lines at either end
// with ordinary ones, so no line is written both ways.
static inline void tsr_stream_store(void* dst, const void* src, int64_t bytes) {
  unsigned char* d = (unsigned char*)dst;
  const unsigned char* s = (const unsigned char*)src;
#if defined(TSR_NT_STORE)
  int64_t head = (int64_t)(-(__UINTPTR_TYPE__)d & 63);
  if (head > bytes) head = bytes;
  if (head) __builtin_memcpy(d, s, (__SIZE_TYPE__)head);
  int64_t i = head;
  for (; i + 64 <= bytes; i += 64) {
    for (int k = 0; k < 64; k += (int)sizeof(tsr_nt_vec)) {
      tsr_nt_vec v;
      __builtin_memcpy(&v, s + i + k, sizeof v);
      TSR_NT_STORE(d + i + k, v);
    }
  }
  if (i < bytes) __builtin_memcpy(d + i, s + i, (__SIZE_TYPE__)(bytes - i));
#else
  __builtin_memcpy(d, s, (__SIZE_TYPE__)bytes);
#endif
}
static inline void tsr_stream_fence(void) {
#if defined(TSR_NT_STORE) && (defined(__x86_64__) || defined(__i386__))
  __builtin_ia32_sfence();
#endif
}
)";
  d.stream_store_fn = "tsr_stream_store";
  d.stream_fence = "tsr_stream_fence();";
  d.stream_buffer_decl = "{type} {name}[{size}] __attribute__((aligned(64)))";
  return d;
}

Dialect make_cuda() {
  Dialect d;
  d.name = "cuda";
  d.schedule = Schedule::GridStride;
  // NVRTC has no standard headers: fixed-width types come from the built-in ones.
  d.prelude =
      "typedef signed char int8_t;\n"
      "typedef unsigned char uint8_t;\n"
      "typedef int int32_t;\n"
      "typedef unsigned int uint32_t;\n"
      "typedef long long int64_t;\n"
      "typedef unsigned long long uint64_t;\n";
  c_family_interface(d);
  d.type_names = {"float",   "double",   "int8_t", "uint8_t", "int32_t",      "uint32_t",
                  "int64_t", "uint64_t", "bool",   "__half",  "__nv_bfloat16"};
  // cuda_fp16.h and cuda_bf16.h are not NVRTC built-ins: the caller passes the toolkit's include
  // directory (-I<cuda>/include, as the tests do). Only modules with f16/bf16 buffers include them.
  d.type_requirements[static_cast<size_t>(lower::ScalarType::f16)] = {"#include <cuda_fp16.h>\n"};
  d.type_requirements[static_cast<size_t>(lower::ScalarType::bf16)] = {"#include <cuda_bf16.h>\n"};
  d.half_to_f32 = {"__half2float", "__bfloat162float"};
  d.f32_to_half = {"__float2half_rn", "__float2bfloat16_rn"};
  d.bool_buffer_type = "bool";
  d.math_names = c99_math("");
  d.isnan_fn = "isnan";
  d.isinf_fn = "isinf";
  d.true_literal = "true";
  d.false_literal = "false";
  d.inf_literal = {"__int_as_float(0x7f800000)", "__longlong_as_double(0x7ff0000000000000LL)"};
  d.nan_literal = {"__int_as_float(0x7fc00000)", "__longlong_as_double(0x7ff8000000000000LL)"};
  d.kernel_qualifier = "extern \"C\" __global__";
  d.helper_qualifier = "__device__ __forceinline__";
  d.shared_body_qualifier = "__device__ __noinline__";
  d.restrict_qualifier = "";  // not __restrict__: in-place kernels alias an output with an input
  d.narrow_division_type = "uint32_t";
  d.inner_loop_pragma = "";
  d.simd_reduction_pragma = "";
  d.thread_index = "((int64_t)blockIdx.x * blockDim.x + threadIdx.x)";
  d.thread_count = "((int64_t)gridDim.x * blockDim.x)";
  d.warp_size = 32;
  d.block_size = 256;
  d.local_index = "((int64_t)threadIdx.x)";
  d.block_index = "((int64_t)blockIdx.x)";
  d.block_count = "((int64_t)gridDim.x)";
  d.shuffle_xor = "__shfl_xor_sync(0xffffffffu, {v}, {m})";
  d.barrier = "__syncthreads();";
  d.shared_decl = "__shared__ {type} {name}[{size}]";
  d.scratch_binding = "unsigned char* tsr_scratch = (unsigned char*)out_[{k}];";
  d.atomic_increment = "atomicAdd((unsigned int*)({p}), 1u)";
  d.memory_fence = "__threadfence();";
  d.volatile_qualifier = "volatile";
  // 16-byte accesses: the memory system moves whole sectors per warp and each thread has four
  // floats in flight instead of one (HOPPER.md's advice for memory-bound code).
  d.vector_bytes = 16;
  // Two vectors per thread step: one 16-byte load per thread in flight covered only about 90% of
  // the copy bandwidth on an H200.
  d.vector_unroll = 2;
  // Four elements per thread where rows allow no vectors (a RoPE pair axis, strided casts): one element
  // per thread left the 2,048-token prefill's RoPE latency-bound (51 us for 42 MB on an H200).
  d.scalar_unroll = 4;
  d.unroll_pragma = "#pragma unroll";
  d.vector_helpers = "template <typename T, int N> struct alignas(sizeof(T) * N) tsr_vec { T v[N]; };\n";
  d.vector_type = "tsr_vec<{type}, {n}>";
  d.address_bits = "((unsigned long long)({p}))";
  return d;
}

}  // namespace

const Dialect& c_dialect() {
  static const Dialect d = make_c();
  return d;
}

const Dialect& cuda_dialect() {
  static const Dialect d = make_cuda();
  return d;
}

}  // namespace tessera::codegen
