// pad (constant and reflect) and slice_backward on the Vulkan backend: both place a source inside a
// larger packed result, element by element, each result element finding its source position axis by
// axis or taking the fill value. One shader per node, with the shapes, strides and placements written
// in (an axis that only copies costs nothing); the source is read where it lies.
#include <cstring>

#include <fmt/format.h>

#include "tessera/backends/vulkan/library_ops.h"
#include "tessera/backends/vulkan/shader_step.h"
#include "tessera/backends/vulkan/shader_text.h"
#include "tessera/backends/vulkan/steps.h"
#include "tessera/core/half.h"

namespace tessera::backends::vulkan {

namespace {

using common::Layout;
using common::Lowering;

// How result coordinate c of one axis finds its source coordinate.
struct AxisPlacement {
  enum Kind { same, shifted, reflected, strided } kind = same;
  int64_t start = 0;  // shifted, reflected: the padding before; strided: the first position
  int64_t step = 1;   // strided
  int64_t count = 0;  // the source's extent along the axis
};

// GLSL declaring s<d> (the source coordinate) and adding its condition to `inside`.
std::string placement_glsl(size_t d, const AxisPlacement& p) {
  switch (p.kind) {
    case AxisPlacement::same:
      return fmt::format("    const int s{0} = c{0};\n", d);
    case AxisPlacement::shifted:
      return fmt::format("    const int s{0} = c{0} - {1};\n    inside = inside && s{0} >= 0 && s{0} < {2};\n", d,
                         p.start, p.count);
    case AxisPlacement::reflected:
      // Mirrored without repeating the edge: -1 -> 1, n -> n - 2.
      return fmt::format("    const int r{0} = c{0} - {1};\n    const int s{0} = r{0} < 0 ? -r{0} : r{0} >= {2} ? {3} - r{0} : r{0};\n",
                         d, p.start, p.count, 2 * (p.count - 1));
    case AxisPlacement::strided: {
      // d = c - start must be a multiple of the step on the step's side, and the quotient < count.
      const bool up = p.step > 0;
      const int64_t magnitude = up ? p.step : -p.step;
      return fmt::format(
          "    const int r{0} = {1}(c{0} - {2}), s{0} = r{0} / {3};\n"
          "    inside = inside && r{0} >= 0 && r{0} % {3} == 0 && s{0} < {4};\n",
          d, up ? "" : "-", p.start, magnitude, p.count);
    }
  }
  return "";
}

std::string placed_glsl(const Shape& shape, const std::vector<AxisPlacement>& axes, const Layout& src,
                        size_t element_bytes, const std::string& fill, const std::string& what) {
  const std::string raw = raw_element_type(element_bytes);
  std::string places;
  std::string source = std::to_string(src.offset);
  for (size_t d = 0; d < shape.size(); ++d) {
    places += placement_glsl(d, axes[d]);
    if (src.strides[d] != 0 && src.shape[d] != 1) source += fmt::format(" + s{} * {}", d, src.strides[d]);
  }
  return fmt::format(R"(#version 450
{ext}// {what}: result {shape}.
layout(local_size_x = 256) in;
layout(std430, binding = 0) readonly buffer TsrX {{ {raw} x[]; }};
layout(std430, binding = 1) writeonly buffer TsrOut {{ {raw} y[]; }};
layout(push_constant) uniform TsrShifts {{ int shift[2]; }};
void main() {{
  const int step = int(gl_NumWorkGroups.x * gl_WorkGroupSize.x);
  for (int o = int(gl_GlobalInvocationID.x); o < {numel}; o += step) {{
{coords}    bool inside = true;
{places}    if (inside) {{
      y[shift[1] + o] = x[shift[0] + {source}];
    }} else {{
      y[shift[1] + o] = {fill};
    }}
  }}
}}
)",
                     fmt::arg("ext", storage_extensions(element_bytes)), fmt::arg("what", what),
                     fmt::arg("shape", shape_str(shape)), fmt::arg("raw", raw), fmt::arg("numel", shape_numel(shape)),
                     fmt::arg("coords", coordinates_glsl(shape, "o")), fmt::arg("places", places),
                     fmt::arg("source", source), fmt::arg("fill", fill));
}

// The fill value's bits as a GLSL literal of the raw element type.
std::string fill_bits(DType dtype, double value) {
  if (dtype == DType::f16) return fmt::format("uint16_t({:#x})", f32_to_f16_bits(static_cast<float>(value)));
  const auto f = static_cast<float>(value);
  uint32_t bits = 0;
  std::memcpy(&bits, &f, sizeof bits);
  return fmt::format("{:#x}u", bits);
}

void emit_placed(Lowering& L, const ir::NodePtr& node, const std::vector<AxisPlacement>& axes, double fill) {
  const int32_t x = L.value(node->input(0));
  const ir::Value out(node, 0);
  const int32_t y = L.produce(out);
  const DType dt = out.dtype();
  const size_t es = dtype_size(dt);
  const std::string what = fmt::format("{} {}", node->op_name(), ir::type_str(out.type()));
  ShaderDispatch d;
  d.pipeline = lowering_context().pipelines().pipeline(
      placed_glsl(out.shape(), axes, L.info(x).layout, es, fill_bits(dt, fill), node->op_name()), 2, what);
  d.bindings = {buffer_binding(L, x, false, static_cast<uint32_t>(es)),
                buffer_binding(L, y, true, static_cast<uint32_t>(es))};
  d.groups = {library_groups(out.type().numel()), 1, 1};
  L.emit(std::make_unique<ShaderStep>(std::vector<ShaderDispatch>{std::move(d)}, what), {x}, {y});
}

bool claim_placed(const ir::Node& node) {
  if (node.inputs().size() != 1 || node.num_outputs() != 1 || !library_float(node.input(0).dtype())) return false;
  // An empty source has nothing to bind: those results (all fill) stay on the CPU.
  if (node.input(0).type().numel() == 0 && node.output_types()[0].numel() > 0) return false;
  if (node.op_name() == "pad") {
    const std::string& mode = node.attrs().get_string("mode");
    if (mode != "constant" && mode != "reflect") return false;
  }
  return fits_int_indexing(node);
}

bool lower_pad(Lowering& L, const ir::NodePtr& node) {
  if (!claim_placed(*node)) return false;
  const std::vector<int64_t>& widths = node->attrs().get_ints("widths");
  const bool reflect = node->attrs().get_string("mode") == "reflect";
  const Shape& in = node->input(0).shape();
  std::vector<AxisPlacement> axes(in.size());
  for (size_t d = 0; d < in.size(); ++d) {
    const int64_t before = 2 * d < widths.size() ? widths[2 * d] : 0;
    const int64_t after = 2 * d + 1 < widths.size() ? widths[2 * d + 1] : 0;
    if (before == 0 && after == 0) continue;
    axes[d] = {reflect ? AxisPlacement::reflected : AxisPlacement::shifted, before, 1, in[d]};
  }
  emit_placed(L, node, axes, reflect ? 0.0 : node->attrs().get_float("value"));
  return true;
}

bool lower_slice_backward(Lowering& L, const ir::NodePtr& node) {
  if (!claim_placed(*node)) return false;
  const Shape& in = node->input(0).shape();
  const auto axis = static_cast<size_t>(normalize_axis(node->attrs().get_int("axis"), node->input(0).rank(),
                                                       "slice_backward"));
  std::vector<AxisPlacement> axes(in.size());
  axes[axis] = {AxisPlacement::strided, node->attrs().get_int("start"), node->attrs().get_int("step"), in[axis]};
  emit_placed(L, node, axes, 0.0);
  return true;
}

}  // namespace

void register_pad_lowerings(common::LoweringTable& table) {
  table["pad"] = {lower_pad, claim_placed, true};
  table["slice_backward"] = {lower_slice_backward, claim_placed, true};
}

}  // namespace tessera::backends::vulkan
