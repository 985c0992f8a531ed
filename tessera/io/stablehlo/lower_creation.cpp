// Tensors made from attributes alone: full (a splat constant), arange and eye (iota arithmetic, so
// that the text stays small whatever the size).
#include <cmath>

#include "tessera/io/stablehlo/lower.h"

namespace tessera::io::stablehlo {

namespace {

bool is_whole(double v) {
  return std::isfinite(v) && v == std::floor(v) && std::fabs(v) < 9007199254740992.0;
}

}  // namespace

void add_creation_lowerings(LoweringTable& t) {
  t.add("full", [](LowerContext& c) -> std::vector<Val> {
    return {c.e.splat(c.attrs().get_float("value"), c.out_elem(), c.out_shape())};
  });
  t.add("arange", [](LowerContext& c) -> std::vector<Val> {
    Emitter& e = c.e;
    const double start = c.attrs().get_float("start"), step = c.attrs().get_float("step");
    const std::string elem = c.out_elem();
    const Shape& shape = c.out_shape();
    const int64_t n = shape[0];
    const DType dt = c.out().dtype;
    const double last = start + static_cast<double>(n > 0 ? n - 1 : 0) * step;
    auto fits = [dt](double v) { return is_whole(v) && Array::full(dt, {}, v).item() == v; };
    if (is_integral(dt) && is_whole(step) && fits(start) && fits(last)) {
      // Whole numbers: exact in i64, then wrapped into the integer type (all values fit).
      const Val i = e.iota("i64", shape, 0);
      return {e.convert(e.add(e.mul(i, e.splat(step, "i64", shape)), e.splat(start, "i64", shape)), elem)};
    }
    // Element i is start + i * step computed in double and converted, as the reference does.
    const Val i = e.raw_convert(e.iota("i64", shape, 0), "f64");
    return {e.convert(e.add(e.mul(i, e.splat(step, "f64", shape)), e.splat(start, "f64", shape)), elem)};
  });
  t.add("eye", [](LowerContext& c) -> std::vector<Val> {
    Emitter& e = c.e;
    const Shape& shape = c.out_shape();
    const Val rows = e.iota("i64", shape, 0), cols = e.iota("i64", shape, 1);
    // Ones where col - row == k.
    const Val on =
        e.compare(Cmp::EQ, e.sub(cols, rows), e.splat(static_cast<double>(c.attrs().get_int("k")), "i64", shape));
    return {e.select(on, e.splat(1.0, c.out_elem(), shape), e.splat(0.0, c.out_elem(), shape))};
  });
}

}  // namespace tessera::io::stablehlo
