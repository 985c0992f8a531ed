// Indexing by integer tensors. gather and scatter_add (torch semantics along one axis) become
// stablehlo.gather / stablehlo.scatter over full index tuples: position p of the index reads or
// writes x at p with p[axis] replaced by index[p]. index_select picks whole slices; one_hot compares
// against an iota. Unlike Tessera's reference, which raises an error for an out-of-range index, XLA
// clamps gather indices and skips scatter updates out of range.
#include "tessera/io/stablehlo/lower.h"

namespace tessera::io::stablehlo {

namespace {

int64_t axis_attr(const LowerContext& c) {
  return normalize_axis(c.attrs().get_int("axis"), c.in[0].rank(), c.node.op_name().c_str());
}

// [*index.shape, rank] tuples: the iota of each axis, with the index itself along `axis`.
Val index_tuples(Emitter& e, const Val& index, int64_t axis) {
  const int64_t r = index.rank();
  Shape one = index.shape;
  one.push_back(1);
  const Val idx = e.reshape(e.convert(index, "i64"), one);
  std::vector<Val> parts;
  for (int64_t d = 0; d < r; ++d) parts.push_back(d == axis ? idx : e.iota("i64", one, d));
  return e.concatenate(parts, r);
}

}  // namespace

void add_index_lowerings(LoweringTable& t) {
  t.add("gather", [](LowerContext& c) -> std::vector<Val> {
    return {c.e.gather_elements(c.in[0], index_tuples(c.e, c.in[1], axis_attr(c)))};
  });
  t.add("index_select", [](LowerContext& c) -> std::vector<Val> {
    return {c.e.take_along(c.in[0], c.e.convert(c.in[1], "i64"), axis_attr(c))};
  });
  t.add("scatter_add", [](LowerContext& c) -> std::vector<Val> {
    Emitter& e = c.e;
    const Val& index = c.in[1];
    // src may be larger than the index: only its leading part (the index's shape) is added.
    std::vector<int64_t> start(static_cast<size_t>(index.rank()), 0);
    const Val src = e.slice(c.in[2], start, index.shape);
    const std::string acc = widened(c.in[0].elem);  // f16/bf16 accumulate in f32
    const Val sum =
        e.scatter_add_elements(e.convert(c.in[0], acc), index_tuples(e, index, axis_attr(c)), e.convert(src, acc));
    return {e.convert(sum, c.out_elem())};
  });
  t.add("one_hot", [](LowerContext& c) -> std::vector<Val> {
    Emitter& e = c.e;
    const Shape& shape = c.out_shape();
    const int64_t r = c.in[0].rank();
    const Val idx = e.broadcast_in_dim(e.convert(c.in[0], "i64"), shape, iota_axes(r));
    const Val hit = e.compare(Cmp::EQ, idx, e.iota("i64", shape, r));
    return {e.convert(hit, c.out_elem())};
  });
}

}  // namespace tessera::io::stablehlo
