// Reads by integer index on the Vulkan backend: gather, index_select, embedding (an index_select of
// table rows by indices of any shape) and one_hot. As on CUDA, each node gets its own shader with its
// shapes and strides written in, so operands are read where they lie (a broadcast index, a transposed
// table) and the divisions are by constants. An index out of range is never followed: the element
// becomes 0 and the run's status word reports it when the run ends.
#include <cstring>

#include <fmt/format.h>

#include "tessera/backends/vulkan/library_ops.h"
#include "tessera/backends/vulkan/shader_step.h"
#include "tessera/backends/vulkan/shader_text.h"
#include "tessera/backends/vulkan/steps.h"

namespace tessera::backends::vulkan {

namespace {

using common::Layout;
using common::Lowering;

// out[o] = x[x_offset(o) + i * axis_stride] with i = index[index_offset(o)], for each element o of a
// packed result of `shape`; the offsets are GLSL expressions of the coordinates c0, c1, ...
struct PickShader {
  Shape shape;
  size_t element_bytes = 4;
  DType index_dtype = DType::i64;
  std::string index_offset, x_offset;
  int64_t axis_stride = 0, axis_size = 0;
};

std::string pick_glsl(const PickShader& p) {
  const std::string raw = raw_element_type(p.element_bytes);
  return fmt::format(R"(#version 450
{ext}// Picks along an axis of {size} by index; results of shape {shape}.
layout(local_size_x = 256) in;
layout(std430, binding = 0) readonly buffer TsrX {{ {raw} x[]; }};
layout(std430, binding = 1) readonly buffer TsrIndex {{ int idx[]; }};
layout(std430, binding = 2) writeonly buffer TsrOut {{ {raw} y[]; }};
{status}layout(push_constant) uniform TsrShifts {{ int shift[4]; }};
{reader}void main() {{
  const int step = int(gl_NumWorkGroups.x * gl_WorkGroupSize.x);
  for (int o = int(gl_GlobalInvocationID.x); o < {numel}; o += step) {{
{coords}    const int i = read_index({index_offset});
    if (i < 0 || i >= {size}) {{
      report(1u);
      y[shift[2] + o] = {raw}(0);
      continue;
    }}
    y[shift[2] + o] = x[shift[0] + {x_offset} + i * {axis_stride}];
  }}
}}
)",
                     fmt::arg("ext", storage_extensions(p.element_bytes)), fmt::arg("size", p.axis_size),
                     fmt::arg("shape", shape_str(p.shape)), fmt::arg("raw", raw), fmt::arg("status", status_glsl(3)),
                     fmt::arg("reader", index_reader_glsl(p.index_dtype, "read_index", "idx", "shift[1]")),
                     fmt::arg("numel", shape_numel(p.shape)), fmt::arg("coords", coordinates_glsl(p.shape, "o")),
                     fmt::arg("index_offset", p.index_offset), fmt::arg("x_offset", p.x_offset),
                     fmt::arg("axis_stride", p.axis_stride));
}

void emit_pick(Lowering& L, const ir::Node& node, const PickShader& p, int32_t x, int32_t idx, int32_t y) {
  const auto es = static_cast<uint32_t>(p.element_bytes);
  ShaderDispatch d;
  d.pipeline = lowering_context().pipelines().pipeline(pick_glsl(p), 4, fmt::format("{} {}", node.op_name(),
                                                                                     shape_str(p.shape)));
  d.bindings = {buffer_binding(L, x, false, es), buffer_binding(L, idx, false, 4), buffer_binding(L, y, true, es)};
  d.groups = {library_groups(shape_numel(p.shape)), 1, 1};
  d.reports_status = true;
  L.emit(std::make_unique<ShaderStep>(std::vector<ShaderDispatch>{std::move(d)},
                                      fmt::format("{} {}", node.op_name(), ir::type_str(node.output_types()[0]))),
         {x, idx}, {y});
}

bool claim_pick(const ir::Node& node) {
  if (node.inputs().size() != 2 || node.num_outputs() != 1 || !fits_int_indexing(node)) return false;
  const ir::Value& x = node.input(0);
  // The shaders move raw elements: any dtype the device stores (supports() checks that), e.g. the u8
  // rows of a quantized embedding table, except f64, which the backend keeps on the CPU throughout.
  if (x.dtype() == DType::f64 || !library_index(node.input(1).dtype()) || x.rank() == 0) return false;
  // Picks from an empty operand (every index out of range) have nothing to bind: the CPU reports them.
  if (x.type().numel() == 0 && node.output_types()[0].numel() > 0) return false;
  return node.op_name() != "embedding" || x.rank() == 2;
}

// gather and index_select pick along `axis` of x; the result's coordinate set serves x off the axis.
// gather's index has the result's shape (read at the same coordinates); index_select's is a vector
// read at the axis coordinate.
bool lower_pick_along_axis(Lowering& L, const ir::NodePtr& node) {
  if (!claim_pick(*node)) return false;
  const bool gather = node->op_name() == "gather";
  const int32_t x = L.value(node->input(0)), idx = L.value(node->input(1));
  const ir::Value out(node, 0);
  const int32_t y = L.produce(out);
  const Layout& lx = L.info(x).layout;
  const Layout& li = L.info(idx).layout;
  const int64_t axis = normalize_axis(node->attrs().get_int("axis"), node->input(0).rank(), node->op_name().c_str());
  const auto a = static_cast<size_t>(axis);
  PickShader p;
  p.shape = out.shape();
  p.element_bytes = dtype_size(out.dtype());
  p.index_dtype = node->input(1).dtype();
  p.index_offset = gather ? offset_glsl(li.offset, p.shape, li.strides)
                          : fmt::format("{} + c{} * {}", li.offset, axis, li.strides[0]);
  p.x_offset = offset_glsl(lx.offset, p.shape, lx.strides, axis);
  p.axis_stride = lx.strides[a];
  p.axis_size = lx.shape[a];
  emit_pick(L, *node, p, x, idx, y);
  return true;
}

// embedding(table [V, d], indices of any shape): the result, [*indices, d], seen as [n, d].
bool lower_embedding(Lowering& L, const ir::NodePtr& node) {
  if (!claim_pick(*node)) return false;
  const int32_t table = L.value(node->input(0)), idx = L.packed(L.value(node->input(1)));
  const ir::Value out(node, 0);
  const int32_t y = L.produce(out);
  const Layout& lt = L.info(table).layout;
  PickShader p;
  p.shape = {node->input(1).type().numel(), lt.shape[1]};
  p.element_bytes = dtype_size(out.dtype());
  p.index_dtype = node->input(1).dtype();
  p.index_offset = fmt::format("{} + c0", L.info(idx).layout.offset);
  p.x_offset = offset_glsl(lt.offset, p.shape, lt.strides, 0);
  p.axis_stride = lt.strides[0];
  p.axis_size = lt.shape[0];
  emit_pick(L, *node, p, table, idx, y);
  return true;
}


// one_hot: element (o, c) of the [n, classes] result is 1 where index o is c, in any dtype (only bits
// are written). An index out of range gives a row of zeros and is reported.
std::string one_hot_glsl(DType out, DType index, int64_t n, int64_t classes, int64_t index_offset) {
  const size_t es = dtype_size(out);
  const std::string raw = raw_element_type(es);
  const std::string one = one_bits_glsl(out);
  return fmt::format(R"(#version 450
{ext}// one_hot of {n} indices into {classes} classes.
layout(local_size_x = 256) in;
layout(std430, binding = 0) readonly buffer TsrIndex {{ int idx[]; }};
layout(std430, binding = 1) writeonly buffer TsrOut {{ {raw} y[]; }};
{status}layout(push_constant) uniform TsrShifts {{ int shift[3]; }};
{reader}void main() {{
  const int step = int(gl_NumWorkGroups.x * gl_WorkGroupSize.x);
  for (int e = int(gl_GlobalInvocationID.x); e < {total}; e += step) {{
    const int o = e / {classes}, c = e % {classes};
    const int i = read_index({offset} + o);
    if ((i < 0 || i >= {classes}) && c == 0) report(1u);
    y[shift[1] + e] = i == c ? {one} : {raw}(0);
  }}
}}
)",
                     fmt::arg("ext", storage_extensions(es)), fmt::arg("n", n), fmt::arg("classes", classes),
                     fmt::arg("raw", raw), fmt::arg("status", status_glsl(2)),
                     fmt::arg("reader", index_reader_glsl(index, "read_index", "idx", "shift[0]")),
                     fmt::arg("total", n * classes), fmt::arg("offset", index_offset), fmt::arg("one", one));
}

