// Reductions: ReduceSum (axes as an input since opset 13), ReduceMean / ReduceProd / ReduceMax /
// ReduceMin (axes as an attribute in opset 17), always keeping the axes and then reshaping to the
// node's shape. f16/bf16 sums accumulate in f32, booleans count as i64 (as Tessera's sum of bool) and
// take max/min as 0/1 integers. ArgMax/ArgMin keep the first extremum (select_last_index = 0, as
// Tessera); CumSum is inclusive; Softmax and LogSoftmax along one axis, f16/bf16 computed in f32.
#include <cmath>

#include "tessera/io/onnx/export_lower.h"

namespace tessera::io::onnx {

namespace {

Shape kept_shape(const Shape& shape, const std::vector<int64_t>& axes) {
  Shape s = shape;
  for (int64_t a : axes) s[static_cast<size_t>(a)] = 1;
  return s;
}

// The reduction over `axes` of x (already in its accumulation type), keeping the axes.
OVal reduce(GraphBuilder& b, const std::string& op, const OVal& x, const std::vector<int64_t>& axes) {
  const Shape kept = kept_shape(x.shape, axes);
  if (op == "ReduceSum") {
    std::vector<OVal> in = {x};
    if (!axes.empty()) in.push_back(b.i64s(axes));
    return b.op(op, in, x.dtype, kept, [](pb::NodeProto& n) { attr_int(n, "keepdims", 1); });
  }
  return b.op(op, {x}, x.dtype, kept, [axes](pb::NodeProto& n) {
    if (!axes.empty()) attr_ints(n, "axes", axes);
    attr_int(n, "keepdims", 1);
  });
}

void add_reduction(LoweringTable& t, const std::string& op, const std::string& onnx_op) {
  t.add(op, [onnx_op](LowerContext& c) -> std::vector<OVal> {
    GraphBuilder& b = c.b;
    const std::vector<int64_t> axes = node_axes(c);
    DType acc = widened(c.in[0].dtype);
    if (acc == DType::boolean) acc = onnx_op == "ReduceSum" ? DType::i64 : DType::i32;
    const OVal x = b.cast(c.in[0], acc);
    OVal r = reduce(b, onnx_op, x, axes);
    if (is_floating(acc) && (onnx_op == "ReduceMax" || onnx_op == "ReduceMin")) {
      // A NaN wins, as in Tessera (ONNX Runtime skips NaNs): NaN where any element of the window is.
      const OVal any_nan = reduce(b, "ReduceMax", b.cast(b.op("IsNaN", {x}, DType::boolean, x.shape), DType::f32), axes);
      const OVal has = b.op("Greater", {any_nan, b.scalar(0, DType::f32)}, DType::boolean, any_nan.shape);
      r = b.op("Where", {has, b.scalar(NAN, acc), r}, acc, r.shape);
    }
    return {b.reshape(b.cast(r, c.out_dtype()), c.out_shape())};
  });
}

void add_arg_extremum(LoweringTable& t, const std::string& op, const std::string& onnx_op) {
  t.add(op, [onnx_op](LowerContext& c) -> std::vector<OVal> {
    GraphBuilder& b = c.b;
    OVal x = c.in[0];
    if (x.dtype == DType::boolean) x = b.cast(x, DType::i32);
    const int64_t axis = normalize_axis(c.attrs().get_int("axis"), x.rank(), "argmax");
    auto arg = [&](const std::string& op_type, const OVal& v) {
      return b.op(op_type, {v}, DType::i64, kept_shape(v.shape, {axis}), [axis](pb::NodeProto& n) {
        attr_int(n, "axis", axis);
        attr_int(n, "keepdims", 1);
        attr_int(n, "select_last_index", 0);
      });
    };
    OVal r = arg(onnx_op, x);
    if (is_floating(x.dtype)) {
      // The first NaN wins, as in Tessera and NumPy (ONNX Runtime skips NaNs).
      const OVal nan = b.cast(b.op("IsNaN", {x}, DType::boolean, x.shape), DType::i32);
      const OVal first_nan = arg("ArgMax", nan);
      const OVal any = b.op("Greater", {reduce(b, "ReduceMax", nan, {axis}), b.scalar(0, DType::i32)}, DType::boolean,
                            first_nan.shape);
      r = b.op("Where", {any, first_nan, r}, DType::i64, r.shape);
    }
    return {b.reshape(b.cast(r, c.out_dtype()), c.out_shape())};
  });
}

void add_lane(LoweringTable& t, const std::string& op, const std::string& onnx_op) {
  t.add(op, [onnx_op](LowerContext& c) -> std::vector<OVal> {
    GraphBuilder& b = c.b;
    const int64_t axis = normalize_axis(c.attrs().get_int("axis"), c.in[0].rank(), "softmax");
    const OVal x = b.cast(c.in[0], widened(c.in[0].dtype));
    const OVal y = b.op(onnx_op, {x}, x.dtype, x.shape, [axis](pb::NodeProto& n) { attr_int(n, "axis", axis); });
    return {b.cast(y, c.out_dtype())};
  });
}

}  // namespace

void add_reduce_exports(LoweringTable& t) {
  add_reduction(t, "sum", "ReduceSum");
  add_reduction(t, "mean", "ReduceMean");
  add_reduction(t, "prod", "ReduceProd");
  add_reduction(t, "max", "ReduceMax");
  add_reduction(t, "min", "ReduceMin");
  add_arg_extremum(t, "argmax", "ArgMax");
  add_arg_extremum(t, "argmin", "ArgMin");
  add_lane(t, "softmax", "Softmax");
  add_lane(t, "log_softmax", "LogSoftmax");
  t.add("cumsum", [](LowerContext& c) -> std::vector<OVal> {
    GraphBuilder& b = c.b;
    const int64_t axis = normalize_axis(c.attrs().get_int("axis"), c.in[0].rank(), "cumsum");
    const bool reverse = c.attrs().get_bool_or("reverse", false);
    DType acc = widened(c.in[0].dtype);
    if (acc == DType::boolean || acc == DType::u8 || acc == DType::i8) acc = DType::i64;
    const OVal x = b.cast(c.in[0], acc);
    const OVal y = b.op("CumSum", {x, b.scalar(static_cast<double>(axis), DType::i64)}, acc, x.shape, [reverse](pb::NodeProto& n) {
      if (reverse) attr_int(n, "reverse", 1);
    });
    return {b.cast(y, c.out_dtype())};
  });
}

}  // namespace tessera::io::onnx
