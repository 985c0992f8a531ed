// index_copy on the Vulkan backend: x copied to the result unless the two share memory in this run (a
// KV cache updated in place, the decode graph's aliased outputs), then the m slices of src written at
// their indices, so a decode step writes its new cache rows and nothing else. The lowering lets the
// result take over x's memory; both shaders move raw elements, so any stored dtype but f64 goes. An
// index out of range is skipped and a repeated one written in order; either sets the status word.
#include <fmt/format.h>

#include "tessera/backends/vulkan/library_ops.h"
#include "tessera/backends/vulkan/shader_step.h"
#include "tessera/backends/vulkan/shader_text.h"
#include "tessera/backends/vulkan/steps.h"
#include "tessera/codegen/dialect.h"

namespace tessera::backends::vulkan {

namespace {

using common::Lowering;

std::string copy_glsl(size_t element_bytes, int64_t numel) {
  return fmt::format(R"(#version 450
{ext}// index_copy: x into the result ({numel} elements), when they do not share memory.
layout(local_size_x = 256) in;
layout(std430, binding = 0) readonly buffer TsrX {{ {raw} x[]; }};
layout(std430, binding = 1) writeonly buffer TsrOut {{ {raw} y[]; }};
layout(push_constant) uniform TsrShifts {{ int shift[2]; }};
void main() {{
  const int step = int(gl_NumWorkGroups.x * gl_WorkGroupSize.x);
  for (int i = int(gl_GlobalInvocationID.x); i < {numel}; i += step) y[shift[1] + i] = x[shift[0] + i];
}}
)",
                     fmt::arg("ext", storage_extensions(element_bytes)), fmt::arg("raw", raw_element_type(element_bytes)),
                     fmt::arg("numel", numel));
}

// out[o, idx[i], e] = src[o, i, e] over outer x m x slice elements (size rows along the axis), src read
// where it lies (`src` its layout: a slice of a stacked projection needs no packed copy). Rows of
// another type than the result's (f32 rows into an f16 or bf16 cache, vulkan_index_copy_converts) are
// rounded to nearest even by the GLSL dialect's helper, as the cast they replace (common/convert_on_write.h).
std::string slices_glsl(DType src_type, DType dst_type, DType index, int64_t outer, int64_t size, int64_t m,
                        int64_t slice, const common::Layout& src) {
  const size_t element_bytes = dtype_size(dst_type);
  std::string ext = storage_extensions(element_bytes), src_raw = raw_element_type(element_bytes), value = "v";
  if (src_type != dst_type) {
    ext.clear();
    const lower::ScalarType half = lower::scalar_type_of(dst_type);
    for (const std::string& r : codegen::glsl_dialect().type_requirements[static_cast<size_t>(half)]) ext += r;
    src_raw = raw_element_type(dtype_size(src_type));
    value = fmt::format("tsr_f32_to_{}(uintBitsToFloat(v))", dtype_name(dst_type));
  }
  return fmt::format(R"(#version 450
{ext}// index_copy: {m} slices of {slice} elements into {outer} x {size} rows.
layout(local_size_x = 256) in;
layout(std430, binding = 0) readonly buffer TsrSrc {{ {src_raw} src[]; }};
layout(std430, binding = 1) readonly buffer TsrIndex {{ int idx[]; }};
layout(std430, binding = 2) buffer TsrOut {{ {raw} y[]; }};
{status}layout(push_constant) uniform TsrShifts {{ int shift[4]; }};
{reader}void main() {{
  const int step = int(gl_NumWorkGroups.x * gl_WorkGroupSize.x);
  for (int t = int(gl_GlobalInvocationID.x); t < {total}; t += step) {{
    const int e = t % {slice}, rest = t / {slice}, i = rest % {m}, o = rest / {m};
{coords}
    const int r = read_index(i);
    if (r < 0 || r >= {size}) {{
      if (e == 0) report({range}u);
      continue;
    }}
    if (e == 0 && o == 0) {{
      for (int j = 0; j < i; ++j) {{
        if (read_index(j) == r) report({repeated}u);
      }}
    }}
    const {src_raw} v = src[shift[0] + {src_offset}];
    y[shift[2] + (o * {size} + r) * {slice} + e] = {value};
  }}
}}
)",
                     fmt::arg("ext", ext), fmt::arg("raw", raw_element_type(element_bytes)), fmt::arg("src_raw", src_raw),
                     fmt::arg("value", value), fmt::arg("status", status_glsl(3)),
                     fmt::arg("reader", index_reader_glsl(index, "read_index", "idx", "shift[1]")),
                     fmt::arg("total", outer * m * slice), fmt::arg("outer", outer), fmt::arg("size", size),
                     fmt::arg("m", m), fmt::arg("slice", slice), fmt::arg("coords", coordinates_glsl(src.shape, "t")),
                     fmt::arg("src_offset", offset_glsl(src.offset, src.shape, src.strides)),
                     fmt::arg("range", static_cast<uint32_t>(kStatusIndexOutOfRange)),
                     fmt::arg("repeated", static_cast<uint32_t>(kStatusRepeatedIndex)));
}

}  // namespace

