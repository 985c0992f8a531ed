// arange and eye on the Vulkan backend: ops without inputs, written by one shader each. eye writes the
// bits of 1 or 0 in any stored dtype but f64. arange computes start + i * step in the shader only where
// that is exact, so it equals the reference's value computed in f64 and then rounded: integer dtypes
// with whole starts and steps that stay within an int, and f32/f16 whose values are multiples of a
// power of two small enough for every product and sum to be exact in f32 (0.5, 0.75, ... steps and
// whole numbers up to 2^23). Other aranges (a 0.1 step) stay on the CPU.
#include <cmath>

#include <fmt/format.h>

#include "tessera/backends/vulkan/library_ops.h"
#include "tessera/backends/vulkan/shader_step.h"
#include "tessera/backends/vulkan/shader_text.h"
#include "tessera/backends/vulkan/steps.h"

namespace tessera::backends::vulkan {

namespace {

using common::Lowering;

bool whole(double v) { return std::isfinite(v) && v == std::trunc(v); }

// The exponent k (0..24) that makes start * 2^k and step * 2^k whole, or -1.
int dyadic_scale(double start, double step) {
  for (int k = 0; k <= 24; ++k) {
    if (whole(std::ldexp(start, k)) && whole(std::ldexp(step, k))) return k;
  }
  return -1;
}

bool claim_arange(const ir::Node& node) {
  if (!node.inputs().empty() || node.num_outputs() != 1 || !fits_int_indexing(node)) return false;
  const DType dt = node.output_types()[0].dtype;
  const double start = node.attrs().get_float("start"), step = node.attrs().get_float("step");
  const auto n = static_cast<double>(node.output_types()[0].numel());
  const double span = std::abs(std::max(n - 1, 0.0) * step);
  if (dt == DType::i32 || dt == DType::i64) {
    // int arithmetic in the shader: the start, every i * step and every value fit an int.
    const double limit = 2147483647.0;
    return whole(start) && whole(step) && std::abs(start) <= limit && span <= limit &&
           std::abs(start + (n - 1) * step) <= limit;
  }
  if (dt != DType::f32 && dt != DType::f16) return false;
  const int k = dyadic_scale(start, step);
  if (k < 0) return false;
  // Every value, product and sum a whole multiple of 2^-k below 2^23 of them: exact in f32 (and the
  // f16 rounding of an exact f32 is the f16 rounding of the f64 value).
  const double limit = std::ldexp(1.0, 23 - k);
  return std::abs(start) <= limit && span <= limit && (dt == DType::f32 || std::abs(start) + span <= 65504.0);
}

std::string arange_glsl(DType dt, double start, double step, int64_t n) {
  std::string value;
  switch (dt) {
    case DType::i32:
      value = fmt::format("{} + i * {}", static_cast<int64_t>(start), static_cast<int64_t>(step));
      break;
    case DType::i64:
      value = fmt::format("uvec2(uint({0} + i * {1}), {0} + i * {1} < 0 ? 0xffffffffu : 0u)",
                          static_cast<int64_t>(start), static_cast<int64_t>(step));
      break;
    default: {
      // %a-style exact literals are not GLSL: the values are multiples of 2^-k, printed exactly.
      const std::string v = fmt::format("float({:.17g}) + float(i) * float({:.17g})", start, step);
      value = float_storage(dt).store(v);
    }
  }
  const std::string type = dt == DType::i32 ? "int" : dt == DType::i64 ? "uvec2" : float_storage(dt).type;
  return fmt::format(R"(#version 450
{ext}// arange of {n} values from {start} by {step}.
layout(local_size_x = 256) in;
layout(std430, binding = 0) writeonly buffer TsrOut {{ {type} y[]; }};
layout(push_constant) uniform TsrShifts {{ int shift[1]; }};
void main() {{
  const int stride = int(gl_NumWorkGroups.x * gl_WorkGroupSize.x);
  for (int i = int(gl_GlobalInvocationID.x); i < {n}; i += stride) y[shift[0] + i] = {value};
}}
)",
                     fmt::arg("ext", dt == DType::f16 ? storage_extensions(2) : ""), fmt::arg("n", n),
                     fmt::arg("start", start), fmt::arg("step", step), fmt::arg("type", type),
                     fmt::arg("value", value));
}

bool lower_arange(Lowering& L, const ir::NodePtr& node) {
  if (!claim_arange(*node)) return false;
  const ir::Value out(node, 0);
  const int32_t y = L.produce(out);
  const DType dt = out.dtype();
  const int64_t n = out.type().numel();
  const double start = node->attrs().get_float("start"), step = node->attrs().get_float("step");
  const auto es = static_cast<uint32_t>(dt == DType::i64 ? 8 : dtype_size(dt));
  ShaderDispatch d;
  d.pipeline = lowering_context().pipelines().pipeline(arange_glsl(dt, start, step, n), 1,
                                                       fmt::format("arange {}", ir::type_str(out.type())));
  d.bindings = {{L.operand(y), static_cast<uint64_t>(n) * dtype_size(dt), true, es}};
  d.groups = {library_groups(n), 1, 1};
  L.emit(std::make_unique<ShaderStep>(std::vector<ShaderDispatch>{std::move(d)},
                                      fmt::format("arange {}", ir::type_str(out.type()))),
         {}, {y});
  return true;
}

bool claim_eye(const ir::Node& node) {
  return node.inputs().empty() && node.num_outputs() == 1 && node.output_types()[0].dtype != DType::f64 &&
         fits_int_indexing(node);
}

bool lower_eye(Lowering& L, const ir::NodePtr& node) {
  if (!claim_eye(*node)) return false;
  const ir::Value out(node, 0);
  const int32_t y = L.produce(out);
  const DType dt = out.dtype();
  const size_t es = dtype_size(dt);
  const std::string raw = raw_element_type(es);
  const int64_t n = node->attrs().get_int("n"), m = node->attrs().get_int("m"), k = node->attrs().get_int("k");
  const std::string glsl = fmt::format(R"(#version 450
{ext}// eye: {n} x {m}, ones on diagonal {k}.
layout(local_size_x = 256) in;
layout(std430, binding = 0) writeonly buffer TsrOut {{ {raw} y[]; }};
layout(push_constant) uniform TsrShifts {{ int shift[1]; }};
void main() {{
  const int stride = int(gl_NumWorkGroups.x * gl_WorkGroupSize.x);
  for (int e = int(gl_GlobalInvocationID.x); e < {total}; e += stride) {{
    y[shift[0] + e] = e % {m} == e / {m} + ({k}) ? {one} : {raw}(0);
  }}
}}
)",
                                       fmt::arg("ext", storage_extensions(es)), fmt::arg("n", n),
                                       fmt::arg("m", std::max<int64_t>(m, 1)), fmt::arg("k", k), fmt::arg("raw", raw),
                                       fmt::arg("total", n * m), fmt::arg("one", one_bits_glsl(dt)));
  ShaderDispatch d;
  d.pipeline = lowering_context().pipelines().pipeline(glsl, 1, fmt::format("eye {}", ir::type_str(out.type())));
  d.bindings = {{L.operand(y), static_cast<uint64_t>(n * m) * es, true, static_cast<uint32_t>(es)}};
  d.groups = {library_groups(n * m), 1, 1};
  L.emit(std::make_unique<ShaderStep>(std::vector<ShaderDispatch>{std::move(d)},
                                      fmt::format("eye {}", ir::type_str(out.type()))),
         {}, {y});
  return true;
}

}  // namespace

void register_creation_lowerings(common::LoweringTable& table) {
  table["arange"] = {lower_arange, claim_arange, true};
  table["eye"] = {lower_eye, claim_eye, true};
}

}  // namespace tessera::backends::vulkan
