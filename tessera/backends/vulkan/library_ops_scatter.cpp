// Sums by integer index on the Vulkan backend: scatter_add and embedding_grad, without float atomics
// (which Vulkan lacks in general) and deterministic: every result element is written by one invocation,
// which adds its sources in index order, whatever the scheduling. Two formulations:
//  - by line: when the index differs from line to line (the gradient of cross entropy's pick), each
//    result element walks its own index line and adds the sources that name it;
//  - by target: when the index is one vector broadcast over the other axes (the convolution and
//    pooling decompositions' folds, index_select's gradient, embedding_grad), a workgroup per target
//    position scans the index once, keeping the positions that name it in shared memory in order, and
//    then sums those sources for every element of its slab. A row of an embedding table then costs
//    one scan of the indices, not one per element of the row.
// Sums are in f32 (f16 values too). An index out of range adds nothing and is reported by the status word.
#include <fmt/format.h>

#include "tessera/backends/vulkan/library_ops.h"
#include "tessera/backends/vulkan/shader_step.h"
#include "tessera/backends/vulkan/shader_text.h"
#include "tessera/backends/vulkan/steps.h"

namespace tessera::backends::vulkan {

namespace {

using common::Layout;
using common::Lowering;

// Positions a target keeps before it sums them: four scans' worth of hits between flushes.
constexpr int kTargetHits = 1024;

// A scatter: result[.. t ..] = x[.. t ..] (or 0) + sum of src[.. j ..] over the index positions j of
// the element's line that hold t. Shapes and strides in elements; the result is packed.
struct Scatter {
  DType dtype = DType::f32, index_dtype = DType::i64;
  Shape shape;   // the result's
  int64_t axis = 0;
  bool has_x = true;
  Layout x, index, src;  // index and src of the index's shape (src may be larger: only this part counts)
};

// The result's coordinates that lie inside the index's extent off the axis (those get sources).
std::string inside_glsl(const Scatter& s) {
  std::string e = "true";
  for (size_t d = 0; d < s.shape.size(); ++d) {
    if (static_cast<int64_t>(d) != s.axis && s.index.shape[d] < s.shape[d]) {
      e += fmt::format(" && c{} < {}", d, s.index.shape[d]);
    }
  }
  return e;
}

std::string buffers_glsl(const Scatter& s, const FloatStorage& st, bool result_read) {
  std::string b;
  int binding = 0;
  if (s.has_x) b += fmt::format("layout(std430, binding = {}) readonly buffer TsrX {{ {} x[]; }};\n", binding++, st.type);
  b += fmt::format("layout(std430, binding = {}) readonly buffer TsrIndex {{ int idx[]; }};\n", binding++);
  b += fmt::format("layout(std430, binding = {}) readonly buffer TsrSrc {{ {} src[]; }};\n", binding++, st.type);
  b += fmt::format("layout(std430, binding = {}) {}buffer TsrOut {{ {} y[]; }};\n", binding++,
                   result_read ? "" : "writeonly ", st.type);
  b += status_glsl(binding++);
  b += fmt::format("layout(push_constant) uniform TsrShifts {{ int shift[{}]; }};\n", binding);
  b += fmt::format("#define X_SHIFT shift[0]\n#define INDEX_SHIFT shift[{}]\n#define SRC_SHIFT shift[{}]\n"
                   "#define OUT_SHIFT shift[{}]\n",
                   s.has_x ? 1 : 0, s.has_x ? 2 : 1, s.has_x ? 3 : 2);
  return b;
}

std::string by_line_glsl(const Scatter& s) {
  const FloatStorage st = float_storage(s.dtype);
  const auto a = static_cast<size_t>(s.axis);
  const std::string initial = s.has_x ? st.load(fmt::format("x[X_SHIFT + {}]", offset_glsl(s.x.offset, s.shape, s.x.strides)))
                                      : "0.0";
  return fmt::format(R"(#version 450
{ext}// scatter_add by line: result {shape}, {count} index positions a line along axis {axis}.
layout(local_size_x = 256) in;
{buffers}{reader}void main() {{
  const int step = int(gl_NumWorkGroups.x * gl_WorkGroupSize.x);
  for (int o = int(gl_GlobalInvocationID.x); o < {numel}; o += step) {{
{coords}    const int t = c{axis};
    float acc = {initial};
    if ({inside}) {{
      const int io = {index_offset}, so = {src_offset};
      for (int j = 0; j < {count}; ++j) {{
        const int i = read_index(io + j * {index_stride});
        if (i < 0 || i >= {size}) {{
          report(1u);
          continue;
        }}
        if (i == t) acc += {load_src};
      }}
    }}
    y[OUT_SHIFT + o] = {store};
  }}
}}
)",
                     fmt::arg("ext", storage_extensions(dtype_size(s.dtype))), fmt::arg("shape", shape_str(s.shape)),
                     fmt::arg("count", s.index.shape[a]), fmt::arg("axis", s.axis),
                     fmt::arg("buffers", buffers_glsl(s, st, false)),
                     fmt::arg("reader", index_reader_glsl(s.index_dtype, "read_index", "idx", "INDEX_SHIFT")),
                     fmt::arg("numel", shape_numel(s.shape)), fmt::arg("coords", coordinates_glsl(s.shape, "o")),
                     fmt::arg("initial", initial), fmt::arg("inside", inside_glsl(s)),
                     fmt::arg("index_offset", offset_glsl(s.index.offset, s.shape, s.index.strides, s.axis)),
                     fmt::arg("src_offset", offset_glsl(s.src.offset, s.shape, s.src.strides, s.axis)),
                     fmt::arg("index_stride", s.index.strides[a]), fmt::arg("size", s.shape[a]),
                     fmt::arg("load_src", st.load(fmt::format("src[SRC_SHIFT + so + j * {}]", s.src.strides[a]))),
                     fmt::arg("store", st.store("acc")));
}

std::string by_target_glsl(const Scatter& s) {
  const FloatStorage st = float_storage(s.dtype);
  const auto a = static_cast<size_t>(s.axis);
  Shape slab = s.shape;  // the result without its axis: what one target's workgroup writes
  slab[a] = 1;
  const Strides packed = contiguous_strides(s.shape);
  const std::string out_offset = offset_glsl(0, slab, packed, s.axis) + fmt::format(" + t * {}", packed[a]);
  const std::string initial =
      s.has_x ? st.load(fmt::format("x[X_SHIFT + {} + t * {}]", offset_glsl(s.x.offset, slab, s.x.strides, s.axis),
                                    s.x.strides[a]))
              : "0.0";
  return fmt::format(R"(#version 450
{ext}// scatter_add by target: result {shape}, one index vector of {count} along axis {axis}.
layout(local_size_x = 256) in;
{buffers}{reader}shared int hits[{list}];
shared int scan[256];
// Adds the first `count` hits to every element of target t's slab (first: starting from x, else from
// what an earlier flush stored).
void flush(int t, int count, bool first) {{
  for (int e = int(gl_LocalInvocationID.x); e < {slab_numel}; e += 256) {{
{coords}    const int o = {out_offset};
    float acc = first ? {initial} : {load_out};
    if ({inside}) {{
      const int so = {src_offset};
      for (int k = 0; k < count; ++k) acc += {load_src};
    }}
    y[OUT_SHIFT + o] = {store};
  }}
}}
void main() {{
  const int tid = int(gl_LocalInvocationID.x);
  for (int t = int(gl_WorkGroupID.x); t < {size}; t += int(gl_NumWorkGroups.x)) {{
    int count = 0;
    bool first = true;
    for (int base = 0; base < {count}; base += 256) {{
      const int j = base + tid;
      int hit = 0;
      if (j < {count}) {{
        const int i = read_index({index_offset} + j * {index_stride});
        if (i < 0 || i >= {size}) report(1u);
        hit = i == t ? 1 : 0;
      }}
      // An inclusive prefix sum of the hits places each one after those of lower positions.
      scan[tid] = hit;
      for (int d = 1; d < 256; d <<= 1) {{
        barrier();
        const int before = tid >= d ? scan[tid - d] : 0;
        barrier();
        scan[tid] += before;
      }}
      barrier();
      if (hit == 1) hits[count + scan[tid] - 1] = j;
      count += scan[255];
      barrier();
      if (count > {list} - 256 || base + 256 >= {count}) {{
        flush(t, count, first);
        first = false;
        count = 0;
        barrier();
      }}
    }}
    if (first) flush(t, 0, true);
  }}
}}
)",
                     fmt::arg("ext", storage_extensions(dtype_size(s.dtype))), fmt::arg("shape", shape_str(s.shape)),
                     fmt::arg("count", s.index.shape[a]), fmt::arg("axis", s.axis),
                     fmt::arg("buffers", buffers_glsl(s, st, true)),
                     fmt::arg("reader", index_reader_glsl(s.index_dtype, "read_index", "idx", "INDEX_SHIFT")),
                     fmt::arg("list", kTargetHits), fmt::arg("slab_numel", shape_numel(slab)),
                     fmt::arg("coords", coordinates_glsl(slab, "e")), fmt::arg("out_offset", out_offset),
                     fmt::arg("initial", initial), fmt::arg("load_out", st.load("y[OUT_SHIFT + o]")),
                     fmt::arg("inside", inside_glsl(s)),
                     fmt::arg("src_offset", offset_glsl(s.src.offset, slab, s.src.strides, s.axis)),
                     fmt::arg("load_src", st.load(fmt::format("src[SRC_SHIFT + so + hits[k] * {}]", s.src.strides[a]))),
                     fmt::arg("store", st.store("acc")), fmt::arg("size", s.shape[a]),
                     fmt::arg("index_offset", s.index.offset), fmt::arg("index_stride", s.index.strides[a]));
}

