// The GLSL 450 compute table of the Vulkan backend. Each kernel is a shader module whose
// buffers are std430 storage blocks at bindings 0.. (inputs, then outputs), whose range [begin, end)
// comes in push constants, and whose invocations stride over the range as CUDA threads do.
// Optional device features are enabled per module, only for the types a kernel touches: 8- and
// 16-bit storage for i8/u8/bool and f16/bf16 buffers, 64-bit integers for i64/u64.
#include <fmt/format.h>

#include "tessera/codegen/dialect.h"

namespace tessera::codegen {

namespace {

using lower::MathFn;
using lower::ScalarType;

const char* const kStorage8 = "#extension GL_EXT_shader_8bit_storage : require\n";
const char* const kInt8 = "#extension GL_EXT_shader_explicit_arithmetic_types_int8 : require\n";
const char* const kStorage16 = "#extension GL_EXT_shader_16bit_storage : require\n";
const char* const kInt16 = "#extension GL_EXT_shader_explicit_arithmetic_types_int16 : require\n";
const char* const kInt64 = "#extension GL_EXT_shader_explicit_arithmetic_types_int64 : require\n";

// f16 and bf16 live in uint16_t buffers and convert in integer code, rounding to nearest even as
// the C table does: float16_t(x) would leave the rounding to the device (SPIR-V does not fix it).
const char* const kF16Helpers = R"(
float tsr_f16_to_f32(uint16_t h) {
  return unpackHalf2x16(uint(h)).x;  // exact for every f16, NaN and subnormals included
}
uint16_t tsr_f32_to_f16(float f) {
  const uint x = floatBitsToUint(f);
  const uint ax = x & 0x7fffffffu;
  uint h;
  if (ax > 0x7f800000u) {
    h = 0x7e00u | ((ax >> 13) & 0x3ffu);
  } else if (ax >= 0x47800000u) {
    h = 0x7c00u;
  } else if (ax >= 0x38800000u) {
    h = (ax - 0x38000000u) >> 13;
    const uint rest = ax & 0x1fffu;
    if (rest > 0x1000u || (rest == 0x1000u && (h & 1u) != 0u)) h += 1u;
  } else if (ax >= 0x33000000u) {
    const uint shift = 126u - (ax >> 23);
    const uint m = (ax & 0x7fffffu) | 0x800000u;
    const uint rest = m & ((1u << shift) - 1u), half_way = 1u << (shift - 1u);
    h = m >> shift;
    if (rest > half_way || (rest == half_way && (h & 1u) != 0u)) h += 1u;
  } else {
    h = 0u;
  }
  return uint16_t(h | ((x >> 16) & 0x8000u));
}
)";
const char* const kBf16Helpers = R"(
float tsr_bf16_to_f32(uint16_t h) {
  return uintBitsToFloat(uint(h) << 16);
}
uint16_t tsr_f32_to_bf16(float f) {
  const uint x = floatBitsToUint(f);
  if ((x & 0x7fffffffu) > 0x7f800000u) return uint16_t((x >> 16) | 0x40u);
  return uint16_t((x + 0x7fffu + ((x >> 16) & 1u)) >> 16);
}
)";

// GLSL lacks expm1, log1p and erf. The first two use Kahan's corrections, exact to a few ulps given
// exp and log; erf is a Taylor series near 0 and Abramowitz & Stegun 7.1.26 (error < 1.5e-7) beyond.
const char* const kExpm1 = R"(
float tsr_expm1_f32(float x) {
  const float u = exp(x);
  if (u == 1.0) return x;
  const float um1 = u - 1.0;
  if (um1 == -1.0 || isinf(u)) return um1;
  return um1 * x / log(u);
}
)";
const char* const kLog1p = R"(
float tsr_log1p_f32(float x) {
  const float u = 1.0 + x;
  if (u == 1.0) return x;
  if (u <= 0.0) return u == 0.0 ? uintBitsToFloat(0xff800000u) : uintBitsToFloat(0x7fc00000u);
  if (isinf(u)) return u;
  return log(u) * x / (u - 1.0);
}
)";
const char* const kErf = R"(
float tsr_erf_f32(float x) {
  const float a = abs(x);
  if (a < 0.5) {
    const float s = x * x;
    return x * (1.1283791671 + s * (-0.3761263890 + s * (0.1128379167 +
           s * (-0.0268661706 + s * (0.0052239776 - s * 0.0008548327)))));
  }
  const float t = 1.0 / (1.0 + 0.3275911 * a);
  const float p = t * (0.254829592 + t * (-0.284496736 + t * (1.421413741 + t * (-1.453152027 + t * 1.061405429))));
  return sign(x) * (1.0 - p * exp(-a * a));
}
)";