ShaderDispatch cache_copy_dispatch(Lowering& L, int32_t from, int32_t to, DType dtype, int64_t numel) {
  const size_t es = dtype_size(dtype);
  const auto eu = static_cast<uint32_t>(es);
  const uint64_t bytes = static_cast<uint64_t>(numel) * es;
  ShaderDispatch copy;
  copy.pipeline = lowering_context().pipelines().pipeline(copy_glsl(es, numel), 2,
                                                          fmt::format("index_copy_base_{}", dtype_name(dtype)));
  copy.bindings = {{L.operand(from), bytes, false, eu}, {L.operand(to), bytes, true, eu}};
  copy.groups = {library_groups(numel), 1, 1};
  copy.skip_when_in_place = true;
  return copy;
}

namespace {

bool claim_index_copy(const ir::Node& node) {
  if (node.inputs().size() != 3 || node.num_outputs() != 1 || !fits_int_indexing(node)) return false;
  const DType dt = node.input(0).dtype(), src = node.input(2).dtype();
  const bool moves = src == dt || (node.attrs().get_bool_or("convert", false) && vulkan_index_copy_converts(src, dt));
  return dt != DType::f64 && moves && node.input(0).rank() >= 1 && library_index(node.input(1).dtype()) &&
         node.input(1).rank() == 1;
}

bool lower_index_copy(Lowering& L, const ir::NodePtr& node) {
  if (!claim_index_copy(*node)) return false;
  const ir::Value& xv = node->input(0);
  const int32_t x = L.packed(L.value(xv)), idx = L.packed(L.value(node->input(1)));
  const int32_t src = L.value(node->input(2));
  const ir::Value out(node, 0);
  const int32_t y = L.produce(out);
  L.allow_in_place(y, x, {x, idx, src});
  const auto axis = static_cast<size_t>(normalize_axis(node->attrs().get_int("axis"), xv.rank(), "index_copy"));
  int64_t outer = 1, slice = 1;
  for (size_t d = 0; d < axis; ++d) outer *= xv.shape()[d];
  for (size_t d = axis + 1; d < xv.shape().size(); ++d) slice *= xv.shape()[d];
  const int64_t size = xv.shape()[axis], m = node->input(1).shape()[0];
  const size_t es = dtype_size(xv.dtype());
  const auto eu = static_cast<uint32_t>(es);
  const DType src_type = node->input(2).dtype();
  const auto src_unit = static_cast<uint32_t>(dtype_size(src_type));
  const uint64_t bytes = static_cast<uint64_t>(xv.type().numel()) * es;
  Context& ctx = lowering_context();
  std::vector<ShaderDispatch> dispatches = {cache_copy_dispatch(L, x, y, xv.dtype(), xv.type().numel())};
  if (outer * m * slice > 0) {
    ShaderDispatch d;
    d.pipeline = ctx.pipelines().pipeline(slices_glsl(src_type, xv.dtype(), node->input(1).dtype(), outer, size, m,
                                                      slice, L.info(src).layout),
                                          4,
                                          src_type == xv.dtype()
                                              ? fmt::format("index_copy_{}", dtype_name(xv.dtype()))
                                              : fmt::format("index_copy_{}_{}", dtype_name(src_type),
                                                            dtype_name(xv.dtype())));
    // The result binding is read-write: the rows not written keep x's values (copied, or already there).
    d.bindings = {buffer_binding(L, src, false, src_unit),
                  {L.operand(idx), static_cast<uint64_t>(m) * index_words(node->input(1).dtype()) * 4, false, 4},
                  {L.operand(y), bytes, true, eu}};
    d.groups = {library_groups(outer * m * slice), 1, 1};
    d.reports_status = true;
    dispatches.push_back(std::move(d));
  }
  L.emit(std::make_unique<ShaderStep>(std::move(dispatches),
                                      fmt::format("index_copy {} rows into {}", m, ir::type_str(xv.type()))),
         {x, idx, src}, {y});
  return true;
}

}  // namespace

bool vulkan_index_copy_converts(DType from, DType to) {
  return from == DType::f32 && (to == DType::f16 || to == DType::bf16);
}

void register_index_copy_lowerings(common::LoweringTable& table) {
  table["index_copy"] = {lower_index_copy, claim_index_copy, true};
}

}  // namespace tessera::backends::vulkan