// Whether the index is one vector along the axis, the same for every line.
bool one_index_vector(const Scatter& s) {
  for (size_t d = 0; d < s.shape.size(); ++d) {
    if (static_cast<int64_t>(d) != s.axis && s.index.shape[d] != 1 && s.index.strides[d] != 0) return false;
  }
  return true;
}

void emit_scatter(Lowering& L, const ir::Node& node, const Scatter& s, int32_t x, int32_t idx, int32_t src, int32_t y) {
  const bool by_target = one_index_vector(s);
  const auto es = static_cast<uint32_t>(dtype_size(s.dtype));
  ShaderDispatch d;
  std::vector<int32_t> reads;
  if (s.has_x) {
    d.bindings.push_back(buffer_binding(L, x, false, es));
    reads.push_back(x);
  }
  d.bindings.push_back(buffer_binding(L, idx, false, 4));
  d.bindings.push_back(buffer_binding(L, src, false, es));
  d.bindings.push_back(buffer_binding(L, y, true, es));
  reads.push_back(idx);
  reads.push_back(src);
  const int bindings = static_cast<int>(d.bindings.size()) + 1;
  const std::string what = fmt::format("{} by {} {}", node.op_name(), by_target ? "target" : "line", shape_str(s.shape));
  d.pipeline =
      lowering_context().pipelines().pipeline(by_target ? by_target_glsl(s) : by_line_glsl(s), bindings, what);
  const int64_t numel = shape_numel(s.shape);
  d.groups = {numel == 0 ? 0 : by_target ? library_groups(s.shape[static_cast<size_t>(s.axis)], 1) : library_groups(numel),
              1, 1};
  d.reports_status = true;
  L.emit(std::make_unique<ShaderStep>(std::vector<ShaderDispatch>{std::move(d)}, what), reads, {y});
}