bool claim_one_hot(const ir::Node& node) {
  // Any dtype the device stores (supports() checks that) except f64, whose 1 would need no arithmetic
  // but which the backend keeps on the CPU throughout.
  return node.inputs().size() == 1 && node.num_outputs() == 1 && library_index(node.input(0).dtype()) &&
         node.output_types()[0].dtype != DType::f64 && fits_int_indexing(node);
}

bool lower_one_hot(Lowering& L, const ir::NodePtr& node) {
  if (!claim_one_hot(*node)) return false;
  const int32_t idx = L.packed(L.value(node->input(0)));
  const ir::Value out(node, 0);
  const int32_t y = L.produce(out);
  const int64_t n = node->input(0).type().numel(), classes = out.shape().back();
  const auto es = static_cast<uint32_t>(dtype_size(out.dtype()));
  ShaderDispatch d;
  d.pipeline = lowering_context().pipelines().pipeline(
      one_hot_glsl(out.dtype(), node->input(0).dtype(), n, classes, L.info(idx).layout.offset), 3,
      fmt::format("one_hot {}", ir::type_str(out.type())));
  d.bindings = {buffer_binding(L, idx, false, 4), buffer_binding(L, y, true, es)};
  d.groups = {library_groups(n * classes), 1, 1};
  d.reports_status = true;
  L.emit(std::make_unique<ShaderStep>(std::vector<ShaderDispatch>{std::move(d)},
                                      fmt::format("one_hot {}", ir::type_str(out.type()))),
         {idx}, {y});
  return true;
}

}  // namespace

void register_index_lowerings(common::LoweringTable& table) {
  table["gather"] = {lower_pick_along_axis, claim_pick, true};
  table["index_select"] = {lower_pick_along_axis, claim_pick, true};
  table["embedding"] = {lower_embedding, claim_pick, true};
  table["one_hot"] = {lower_one_hot, claim_one_hot, true};
}

}  // namespace tessera::backends::vulkan
