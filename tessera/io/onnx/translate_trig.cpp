// Inverse trigonometric functions, which Tessera has no primitive for, composed from elementwise ops:
// atan by range reduction to |v| <= tan(pi/8) and a minimax polynomial (Cephes' single-precision
// coefficients, within a few float roundings), asin and acos through atan of exact-ish ratios.
#include <numbers>

#include "tessera/io/onnx/translate_util.h"
#include "tessera/io/onnx/translation_table.h"
#include "tessera/ops/binary.h"
#include "tessera/ops/unary.h"

namespace tessera::io::onnx {

namespace {

constexpr double kPi = std::numbers::pi;

// atan(x): |x| > 1 uses atan(t) = pi/2 - atan(1/t); then t > tan(pi/8) uses
// atan(t) = pi/4 + atan((t - 1) / (t + 1)); the polynomial covers the rest. Infinities come out as
// +-pi/2 (1/inf = 0) and NaN stays NaN.
Tensor atan_of(const Tensor& x) {
  const Tensor t = ops::abs(x);
  const Tensor inverted = ops::gt(t, scalar_as(t, 1.0));
  const Tensor u = ops::where(inverted, ops::reciprocal(t), t);
  const Tensor shifted = ops::gt(u, scalar_as(u, 0.41421356237309503));
  const Tensor v = ops::where(shifted, (u - 1.0) / (u + 1.0), u);
  const Tensor z = v * v;
  const Tensor poly = (((z * 8.05374449538e-2 - 1.38776856032e-1) * z + 1.99777106478e-1) * z - 3.33329491539e-1);
  Tensor r = poly * z * v + v;
  r = ops::where(shifted, r + kPi / 4, r);
  r = ops::where(inverted, kPi / 2 - r, r);
  return ops::sign(x) * r;
}

// asin(x) = atan(x / sqrt((1 - x)(1 + x))): the factored form keeps 1 - x^2 accurate near |x| = 1,
// where the ratio becomes +-inf and atan gives +-pi/2.
Tensor asin_of(const Tensor& x) { return atan_of(x / ops::sqrt((1.0 - x) * (1.0 + x))); }

// acos(x) = 2 atan(sqrt((1 - x) / (1 + x))): accurate near x = 1 (where pi/2 - asin(x) would cancel);
// x = -1 gives 2 atan(inf) = pi.
Tensor acos_of(const Tensor& x) { return atan_of(ops::sqrt((1.0 - x) / (1.0 + x))) * 2.0; }

void add_inverse(TranslationTable& t, const char* op, Tensor (*fn)(const Tensor&)) {
  t.add(op, {7}, [fn](NodeContext& c) -> std::vector<Tensor> {
    const Tensor x = c.input(0);
    require_floating(c, x);
    return {fn(x)};
  });
}

}  // namespace

void add_trig_translations(TranslationTable& t) {
  add_inverse(t, "Atan", atan_of);
  add_inverse(t, "Asin", asin_of);
  add_inverse(t, "Acos", acos_of);
}

}  // namespace tessera::io::onnx