// Sums with no sources (an empty index) have nothing to bind for them; they stay on the CPU.
bool has_sources(const ir::Node& node, size_t index, size_t source) {
  return node.output_types()[0].numel() == 0 ||
         (node.input(index).type().numel() > 0 && node.input(source).type().numel() > 0);
}

bool claim_scatter_add(const ir::Node& node) {
  return node.inputs().size() == 3 && node.num_outputs() == 1 && library_float(node.input(0).dtype()) &&
         node.input(2).dtype() == node.input(0).dtype() && library_index(node.input(1).dtype()) &&
         node.input(0).rank() > 0 && fits_int_indexing(node) && has_sources(node, 1, 2);
}

bool lower_scatter_add(Lowering& L, const ir::NodePtr& node) {
  if (!claim_scatter_add(*node)) return false;
  const int32_t x = L.value(node->input(0)), idx = L.value(node->input(1)), src = L.value(node->input(2));
  const ir::Value out(node, 0);
  const int32_t y = L.produce(out);
  Scatter s;
  s.dtype = out.dtype();
  s.index_dtype = node->input(1).dtype();
  s.shape = out.shape();
  s.axis = normalize_axis(node->attrs().get_int("axis"), node->input(0).rank(), "scatter_add");
  s.x = L.info(x).layout;
  s.index = L.info(idx).layout;
  s.src = L.info(src).layout;
  emit_scatter(L, *node, s, x, idx, src, y);
  return true;
}

bool claim_embedding_grad(const ir::Node& node) {
  return node.inputs().size() == 2 && node.num_outputs() == 1 && library_float(node.input(0).dtype()) &&
         library_index(node.input(1).dtype()) && fits_int_indexing(node) && has_sources(node, 1, 0);
}

// embedding_grad(g [*indices, d], indices) -> [V, d]: a scatter by target of g's rows, seen as [n, d].
bool lower_embedding_grad(Lowering& L, const ir::NodePtr& node) {
  if (!claim_embedding_grad(*node)) return false;
  const int32_t g = L.packed(L.value(node->input(0))), idx = L.packed(L.value(node->input(1)));
  const ir::Value out(node, 0);
  const int32_t y = L.produce(out);
  const int64_t n = node->input(1).type().numel(), dim = out.shape()[1];
  Scatter s;
  s.dtype = out.dtype();
  s.index_dtype = node->input(1).dtype();
  s.shape = out.shape();
  s.axis = 0;
  s.has_x = false;
  s.index = {{n, dim}, {1, 0}, L.info(idx).layout.offset};
  s.src = {{n, dim}, {dim, 1}, L.info(g).layout.offset};
  emit_scatter(L, *node, s, -1, idx, g, y);
  return true;
}

}  // namespace

void register_scatter_lowerings(common::LoweringTable& table) {
  table["scatter_add"] = {lower_scatter_add, claim_scatter_add, true};
  table["embedding_grad"] = {lower_embedding_grad, claim_embedding_grad, true};
}

}  // namespace tessera::backends::vulkan
