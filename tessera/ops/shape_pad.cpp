// pad: constant and reflect padding of any subset of leading axes. Both gradients are composites of
// slice, flip and constant pad, so they are differentiable again.
#include <limits>
#include <utility>

#include "tessera/ir/op_def.h"
#include "tessera/ops/ops.h"
#include "tessera/ops/register.h"
#include "tessera/ops/shape_util.h"

namespace tessera::ops {

void register_pad_ops(ir::OpRegistry& registry);

namespace {
using ir::Attrs;
using ir::TensorType;
using ir::Value;
using ir::VjpContext;

using Widths = std::vector<std::pair<int64_t, int64_t>>;

// The node's flat "widths" attribute (before0, after0, before1, ...) as one pair per axis of x,
// checked against x's shape and the mode.
Widths pad_widths(const std::vector<TensorType>& in, const Attrs& a) {
  const std::vector<int64_t>& flat = a.get_ints("widths");
  const std::string& mode = a.get_string("mode");
  if (mode != "constant" && mode != "reflect") {
    ir::op_fail("pad", in, "unknown mode '{}' (expected 'constant' or 'reflect')", mode);
  }
  if (flat.size() % 2 != 0) ir::op_fail("pad", in, "widths {} must come in (before, after) pairs", shape_str(flat));
  if (static_cast<int64_t>(flat.size() / 2) > in[0].rank()) {
    ir::op_fail("pad", in, "{} (before, after) pairs given for a tensor of rank {}", flat.size() / 2, in[0].rank());
  }
  Widths widths(static_cast<size_t>(in[0].rank()), {0, 0});
  for (size_t d = 0; d < flat.size() / 2; ++d) {
    const int64_t before = flat[2 * d], after = flat[2 * d + 1], n = in[0].shape[d];
    if (before < 0 || after < 0) {
      ir::op_fail("pad", in, "widths must be non-negative, got ({}, {}) for axis {}", before, after, d);
    }
    if (before > std::numeric_limits<int64_t>::max() - n - after) {
      ir::op_fail("pad", in, "widths ({}, {}) for axis {} are too large", before, after, d);
    }
    if (mode == "reflect" && (before > 0 || after > 0) && (before >= n || after >= n)) {
      ir::op_fail("pad", in, "reflect padding of axis {} needs widths smaller than its size {}, got ({}, {})", d, n,
                  before, after);
    }
    widths[d] = {before, after};
  }
  return widths;
}

Attrs pad_attrs(const Widths& widths, PadMode mode, double value) {
  std::vector<int64_t> flat;
  for (const auto& [before, after] : widths) {
    flat.push_back(before);
    flat.push_back(after);
  }
  return Attrs{
      {"widths", flat}, {"mode", std::string(mode == PadMode::Reflect ? "reflect" : "constant")}, {"value", value}};
}

// Zero padding of one axis, as used by the gradients.
Tensor pad_axis(const Tensor& x, int64_t axis, int64_t before, int64_t after) {
  Widths widths(static_cast<size_t>(axis + 1), {0, 0});
  widths[static_cast<size_t>(axis)] = {before, after};
  return pad(x, widths);
}

// Index into an axis of length n for position i (counted from the start of the unpadded data) under
// reflection without repeating the edge: -1 -> 1, n -> n - 2.
int64_t reflect_index(int64_t i, int64_t n) {
  if (i < 0) return -i;
  if (i >= n) return 2 * (n - 1) - i;
  return i;
}

Array reflect_pad(const Array& x, const Widths& widths, const Shape& out_shape) {
  const size_t rank = out_shape.size();
  // Per axis, the source offset of every output position; an element's offset is their sum.
  std::vector<std::vector<int64_t>> offsets(rank);
  for (size_t d = 0; d < rank; ++d) {
    for (int64_t i = 0; i < out_shape[d]; ++i) {
      offsets[d].push_back(reflect_index(i - widths[d].first, x.shape()[d]) * x.strides()[d]);
    }
  }
  Array out = Array::empty(x.dtype(), out_shape);
  const int64_t total = out.numel();
  if (total == 0) return out;
  dispatch_dtype(x.dtype(), [&](auto tag) {
    using E = decltype(tag);
    const E* src = x.data<const E>();
    E* dst = out.data<E>();
    std::vector<int64_t> index(rank, 0);
    int64_t off = 0;
    for (size_t d = 0; d < rank; ++d) off += offsets[d][0];
    for (int64_t k = 0; k < total; ++k) {
      dst[k] = src[off];
      for (size_t d = rank; d-- > 0;) {
        off -= offsets[d][static_cast<size_t>(index[d])];
        if (++index[d] < out_shape[d]) {
          off += offsets[d][static_cast<size_t>(index[d])];
          break;
        }
        index[d] = 0;
        off += offsets[d][0];
      }
    }
  });
  return out;
}

// The adjoint of reflecting one axis: the centre of g, plus each mirrored border flipped back onto
// the positions it was copied from (1..before and n-1-after..n-2).
Tensor unreflect_axis(const Tensor& g, int64_t axis, int64_t before, int64_t after, int64_t n) {
  Tensor grad = slice(g, axis, before, before + n);
  if (before > 0) grad = grad + pad_axis(flip(slice(g, axis, 0, before), {axis}), axis, 1, n - 1 - before);
  if (after > 0) {
    grad = grad + pad_axis(flip(slice(g, axis, before + n, before + n + after), {axis}), axis, n - 1 - after, 1);
  }
  return grad;
}

}  // namespace

Tensor pad(const Tensor& x, const std::vector<std::pair<int64_t, int64_t>>& widths, PadMode mode, double value) {
  return ir::make_node1("pad", {x}, pad_attrs(widths, mode, value));
}

void register_pad_ops(ir::OpRegistry& r) {
  r.add(ir::OpDef{
      .name = "pad",
      .min_inputs = 1,
      .max_inputs = 1,
      .attrs = {{"widths", ir::AttrKind::Ints}, {"mode", ir::AttrKind::String}, {"value", ir::AttrKind::Float}},
      .infer = [](const std::vector<TensorType>& in, const Attrs& a) -> std::vector<TensorType> {
        const Widths widths = pad_widths(in, a);
        TensorType t = in[0];
        for (size_t d = 0; d < widths.size(); ++d) t.shape[d] += widths[d].first + widths[d].second;
        return {t};
      },
      .reference = [](const std::vector<Array>& in, const Attrs& a,
                      const std::vector<TensorType>& out) -> std::vector<Array> {
        const Widths widths = pad_widths(types_of(in), a);
        if (a.get_string("mode") == "reflect") return {reflect_pad(in[0], widths, out[0].shape)};
        Array o = Array::full(out[0].dtype, out[0].shape, a.get_float("value"));
        Array interior = o;
        for (size_t d = 0; d < widths.size(); ++d) {
          const int64_t axis = static_cast<int64_t>(d);
          interior = interior.slice(axis, widths[d].first, widths[d].first + in[0].shape()[d]);
        }
        copy_into(in[0], interior);
        return {o};
      },
      .vjp = [](const VjpContext& c) -> std::vector<Value> {
        const Widths widths = pad_widths({c.input(0).type()}, c.attrs());
        const bool reflect = c.attrs().get_string("mode") == "reflect";
        Tensor g = c.cotangent();
        for (size_t d = 0; d < widths.size(); ++d) {
          const auto [before, after] = widths[d];
          if (before == 0 && after == 0) continue;
          const int64_t axis = static_cast<int64_t>(d), n = c.input(0).shape()[d];
          g = reflect ? unreflect_axis(g, axis, before, after, n) : slice(g, axis, before, before + n);
        }
        return {g};
      },
  });
}

}  // namespace tessera::ops
