// Reductions: stablehlo.reduce with a one-op body (sum, mean, max, min, prod), a variadic reduce
// over (value, index) pairs for argmax/argmin, and reduce_window for cumsum. f16/bf16 sums and
// products accumulate in f32 (Tessera's reference accumulates in double), booleans count as i64.
#include <cmath>

#include "tessera/io/stablehlo/lower.h"

namespace tessera::io::stablehlo {

namespace {

// The reduced value reshaped to the node's output shape (keepdims or not).
std::vector<Val> finish(LowerContext& c, const Val& r) {
  return {c.e.reshape(c.e.convert(r, c.out_elem()), c.out_shape())};
}

int64_t reduced_count(const Val& x, const std::vector<int64_t>& axes) {
  int64_t n = 1;
  for (int64_t a : axes) n *= x.shape[static_cast<size_t>(a)];
  return n;
}

void add_accumulating(LoweringTable& t, const std::string& op, const std::string& body, double init, bool mean) {
  t.add(op, [body, init, mean](LowerContext& c) -> std::vector<Val> {
    Emitter& e = c.e;
    const std::vector<int64_t> axes = node_axes(c);
    const std::string acc = c.in[0].elem == "i1" ? "i64" : widened(c.in[0].elem);
    const Val x = e.convert(c.in[0], acc);
    Val r = e.reduce(x, e.splat(init, acc), axes, body);
    if (mean) r = e.div(r, e.splat_like(r, static_cast<double>(reduced_count(x, axes))));
    return finish(c, r);
  });
}

void add_extremum(LoweringTable& t, const std::string& op, bool is_max) {
  t.add(op, [is_max](LowerContext& c) -> std::vector<Val> {
    Emitter& e = c.e;
    const Val& x = c.in[0];
    const std::vector<int64_t> axes = node_axes(c);
    if (x.elem == "i1") {
      return finish(c, e.reduce(x, e.splat(is_max ? 0.0 : 1.0, "i1"), axes, is_max ? "stablehlo.or" : "stablehlo.and"));
    }
    // -inf / +inf, which saturate to the lowest / highest integer for integer types.
    const Val init = e.splat(is_max ? -HUGE_VAL : HUGE_VAL, x.elem);
    return finish(c, e.reduce(x, init, axes, is_max ? "stablehlo.maximum" : "stablehlo.minimum"));
  });
}

// Index of the first extremum along the axis, NaN counting as the greatest (and least) value so that
// the first NaN wins, as in Tessera and NumPy. The body is symmetric in its two (value, index) pairs,
// so the result does not depend on the order in which XLA combines them.
void add_arg_extremum(LoweringTable& t, const std::string& op, bool is_max) {
  t.add(op, [is_max](LowerContext& c) -> std::vector<Val> {
    Emitter& e = c.e;
    const Val& x = c.in[0];
    const int64_t axis = normalize_axis(c.attrs().get_int("axis"), x.rank(), "argmax");
    const Val index = e.iota("i64", x.shape, axis);
    const Val init_value =
        x.elem == "i1" ? e.splat(is_max ? 0.0 : 1.0, "i1") : e.splat(is_max ? -HUGE_VAL : HUGE_VAL, x.elem);
    const bool floating = x.is_float();
    const std::vector<Val> r =
        e.reduce_multi({x, index}, {init_value, e.splat(0.0, "i64")}, {axis},
                       [is_max, floating](Emitter& b, const std::vector<Val>& a) {
                         return pick_extreme_with_index(b, a, is_max ? Cmp::GT : Cmp::LT, floating);
                       });
    return {e.reshape(r[1], c.out_shape())};
  });
}

}  // namespace

void add_reduce_lowerings(LoweringTable& t) {
  add_accumulating(t, "sum", "stablehlo.add", 0.0, false);
  add_accumulating(t, "mean", "stablehlo.add", 0.0, true);
  add_accumulating(t, "prod", "stablehlo.multiply", 1.0, false);
  add_extremum(t, "max", true);
  add_extremum(t, "min", false);
  add_arg_extremum(t, "argmax", true);
  add_arg_extremum(t, "argmin", false);
  // Inclusive running sum: a window as long as the axis, padded in front (or behind, reversed).
  t.add("cumsum", [](LowerContext& c) -> std::vector<Val> {
    Emitter& e = c.e;
    const int64_t axis = normalize_axis(c.attrs().get_int("axis"), c.in[0].rank(), "cumsum");
    const bool reverse = c.attrs().get_bool_or("reverse", false);
    const std::string acc = c.in[0].elem == "i1" ? "i64" : widened(c.in[0].elem);
    const Val x = e.convert(c.in[0], acc);
    const int64_t n = x.shape[static_cast<size_t>(axis)];
    if (n <= 1) return {e.convert(x, c.out_elem())};
    Emitter::Window w;
    w.dims.assign(static_cast<size_t>(x.rank()), 1);
    w.dims[static_cast<size_t>(axis)] = n;
    w.padding.assign(static_cast<size_t>(x.rank()), {0, 0});
    w.padding[static_cast<size_t>(axis)] =
        reverse ? std::pair<int64_t, int64_t>{0, n - 1} : std::pair<int64_t, int64_t>{n - 1, 0};
    return {e.convert(e.reduce_window(x, e.splat(0.0, acc), w, "stablehlo.add"), c.out_elem())};
  });
}

}  // namespace tessera::io::stablehlo
