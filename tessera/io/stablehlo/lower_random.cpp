// Random draws reproduce Tessera's numbers bit for bit: Philox-4x32-10 is written out with unsigned
// integer ops (32x32->64-bit products in ui64, shifts, xors), element i using counter offset + i and
// the 64-bit seed as key, exactly as tessera/core/philox.cpp. The words then become uniforms (24 or
// 53 bits), Box-Muller normals, Bernoulli samples, bounded integers (high 64 bits of a 128-bit
// product) and permutations (a stable sort of indices by random keys), as tessera/ops/random.cpp.
// stablehlo.rng_bit_generator would be shorter but would not give Tessera's numbers.
#include <cmath>
#include <numbers>

#include "tessera/io/stablehlo/lower.h"

namespace tessera::io::stablehlo {

namespace {

constexpr uint64_t kLow32 = 0xffffffffULL;

struct Draw {
  uint64_t seed, offset;
  int64_t n;
};

Draw draw_of(const LowerContext& c, int64_t n) {
  return {static_cast<uint64_t>(c.attrs().get_int("seed")), static_cast<uint64_t>(c.attrs().get_int("offset")), n};
}

// The four Philox output words of elements 0..n-1, each a [n] ui32 value.
std::array<Val, 4> philox_words(Emitter& e, const Draw& d) {
  const Shape s = {d.n};
  const Val mask = e.splat_bits(kLow32, "ui64", s);
  const Val k32 = e.splat_bits(32, "ui64", s);
  auto low = [&](const Val& v) { return e.raw_convert(e.logical_and(v, mask), "ui32"); };
  auto high = [&](const Val& v) { return e.raw_convert(e.shift_right(v, k32), "ui32"); };
  const Val counter = e.add(e.iota("ui64", s, 0), e.splat_bits(d.offset, "ui64", s));
  Val c0 = low(counter), c1 = high(counter), c2 = e.splat_bits(0, "ui32", s), c3 = c2;
  uint32_t key0 = static_cast<uint32_t>(d.seed), key1 = static_cast<uint32_t>(d.seed >> 32);
  const Val m0 = e.splat_bits(0xD2511F53u, "ui64", s), m1 = e.splat_bits(0xCD9E8D57u, "ui64", s);
  for (int round = 0; round < 10; ++round) {
    if (round > 0) {
      key0 += 0x9E3779B9u;
      key1 += 0xBB67AE85u;
    }
    const Val p0 = e.mul(e.raw_convert(c0, "ui64"), m0);
    const Val p1 = e.mul(e.raw_convert(c2, "ui64"), m1);
    const Val n0 = e.logical_xor(e.logical_xor(high(p1), c1), e.splat_bits(key0, "ui32", s));
    const Val n2 = e.logical_xor(e.logical_xor(high(p0), c3), e.splat_bits(key1, "ui32", s));
    c1 = low(p1);
    c3 = low(p0);
    c0 = n0;
    c2 = n2;
  }
  return {c0, c1, c2, c3};
}

Val bits64(Emitter& e, const Val& lo, const Val& hi) {
  const Val shifted = e.shift_left(e.raw_convert(hi, "ui64"), e.splat_bits(32, "ui64", hi.shape));
  return e.logical_or(shifted, e.raw_convert(lo, "ui64"));
}

// Uniform doubles in [0, 1): 24 bits (f32 and narrower) or 53 bits (f64), as uniform24/uniform53.
Val uniform24(Emitter& e, const Val& bits) {
  const Val top = e.raw_convert(e.shift_right(bits, e.splat_bits(8, "ui32", bits.shape)), "f64");
  return e.mul(top, e.splat(0x1.0p-24, "f64", bits.shape));
}
Val uniform53(Emitter& e, const Val& lo, const Val& hi) {
  const Val top = e.raw_convert(e.shift_right(bits64(e, lo, hi), e.splat_bits(11, "ui64", lo.shape)), "f64");
  return e.mul(top, e.splat(0x1.0p-53, "f64", lo.shape));
}

// The neighbouring float of t toward +inf (up) or -inf, by stepping its sign-magnitude bits.
Val step(Emitter& e, const Val& t, bool up) {
  const int bits_n = element_bits(t.elem);
  const std::string u = "ui" + std::to_string(bits_n);
  const uint64_t sign = uint64_t{1} << (bits_n - 1);
  const Val bits = e.bitcast(t, u);
  const Val magnitude = e.logical_and(bits, e.splat_bits(sign - 1, u, t.shape));
  const Val negative =
      e.compare(Cmp::NE, e.logical_and(bits, e.splat_bits(sign, u, t.shape)), e.splat_bits(0, u, t.shape));
  const Val grow = up ? e.unary("stablehlo.not", negative) : negative;
  const Val one = e.splat_bits(1, u, t.shape);
  const Val next = e.select(grow, e.add(bits, one), e.sub(bits, one));
  const Val tiny = e.splat_bits(up ? 1 : sign | 1, u, t.shape);
  return e.bitcast(e.select(e.compare(Cmp::EQ, magnitude, e.splat_bits(0, u, t.shape)), tiny, next), t.elem);
}

std::vector<Val> lower_uniform(LowerContext& c) {
  Emitter& e = c.e;
  const Shape& shape = c.out_shape();
  const std::string elem = c.out_elem();
  const double low = c.attrs().get_float("low"), high = c.attrs().get_float("high");
  const auto w = philox_words(e, draw_of(c, shape_numel(shape)));
  const Val u = elem == "f64" ? uniform53(e, w[0], w[1]) : uniform24(e, w[0]);
  const Val v = e.add(e.splat(low, "f64", u.shape), e.mul(e.splat(high - low, "f64", u.shape), u));
  // Rounded to the dtype without leaving [low, high): one step back where rounding left the range.
  Val t = e.convert(v, elem);
  t = e.select(e.compare(Cmp::LT, e.raw_convert(t, "f64"), e.splat(low, "f64", u.shape)), step(e, t, true), t);
  t = e.select(e.compare(Cmp::GE, e.raw_convert(t, "f64"), e.splat(high, "f64", u.shape)), step(e, t, false), t);
  return {e.reshape(t, shape)};
}

std::vector<Val> lower_normal(LowerContext& c) {
  Emitter& e = c.e;
  const Shape& shape = c.out_shape();
  const auto w = philox_words(e, draw_of(c, shape_numel(shape)));
  const Shape s = w[0].shape;
  // Box-Muller in double: radius from 1 - u (in (0, 1]) so that the log never sees zero.
  const Val u1 = uniform53(e, w[0], w[1]), u2 = uniform53(e, w[2], w[3]);
  const Val radius = e.unary(
      "stablehlo.sqrt", e.mul(e.splat(-2.0, "f64", s), e.unary("stablehlo.log", e.sub(e.splat(1.0, "f64", s), u1))));
  const Val z = e.mul(radius, e.unary("stablehlo.cosine", e.mul(e.splat(2.0 * std::numbers::pi, "f64", s), u2)));
  const Val v =
      e.add(e.splat(c.attrs().get_float("mean"), "f64", s), e.mul(e.splat(c.attrs().get_float("std"), "f64", s), z));
  return {e.reshape(e.convert(v, c.out_elem()), shape)};
}

std::vector<Val> lower_bernoulli(LowerContext& c) {
  Emitter& e = c.e;
  const Val& p = c.in[0];
  const auto w = philox_words(e, draw_of(c, p.numel()));
  const Val u = p.elem == "f64" ? uniform53(e, w[0], w[1]) : uniform24(e, w[0]);
  const Val hit = e.compare(Cmp::LT, e.reshape(u, p.shape), e.convert(p, "f64"));
  return {e.select(hit, e.splat(1.0, p.elem, p.shape), e.splat(0.0, p.elem, p.shape))};
}

// high 64 bits of a * b for ui64 a and a constant b, from 32-bit halves (as mulhi64).
Val mulhi64(Emitter& e, const Val& a, uint64_t b) {
  const Shape& s = a.shape;
  const Val mask = e.splat_bits(kLow32, "ui64", s), k32 = e.splat_bits(32, "ui64", s);
  const Val a_lo = e.logical_and(a, mask), a_hi = e.shift_right(a, k32);
  const Val b_lo = e.splat_bits(b & kLow32, "ui64", s), b_hi = e.splat_bits(b >> 32, "ui64", s);
  const Val lo_lo = e.mul(a_lo, b_lo), hi_lo = e.mul(a_hi, b_lo), lo_hi = e.mul(a_lo, b_hi), hi_hi = e.mul(a_hi, b_hi);
  const Val cross = e.add(e.add(e.shift_right(lo_lo, k32), e.logical_and(hi_lo, mask)), lo_hi);
  return e.add(e.add(hi_hi, e.shift_right(hi_lo, k32)), e.shift_right(cross, k32));
}

std::vector<Val> lower_randint(LowerContext& c) {
  Emitter& e = c.e;
  const Shape& shape = c.out_shape();
  const int64_t low = c.attrs().get_int("low"), high = c.attrs().get_int("high");
  const uint64_t span = static_cast<uint64_t>(high) - static_cast<uint64_t>(low);
  const auto w = philox_words(e, draw_of(c, shape_numel(shape)));
  const Val draw = mulhi64(e, bits64(e, w[0], w[1]), span);
  const Val value = e.bitcast(e.add(draw, e.splat_bits(static_cast<uint64_t>(low), "ui64", draw.shape)), "i64");
  return {e.reshape(e.convert(value, c.out_elem()), shape)};
}

std::vector<Val> lower_permutation(LowerContext& c) {
  Emitter& e = c.e;
  const int64_t n = c.attrs().get_int("n");
  if (n == 0) return {e.splat(0.0, "i64", {0})};
  const auto w = philox_words(e, draw_of(c, n));
  return {e.sort_by_key(bits64(e, w[0], w[1]), e.iota("i64", {n}, 0), 0)};
}

}  // namespace

void add_random_lowerings(LoweringTable& t) {
  t.add("uniform", lower_uniform);
  t.add("normal", lower_normal);
  t.add("bernoulli", lower_bernoulli);
  t.add("randint", lower_randint);
  t.add("permutation", lower_permutation);
}

}  // namespace tessera::io::stablehlo
