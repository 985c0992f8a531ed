// Random ops. Each draw is a graph node whose attributes hold the seed and the first Philox counter,
// so the node is a pure function of its attributes: a graph replays the same numbers every time it
// runs, on any backend. Element i (row-major) of a draw uses counter offset + i and nothing else; the
// ops:: functions take the counters from a Generator, which they advance past the draw.
#include "tessera/ops/random.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numbers>
#include <numeric>

#include "tessera/core/philox.h"
#include "tessera/ir/op_def.h"
#include "tessera/ops/ops.h"
#include "tessera/ops/register.h"

namespace tessera::ops {

namespace {
using ir::Attrs;
using ir::TensorType;
using ir::Value;

// The attributes every draw carries. Seeds and offsets are unsigned 64-bit numbers stored in Int
// (int64) attributes by two's-complement reinterpretation.
std::vector<ir::AttrSpec> draw_attrs(std::vector<ir::AttrSpec> params) {
  std::vector<ir::AttrSpec> specs{{"seed", ir::AttrKind::Int}, {"offset", ir::AttrKind::Int}};
  specs.insert(specs.end(), params.begin(), params.end());
  return specs;
}
uint64_t seed_of(const Attrs& a) {
  return static_cast<uint64_t>(a.get_int("seed"));
}
uint64_t offset_of(const Attrs& a) {
  return static_cast<uint64_t>(a.get_int("offset"));
}
PhiloxBlock block_at(const Attrs& a, int64_t i) {
  return philox_block(seed_of(a), offset_of(a) + static_cast<uint64_t>(i));
}

void check_shape(const std::string& op, const std::vector<TensorType>& in, const Shape& shape) {
  for (int64_t d : shape) {
    if (d < 0) ir::op_fail(op, in, "negative dimension in shape {}", shape_str(shape));
  }
}

// The neighbouring value of t one step up (toward +inf) or down, for every floating element type.
template <class T>
T step(T t, bool up) {
  if constexpr (is_half_v<T>) {
    // Sign-magnitude bit patterns: the magnitude steps by one unit in the last place.
    const uint16_t magnitude = t.bits & 0x7fffu;
    const bool negative = (t.bits & 0x8000u) != 0;
    if (magnitude == 0) return T::from_bits(up ? 0x0001u : 0x8001u);
    const bool grow = up != negative;
    return T::from_bits(static_cast<uint16_t>(grow ? t.bits + 1 : t.bits - 1));
  } else {
    return std::nextafter(t, up ? std::numeric_limits<T>::infinity() : -std::numeric_limits<T>::infinity());
  }
}

// v (in [low, high) as a real number) rounded to T without leaving [low, high): rounding to nearest
// may land on `high` or just below `low`, and one step back fixes that.
template <class T>
T fit_in_range(double v, double low, double high) {
  T t = convert_element<T>(v);
  if (convert_element<double>(t) < low) t = step(t, true);
  if (convert_element<double>(t) >= high) t = step(t, false);
  return t;
}

// True when a draw of `dtype` in [low, high) has at least one value to produce.
bool range_has_value(DType dtype, double low, double high) {
  return dispatch_floating(dtype, "uniform", [&](auto tag) {
    using T = decltype(tag);
    const double t = convert_element<double>(fit_in_range<T>(low, low, high));
    return t >= low && t < high;
  });
}

TensorType uniform_infer(const std::vector<TensorType>& in, const Attrs& a) {
  const Shape& shape = a.get_ints("shape");
  const DType dt = a.get_dtype("dtype");
  check_shape("uniform", in, shape);
  if (!is_floating(dt)) {
    ir::op_fail("uniform", in, "dtype must be floating (f32, f64, f16, bf16), got {}", dtype_name(dt));
  }
  const double low = a.get_float("low"), high = a.get_float("high");
  if (!(low < high) || !std::isfinite(high - low)) {
    ir::op_fail("uniform", in, "expected finite low < high, got low={} high={}", low, high);
  }
  if (!range_has_value(dt, low, high)) {
    ir::op_fail("uniform", in, "no {} value lies in [{}, {})", dtype_name(dt), low, high);
  }
  return {dt, shape};
}

Array uniform_reference(const Attrs& a, const TensorType& out) {
  Array o = Array::empty(out.dtype, out.shape);
  const double low = a.get_float("low"), high = a.get_float("high");
  dispatch_floating(out.dtype, "uniform", [&](auto tag) {
    using T = decltype(tag);
    T* p = o.data<T>();
    for (int64_t i = 0; i < o.numel(); ++i) {
      const PhiloxBlock b = block_at(a, i);
      const double u = std::is_same_v<T, double> ? uniform53(b[0], b[1]) : uniform24(b[0]);
      p[i] = fit_in_range<T>(low + (high - low) * u, low, high);
    }
  });
  return o;
}

TensorType normal_infer(const std::vector<TensorType>& in, const Attrs& a) {
  const Shape& shape = a.get_ints("shape");
  const DType dt = a.get_dtype("dtype");
  check_shape("normal", in, shape);
  if (!is_floating(dt)) {
    ir::op_fail("normal", in, "dtype must be floating (f32, f64, f16, bf16), got {}", dtype_name(dt));
  }
  const double mean = a.get_float("mean"), stddev = a.get_float("std");
  if (!std::isfinite(mean) || !std::isfinite(stddev) || stddev < 0) {
    ir::op_fail("normal", in, "expected a finite mean and a finite std >= 0, got mean={} std={}", mean, stddev);
  }
  return {dt, shape};
}

Array normal_reference(const Attrs& a, const TensorType& out) {
  Array o = Array::empty(out.dtype, out.shape);
  const double mean = a.get_float("mean"), stddev = a.get_float("std");
  dispatch_floating(out.dtype, "normal", [&](auto tag) {
    using T = decltype(tag);
    T* p = o.data<T>();
    for (int64_t i = 0; i < o.numel(); ++i) {
      // Box-Muller with both uniforms at 53 bits; the radius uses 1 - u, which lies in (0, 1], so the
      // logarithm never sees zero.
      const PhiloxBlock b = block_at(a, i);
      const double radius = std::sqrt(-2.0 * std::log(1.0 - uniform53(b[0], b[1])));
      const double z = radius * std::cos(2.0 * std::numbers::pi * uniform53(b[2], b[3]));
      p[i] = convert_element<T>(mean + stddev * z);
    }
  });
  return o;
}

Array bernoulli_reference(const Array& p, const Attrs& a) {
  const std::vector<double> probs = p.to_f64();
  Array o = Array::empty(p.dtype(), p.shape());
  dispatch_floating(p.dtype(), "bernoulli", [&](auto tag) {
    using T = decltype(tag);
    T* out = o.data<T>();
    for (size_t i = 0; i < probs.size(); ++i) {
      if (!(probs[i] >= 0.0 && probs[i] <= 1.0)) {
        ir::op_fail("bernoulli", {{p.dtype(), p.shape()}}, "probability {} at element {} is outside [0, 1]", probs[i],
                    i);
      }
      const PhiloxBlock b = block_at(a, static_cast<int64_t>(i));
      const double u = std::is_same_v<T, double> ? uniform53(b[0], b[1]) : uniform24(b[0]);
      out[i] = convert_element<T>(u < probs[i] ? 1.0 : 0.0);
    }
  });
  return o;
}

TensorType randint_infer(const std::vector<TensorType>& in, const Attrs& a) {
  const Shape& shape = a.get_ints("shape");
  const DType dt = a.get_dtype("dtype");
  check_shape("randint", in, shape);
  if (!is_integral(dt)) {
    ir::op_fail("randint", in, "dtype must be an integer type (i8, i32, i64, u8), got {}", dtype_name(dt));
  }
  const int64_t low = a.get_int("low"), high = a.get_int("high");
  if (low >= high) ir::op_fail("randint", in, "expected low < high, got low={} high={}", low, high);
  const bool fits = dispatch_dtype(dt, [&](auto tag) {
    using T = decltype(tag);
    if constexpr (std::is_same_v<T, int64_t>) {
      return true;
    } else if constexpr (std::is_integral_v<T>) {
      return low >= static_cast<int64_t>(std::numeric_limits<T>::min()) &&
             high - 1 <= static_cast<int64_t>(std::numeric_limits<T>::max());
    } else {
      return false;  // not reached: dt is an integer type
    }
  });
  if (!fits) ir::op_fail("randint", in, "[{}, {}) does not fit in {}", low, high, dtype_name(dt));
  return {dt, shape};
}

Array randint_reference(const Attrs& a, const TensorType& out) {
  Array o = Array::empty(out.dtype, out.shape);
  const int64_t low = a.get_int("low"), high = a.get_int("high");
  // The span may exceed INT64_MAX (e.g. the full i64 range), so it is computed without sign.
  const uint64_t span = static_cast<uint64_t>(high) - static_cast<uint64_t>(low);
  dispatch_dtype(out.dtype, [&](auto tag) {
    using T = decltype(tag);
    T* p = o.data<T>();
    for (int64_t i = 0; i < o.numel(); ++i) {
      const PhiloxBlock b = block_at(a, i);
      const uint64_t draw = mulhi64(bits64(b[0], b[1]), span);
      p[i] = convert_element<T>(static_cast<int64_t>(static_cast<uint64_t>(low) + draw));
    }
  });
  return o;
}

Array permutation_reference(const Attrs& a, const TensorType& out) {
  const int64_t n = a.get_int("n");
  std::vector<uint64_t> keys(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) {
    const PhiloxBlock b = block_at(a, i);
    keys[static_cast<size_t>(i)] = bits64(b[0], b[1]);
  }
  // Sorting indices by random keys gives a uniform permutation; stability makes equal keys (rare)
  // resolve the same way everywhere.
  std::vector<int64_t> order(static_cast<size_t>(n));
  std::iota(order.begin(), order.end(), int64_t{0});
  std::stable_sort(order.begin(), order.end(),
                   [&](int64_t l, int64_t r) { return keys[static_cast<size_t>(l)] < keys[static_cast<size_t>(r)]; });
  Array o = Array::empty(out.dtype, out.shape);
  std::copy(order.begin(), order.end(), o.data<int64_t>());
  return o;
}

// Builds the node at the generator's current counter and advances it past the draw only once the
// node exists, so that a rejected call leaves the generator untouched.
Tensor draw(const std::string& op, std::vector<Value> inputs, Attrs attrs, Generator& gen) {
  attrs.set("seed", static_cast<int64_t>(gen.seed())).set("offset", static_cast<int64_t>(gen.offset()));
  Value v = ir::make_node1(op, std::move(inputs), std::move(attrs));
  gen.advance(static_cast<uint64_t>(shape_numel(v.shape())));
  return v;
}
}  // namespace

Generator& default_generator() {
  static Generator generator;
  return generator;
}

void manual_seed(uint64_t seed) {
  default_generator() = Generator(seed);
}

Tensor randn(const Shape& shape, Generator& gen, DType dtype) {
  return normal(shape, 0.0, 1.0, gen, dtype);
}
Tensor randn(const Shape& shape, DType dtype) {
  return randn(shape, default_generator(), dtype);
}
Tensor rand(const Shape& shape, Generator& gen, DType dtype) {
  return uniform(shape, 0.0, 1.0, gen, dtype);
}
Tensor rand(const Shape& shape, DType dtype) {
  return rand(shape, default_generator(), dtype);
}

Tensor uniform(const Shape& shape, double low, double high, Generator& gen, DType dtype) {
  return draw("uniform", {}, Attrs{{"shape", shape}, {"dtype", dtype}, {"low", low}, {"high", high}}, gen);
}

Tensor normal(const Shape& shape, double mean, double stddev, Generator& gen, DType dtype) {
  return draw("normal", {}, Attrs{{"shape", shape}, {"dtype", dtype}, {"mean", mean}, {"std", stddev}}, gen);
}

Tensor bernoulli(const Tensor& p, Generator& gen) {
  return draw("bernoulli", {p}, Attrs{}, gen);
}

Tensor randint(int64_t low, int64_t high, const Shape& shape, Generator& gen, DType dtype) {
  return draw("randint", {}, Attrs{{"shape", shape}, {"dtype", dtype}, {"low", low}, {"high", high}}, gen);
}

Tensor permutation(int64_t n, Generator& gen) {
  return draw("permutation", {}, Attrs{{"n", n}}, gen);
}

void register_random_ops(ir::OpRegistry& r) {
  r.add(ir::OpDef{
      .name = "uniform",
      .attrs = draw_attrs({{"shape", ir::AttrKind::Ints},
                           {"dtype", ir::AttrKind::DType},
                           {"low", ir::AttrKind::Float},
                           {"high", ir::AttrKind::Float}}),
      .traits = ir::kRandom,
      .infer = [](const std::vector<TensorType>& in, const Attrs& a) -> std::vector<TensorType> {
        return {uniform_infer(in, a)};
      },
      .reference = [](const std::vector<Array>&, const Attrs& a, const std::vector<TensorType>& out)
          -> std::vector<Array> { return {uniform_reference(a, out[0])}; },
  });
  r.add(ir::OpDef{
      .name = "normal",
      .attrs = draw_attrs({{"shape", ir::AttrKind::Ints},
                           {"dtype", ir::AttrKind::DType},
                           {"mean", ir::AttrKind::Float},
                           {"std", ir::AttrKind::Float}}),
      .traits = ir::kRandom,
      .infer = [](const std::vector<TensorType>& in, const Attrs& a) -> std::vector<TensorType> {
        return {normal_infer(in, a)};
      },
      .reference = [](const std::vector<Array>&, const Attrs& a, const std::vector<TensorType>& out)
          -> std::vector<Array> { return {normal_reference(a, out[0])}; },
  });
  r.add(ir::OpDef{
      .name = "bernoulli",
      .min_inputs = 1,
      .max_inputs = 1,
      .attrs = draw_attrs({}),
      .traits = ir::kRandom,
      .infer = [](const std::vector<TensorType>& in, const Attrs&) -> std::vector<TensorType> {
        if (!is_floating(in[0].dtype)) {
          ir::op_fail("bernoulli", in, "the probabilities must be floating (f32, f64, f16, bf16)");
        }
        return {in[0]};
      },
      .reference = [](const std::vector<Array>& in, const Attrs& a,
                      const std::vector<TensorType>&) -> std::vector<Array> { return {bernoulli_reference(in[0], a)}; },
      // A sample is piecewise constant in p: no gradient flows to the probabilities.
      .vjp = [](const ir::VjpContext&) -> std::vector<Value> { return {Value()}; },
  });
  r.add(ir::OpDef{
      .name = "randint",
      .attrs = draw_attrs({{"shape", ir::AttrKind::Ints},
                           {"dtype", ir::AttrKind::DType},
                           {"low", ir::AttrKind::Int},
                           {"high", ir::AttrKind::Int}}),
      .traits = ir::kRandom,
      .infer = [](const std::vector<TensorType>& in, const Attrs& a) -> std::vector<TensorType> {
        return {randint_infer(in, a)};
      },
      .reference = [](const std::vector<Array>&, const Attrs& a, const std::vector<TensorType>& out)
          -> std::vector<Array> { return {randint_reference(a, out[0])}; },
  });
  r.add(ir::OpDef{
      .name = "permutation",
      .attrs = draw_attrs({{"n", ir::AttrKind::Int}}),
      .traits = ir::kRandom,
      .infer = [](const std::vector<TensorType>& in, const Attrs& a) -> std::vector<TensorType> {
        if (a.get_int("n") < 0) ir::op_fail("permutation", in, "n must be non-negative, got {}", a.get_int("n"));
        return {{DType::i64, {a.get_int("n")}}};
      },
      .reference = [](const std::vector<Array>&, const Attrs& a, const std::vector<TensorType>& out)
          -> std::vector<Array> { return {permutation_reference(a, out[0])}; },
  });
}

}  // namespace tessera::ops
