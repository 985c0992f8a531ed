// Indexing by integer tensors: gather (GatherElements), index_select (Gather), scatter_add
// (ScatterElements with reduction "add", opset 16) and one_hot (a comparison with a range). Indices
// are cast to int64; like Tessera, ONNX Runtime refuses indices out of range.
#include "tessera/io/onnx/export_lower.h"

namespace tessera::io::onnx {

namespace {

int64_t axis_attr(const LowerContext& c) {
  return normalize_axis(c.attrs().get_int("axis"), c.in[0].rank(), c.node.op_name().c_str());
}

void set_axis(pb::NodeProto& n, int64_t axis) {
  attr_int(n, "axis", axis);
}

}  // namespace

void add_index_exports(LoweringTable& t) {
  t.add("gather", [](LowerContext& c) -> std::vector<OVal> {
    const int64_t axis = axis_attr(c);
    return {c.op("GatherElements", {c.in[0], c.b.cast(c.in[1], DType::i64)},
                 [axis](pb::NodeProto& n) { set_axis(n, axis); })};
  });
  t.add("index_select", [](LowerContext& c) -> std::vector<OVal> {
    const int64_t axis = axis_attr(c);
    return {c.op("Gather", {c.in[0], c.b.cast(c.in[1], DType::i64)}, [axis](pb::NodeProto& n) { set_axis(n, axis); })};
  });
  t.add("scatter_add", [](LowerContext& c) -> std::vector<OVal> {
    GraphBuilder& b = c.b;
    const int64_t axis = axis_attr(c);
    const OVal& index = c.in[1];
    OVal src = c.in[2];
    if (src.shape != index.shape) {
      // src may be larger than the index: only its leading part (the index's shape) is added.
      const std::vector<int64_t> zeros(index.shape.size(), 0);
      std::vector<int64_t> axes;
      for (int64_t d = 0; d < index.rank(); ++d) axes.push_back(d);
      src = b.op("Slice", {src, b.i64s(zeros), b.i64s(index.shape), b.i64s(axes)}, src.dtype, index.shape);
    }
    const DType acc = widened(c.in[0].dtype);  // f16/bf16 accumulate in f32
    const OVal sum = b.op("ScatterElements", {b.cast(c.in[0], acc), b.cast(index, DType::i64), b.cast(src, acc)}, acc,
                          c.in[0].shape, [axis](pb::NodeProto& n) {
                            set_axis(n, axis);
                            attr_string(n, "reduction", "add");
                          });
    return {b.cast(sum, c.out_dtype())};
  });
  t.add("one_hot", [](LowerContext& c) -> std::vector<OVal> {
    GraphBuilder& b = c.b;
    const int64_t classes = c.attrs().get_int("num_classes");
    std::vector<int64_t> range(static_cast<size_t>(classes));
    for (int64_t i = 0; i < classes; ++i) range[static_cast<size_t>(i)] = i;
    Shape col = c.in[0].shape;
    col.push_back(1);
    const OVal idx = b.reshape(b.cast(c.in[0], DType::i64), col);
    const OVal hit = b.op("Equal", {idx, b.i64s(range)}, DType::boolean, c.out_shape());
    return {b.cast(hit, c.out_dtype())};
  });
}

}  // namespace tessera::io::onnx
