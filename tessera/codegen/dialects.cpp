// The dialect tables. C and CUDA C share the math library names (CUDA's device math library mirrors
// C99's); they differ in qualifiers, literals of bool, how the range is walked and pragmas.
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
  // In ScalarType order: f32, f64, i8, u8, i32, u32, i64, u64, bool.
  d.type_names = {"float", "double", "int8_t", "uint8_t", "int32_t", "uint32_t", "int64_t", "uint64_t", "_Bool"};
  d.bool_buffer_type = "uint8_t";  // gcc does not vectorise loads of _Bool
  d.math_names = c99_math("__builtin_");
  d.isnan_fn = "__builtin_isnan";
  d.isinf_fn = "__builtin_isinf";
  d.true_literal = "1";
  d.false_literal = "0";
  d.f32_suffix = "f";
  d.inf_literal = {"__builtin_inff()", "__builtin_inf()"};
  d.nan_literal = {"__builtin_nanf(\"\")", "__builtin_nan(\"\")"};
  d.kernel_qualifier = "";
  d.helper_qualifier = "static inline";
  d.shared_body_qualifier = "static __attribute__((noinline))";
  // No restrict: the backend may run an elementwise kernel in place (an output aliasing an input read
  // at the same index); the simd pragma alone lets gcc vectorise the inner loops.
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
  d.type_names = {"float", "double", "int8_t", "uint8_t", "int32_t", "uint32_t", "int64_t", "uint64_t", "bool"};
  d.bool_buffer_type = "bool";
  d.math_names = c99_math("");
  d.isnan_fn = "isnan";
  d.isinf_fn = "isinf";
  d.true_literal = "true";
  d.false_literal = "false";
  d.f32_suffix = "f";
  d.inf_literal = {"__int_as_float(0x7f800000)", "__longlong_as_double(0x7ff0000000000000LL)"};
  d.nan_literal = {"__int_as_float(0x7fc00000)", "__longlong_as_double(0x7ff8000000000000LL)"};
  d.kernel_qualifier = "extern \"C\" __global__";
  d.helper_qualifier = "__device__ __forceinline__";
  d.shared_body_qualifier = "__device__ __noinline__";
  d.restrict_qualifier = "__restrict__";
  d.inner_loop_pragma = "";
  d.simd_reduction_pragma = "";
  d.thread_index = "((int64_t)blockIdx.x * blockDim.x + threadIdx.x)";
  d.thread_count = "((int64_t)gridDim.x * blockDim.x)";
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