Dialect make_glsl() {
  Dialect d;
  d.name = "glsl";
  d.schedule = Schedule::GridStride;
  d.one_kernel_per_module = true;
  d.prelude = "#version 450\n";
  auto req = [&](ScalarType t) -> std::vector<std::string>& { return d.type_requirements[static_cast<size_t>(t)]; };
  req(ScalarType::i8) = req(ScalarType::u8) = {kStorage8, kInt8};
  req(ScalarType::i64) = req(ScalarType::u64) = {kInt64};
  req(ScalarType::f16) = {kStorage16, kInt16, kF16Helpers};
  req(ScalarType::bf16) = {kStorage16, kInt16, kBf16Helpers};

  d.kernel_signature = [](const Dialect&, const std::string& symbol) {
    return fmt::format(
        "// {}: the module's entry point\n"
        "layout(local_size_x = 256) in;\n"
        "layout(push_constant) uniform TsrRange {{ int begin; int end; }};\n"
        "void main()",
        symbol);
  };
  d.bind_buffer = [](const Dialect&, const BufferBinding& b) {
    return fmt::format("layout(std430, binding = {}) {} buffer Tsr{}{} {{ {} {}{}[]; }};", b.binding,
                       b.output ? "writeonly" : "readonly", b.output ? "Out" : "In", b.index, b.elem_type,
                       b.output ? "out" : "in", b.index);
  };
  d.bindings_at_module_scope = true;

  // In ScalarType order: f32, f64, i8, u8, i32, u32, i64, u64, bool, f16, bf16 (their bits).
  d.type_names = {"float",   "double",   "int8_t", "uint8_t",  "int",     "uint",
                  "int64_t", "uint64_t", "bool",   "uint16_t", "uint16_t"};
  d.bool_buffer_type = "uint8_t";  // bool tensors are bytes; GLSL's bool has no storage layout
  d.index_type = "int";
  d.index_bits = 32;
  d.functional_casts = true;
  d.strict_types = true;
  d.and_op = "&&";  // & and | do not take bools in GLSL
  d.or_op = "||";

  // Double precision has no transcendental functions in GLSL: the f64 helpers evaluate them in f32
  // (the f64 formulas of gelu, softplus and elu lose precision; a Vulkan backend should lower those
  // in f32, and many devices lack shaderFloat64 anyway).
  const char* f32_names[] = {"exp",  "tsr_expm1_f32", "log",   "tsr_log1p_f32", "sqrt",      "sin", "cos",
                             "tanh", "tsr_erf_f32",   "floor", "ceil",          "roundEven", "abs", "pow"};
  for (int i = 0; i < lower::kNumMathFns; ++i) {
    const auto fn = static_cast<MathFn>(i);
    const std::string f32 = f32_names[i];
    const bool native_f64 = fn == MathFn::sqrt || fn == MathFn::floor || fn == MathFn::ceil ||
                            fn == MathFn::nearbyint || fn == MathFn::fabs;
    const std::string f64 = native_f64 ? f32 : fmt::format("tsr_{}_f64", lower::math_fn_name(fn));
    d.math_names[static_cast<size_t>(i)] = {f32, f64};
    if (native_f64) continue;
    d.math_helpers[static_cast<size_t>(i)][1] =
        fn == MathFn::pow
            ? fmt::format("\ndouble {}(double x, double y) {{ return double({}(float(x), float(y))); }}\n", f64, f32)
            : fmt::format("\ndouble {}(double x) {{ return double({}(float(x))); }}\n", f64, f32);
  }
  d.math_helpers[static_cast<size_t>(MathFn::expm1)][0] = kExpm1;
  d.math_helpers[static_cast<size_t>(MathFn::log1p)][0] = kLog1p;
  d.math_helpers[static_cast<size_t>(MathFn::erf)][0] = kErf;
  d.isnan_fn = "isnan";
  d.isinf_fn = "isinf";
  d.half_to_f32 = {"tsr_f16_to_f32", "tsr_bf16_to_f32"};
  d.f32_to_half = {"tsr_f32_to_f16", "tsr_f32_to_bf16"};

  d.true_literal = "true";
  d.false_literal = "false";
  d.int_literal = {"", "", "int8_t({})", "uint8_t({})", "{}", "{}u", "{}l", "{}ul", "", "", ""};
  d.f32_suffix = "";
  d.f64_suffix = "lf";
  d.inf_literal = {"uintBitsToFloat(0x7f800000u)", "packDouble2x32(uvec2(0u, 0x7ff00000u))"};
  d.nan_literal = {"uintBitsToFloat(0x7fc00000u)", "packDouble2x32(uvec2(0u, 0x7ff80000u))"};
  d.nan_flag_decl = "bool {flag} = false";
  d.nan_flag_update = "{flag} = {flag} || isnan({v});";

  d.thread_index = "int(gl_GlobalInvocationID.x)";
  d.thread_count = "int(gl_NumWorkGroups.x * gl_WorkGroupSize.x)";
  // Reductions with many elements per output spread them over a group of invocations (the decision
  // of codegen/thread_mapping, as on CUDA) that meet in a shared-memory tree: subgroups have no fixed
  // width, so the workgroup plays the warp. The tree's order is fixed, so results are deterministic.
  d.warp_size = 256;
  d.block_size = 256;
  d.lanes_through_shared = true;
  d.local_index = "int(gl_LocalInvocationID.x)";
  d.block_index = "int(gl_WorkGroupID.x)";
  d.block_count = "int(gl_NumWorkGroups.x)";
  d.barrier = "barrier();";
  d.shared_decl = "shared {type} {name}[{size}]";
  d.nan_flag_merge = "{a} = {a} || {b};";
  d.nan_flag_type = "bool";
  return d;
}

}  // namespace

const Dialect& glsl_dialect() {
  static const Dialect d = make_glsl();
  return d;
}

}  // namespace tessera::codegen
