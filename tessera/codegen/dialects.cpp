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
