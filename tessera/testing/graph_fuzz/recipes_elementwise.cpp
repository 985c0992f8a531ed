// Recipes for elementwise ops: unary math and activations, binary arithmetic with broadcasting and
// mixed dtypes, comparisons and logic, where, clamp and casts.
#include <cmath>

#include "tessera/ops/ops.h"
#include "tessera/testing/graph_fuzz/builder.h"

namespace tessera::testing::fuzz {
namespace {

// A unary float op: its domain, how it maps an interval, whether it keeps exactness, and whether it
// is a kink (its derivative jumps) or discontinuous.
struct Unary {
  const char* op;
  enum Domain { any, positive, small } domain;
  std::function<std::pair<double, double>(double, double)> range;
  bool keeps_exact = false;
  bool kink = false;
  bool discontinuous = false;
  std::function<Tensor(const Tensor&, Builder&)> apply;
};

std::pair<double, double> monotone(double (*f)(double), double lo, double hi) {
  return {f(lo), f(hi)};
}

const std::vector<Unary>& unaries() {
  using P = std::pair<double, double>;
  static const std::vector<Unary> table = {
      {"abs", Unary::any,
       [](double lo, double hi) {
         return P{lo > 0 ? lo : hi < 0 ? -hi : 0, std::max(-lo, hi)};
       },
       true, true, false, [](const Tensor& x, Builder&) { return ops::abs(x); }},
      {"neg", Unary::any,
       [](double lo, double hi) {
         return P{-hi, -lo};
       },
       true, false, false, [](const Tensor& x, Builder&) { return ops::neg(x); }},
      {"relu", Unary::any,
       [](double lo, double hi) {
         return P{std::max(lo, 0.0), std::max(hi, 0.0)};
       },
       true, true, false, [](const Tensor& x, Builder&) { return ops::relu(x); }},
      {"square", Unary::any,
       [](double lo, double hi) {
         return P{lo > 0 ? lo * lo : hi < 0 ? hi * hi : 0, std::max(lo * lo, hi * hi)};
       },
       true, false, false, [](const Tensor& x, Builder&) { return ops::square(x); }},
      {"sigmoid", Unary::any,
       [](double, double) {
         return P{0, 1};
       },
       false, false, false, [](const Tensor& x, Builder&) { return ops::sigmoid(x); }},
      {"tanh", Unary::any,
       [](double, double) {
         return P{-1, 1};
       },
       false, false, false, [](const Tensor& x, Builder&) { return ops::tanh(x); }},
      {"exp", Unary::small, [](double lo, double hi) { return monotone(std::exp, lo, hi); }, false, false, false,
       [](const Tensor& x, Builder&) { return ops::exp(x); }},
      {"expm1", Unary::small, [](double lo, double hi) { return monotone(std::expm1, lo, hi); }, false, false, false,
       [](const Tensor& x, Builder&) { return ops::expm1(x); }},
      {"log", Unary::positive, [](double lo, double hi) { return monotone(std::log, lo, hi); }, false, false, false,
       [](const Tensor& x, Builder&) { return ops::log(x); }},
      {"log1p", Unary::positive, [](double lo, double hi) { return monotone(std::log1p, lo, hi); }, false, false, false,
       [](const Tensor& x, Builder&) { return ops::log1p(x); }},
      {"sqrt", Unary::positive, [](double lo, double hi) { return monotone(std::sqrt, lo, hi); }, false, false, false,
       [](const Tensor& x, Builder&) { return ops::sqrt(x); }},
      {"rsqrt", Unary::positive,
       [](double lo, double hi) {
         return P{1 / std::sqrt(hi), 1 / std::sqrt(lo)};
       },
       false, false, false, [](const Tensor& x, Builder&) { return ops::rsqrt(x); }},
      {"reciprocal", Unary::positive,
       [](double lo, double hi) {
         return P{1 / hi, 1 / lo};
       },
       false, false, false, [](const Tensor& x, Builder&) { return ops::reciprocal(x); }},
      {"sin", Unary::any,
       [](double, double) {
         return P{-1, 1};
       },
       false, false, false, [](const Tensor& x, Builder&) { return ops::sin(x); }},
      {"cos", Unary::any,
       [](double, double) {
         return P{-1, 1};
       },
       false, false, false, [](const Tensor& x, Builder&) { return ops::cos(x); }},
      {"erf", Unary::any,
       [](double, double) {
         return P{-1, 1};
       },
       false, false, false, [](const Tensor& x, Builder&) { return ops::erf(x); }},
      {"gelu", Unary::any,
       [](double, double hi) {
         return P{-0.2, std::max(hi, 0.0)};
       },
       false, false, false, [](const Tensor& x, Builder& b) { return ops::gelu(x, b.chance(0.5)); }},
      {"silu", Unary::any,
       [](double, double hi) {
         return P{-0.3, std::max(hi, 0.0)};
       },
       false, false, false, [](const Tensor& x, Builder&) { return ops::silu(x); }},
      {"softplus", Unary::any,
       [](double, double hi) {
         return P{0, std::max(hi, 0.0) + 1};
       },
       false, false, false,
       [](const Tensor& x, Builder& b) {
         return ops::softplus(x, b.choose<double>({1, 2, 0.5}), b.choose<double>({20, 1}));
       }},
      {"elu", Unary::any,
       [](double lo, double hi) {
         return P{std::min(lo, -1.5), std::max(hi, 0.0)};
       },
       false, false, false,
       [](const Tensor& x, Builder& b) {
         return ops::elu(x, b.choose<double>({1, 0.5, 1.5}));
       }},
      {"leaky_relu", Unary::any,
       [](double lo, double hi) {
         return P{std::min(lo, 0.0), std::max(hi, 0.0)};
       },
       false, true, false,
       [](const Tensor& x, Builder& b) {
         return ops::leaky_relu(x, b.choose<double>({0.25, 0.5, 0.125}));
       }},
      {"floor", Unary::any,
       [](double lo, double hi) {
         return P{std::floor(lo), std::floor(hi)};
       },
       true, false, true, [](const Tensor& x, Builder&) { return ops::floor(x); }},
      {"ceil", Unary::any,
       [](double lo, double hi) {
         return P{std::ceil(lo), std::ceil(hi)};
       },
       true, false, true, [](const Tensor& x, Builder&) { return ops::ceil(x); }},
      {"round", Unary::any,
       [](double lo, double hi) {
         return P{std::round(lo), std::round(hi)};
       },
       true, false, true, [](const Tensor& x, Builder&) { return ops::round(x); }},
      {"sign", Unary::any,
       [](double, double) {
         return P{-1, 1};
       },
       true, false, true, [](const Tensor& x, Builder&) { return ops::sign(x); }},
  };
  return table;
}

void unary(Builder& b) {
  const Unary& u = b.choose(unaries());
  // Discontinuous ops (and kinks, when the graph is differentiated) see exact operands only.
  const bool need_exact = u.discontinuous || (u.kink && b.gradient());
  Candidate x = b.float_operand(need_exact);
  if (u.domain == Unary::positive && x.f.lo <= 0.01) x = b.positive(x);
  if (u.domain == Unary::small && x.f.magnitude() > 6) x = b.bounded(x, 4);
  const Tensor y = u.apply(x.t, b);
  auto [lo, hi] = u.range(x.f.lo, x.f.hi);
  b.add(y, Builder::exact_if(u.keeps_exact && x.f.exact, lo, hi, y.dtype()));
}

// An operand that broadcasts against `a`, from the pool or fresh, possibly of another dtype.
Candidate partner(Builder& b, const Candidate& a, bool exact_only) {
  if (b.chance(0.5)) {
    auto c = b.pick([&](const Candidate& x) {
      if (!is_floating(x.dtype()) || (exact_only && !x.f.exact) || x.t.value() == a.t.value()) return false;
      try {
        return b.fits(broadcast_shapes(a.shape(), x.shape(), "fuzz"));
      } catch (const Error&) {
        return false;
      }
    });
    if (c) return *c;
  }
  if (b.chance(0.15)) return a;  // the same value on both sides
  const DType dt = b.chance(0.85) ? a.dtype() : b.float_dtype();
  Shape s = b.broadcastable(a.shape());
  if (b.chance(0.2) && !s.empty()) {  // broadcasting on both sides: [3, 1] against [1, 4]
    Shape t = a.shape();
    const size_t d = static_cast<size_t>(b.integer(0, static_cast<int64_t>(t.size()) - 1));
    if (d < s.size()) s[s.size() - 1 - d] = 1 + b.integer(0, 2);
  }
  return b.fresh_float(s, dt);
}

void arithmetic(Builder& b) {
  const std::string op = b.choose<std::string>({"add", "sub", "mul", "add", "mul", "maximum", "minimum"});
  const bool kink = op == "maximum" || op == "minimum";
  const Candidate x = b.float_operand(kink && b.gradient());
  const Candidate y = partner(b, x, kink && b.gradient());
  const Tensor z = op == "add"       ? ops::add(x.t, y.t)
                   : op == "sub"     ? ops::sub(x.t, y.t)
                   : op == "mul"     ? ops::mul(x.t, y.t)
                   : op == "maximum" ? ops::maximum(x.t, y.t)
                                     : ops::minimum(x.t, y.t);
  double lo, hi;
  if (op == "add") {
    lo = x.f.lo + y.f.lo, hi = x.f.hi + y.f.hi;
  } else if (op == "sub") {
    lo = x.f.lo - y.f.hi, hi = x.f.hi - y.f.lo;
  } else if (op == "mul") {
    const double c[] = {x.f.lo * y.f.lo, x.f.lo * y.f.hi, x.f.hi * y.f.lo, x.f.hi * y.f.hi};
    lo = *std::min_element(c, c + 4), hi = *std::max_element(c, c + 4);
  } else {
    lo = op == "maximum" ? std::max(x.f.lo, y.f.lo) : std::min(x.f.lo, y.f.lo);
    hi = op == "maximum" ? std::max(x.f.hi, y.f.hi) : std::min(x.f.hi, y.f.hi);
  }
  b.add(z, Builder::exact_if(x.f.exact && y.f.exact, lo, hi, z.dtype()));
}

void division(Builder& b) {
  const Candidate x = b.float_operand();
  Candidate y = partner(b, x, false);
  if (y.t.value() == x.t.value() || y.f.lo <= 0.01) y = b.positive(y);
  const Tensor z = ops::div(x.t, y.t);
  const double m = x.f.magnitude() / y.f.lo;
  b.add(z, Facts{-m, m, false});
}

void power(Builder& b) {
  Candidate base = b.float_operand();
  if (base.f.lo <= 0.01) base = b.positive(base);
  if (base.f.hi > 8) base = b.positive(b.bounded(base, 2));
  Tensor e;
  Facts ef{-2, 2, false};
  if (b.chance(0.5)) {
    e = ops::scalar_like(base.t, b.choose<double>({2, 0.5, -1, 3, 1.5}));
  } else {
    const Candidate c = b.bounded(partner(b, base, false), 2);
    e = c.t;
    ef = c.f;
  }
  const Tensor z = ops::pow(base.t, e);
  const double top = std::pow(std::max(base.f.hi, 2.0), std::max(std::abs(ef.lo), std::abs(ef.hi)));
  b.add(z, Facts{0, top, false});
}

void comparison(Builder& b) {
  const std::string op = b.choose<std::string>({"eq", "ne", "lt", "le", "gt", "ge"});
  const Candidate x = b.float_operand(true);
  const Candidate y = partner(b, x, true);
  const Tensor z = op == "eq"   ? ops::eq(x.t, y.t)
                   : op == "ne" ? ops::ne(x.t, y.t)
                   : op == "lt" ? ops::lt(x.t, y.t)
                   : op == "le" ? ops::le(x.t, y.t)
                   : op == "gt" ? ops::gt(x.t, y.t)
                                : ops::ge(x.t, y.t);
  b.add(z, Facts{0, 1, true});
}

Candidate bool_operand(Builder& b) {
  if (auto c = b.pick([](const Candidate& x) { return x.dtype() == DType::boolean; }); c && b.chance(0.7)) return *c;
  return b.fresh({DType::boolean, b.shape(0, 3)}, InputSpec::boolean());
}

void logic(Builder& b) {
  const Candidate x = bool_operand(b);
  const std::string op = b.choose<std::string>({"and", "or", "not"});
  if (op == "not") return b.add(ops::logical_not(x.t), Facts{0, 1, true});
  Candidate y = bool_operand(b);
  b.add(op == "and" ? ops::logical_and(x.t, y.t) : ops::logical_or(x.t, y.t), Facts{0, 1, true});
}

void special_values(Builder& b) {
  const Candidate x = b.float_operand();
  b.add(b.chance(0.5) ? ops::isnan(x.t) : ops::isinf(x.t), Facts{0, 0, true});
}

void select(Builder& b) {
  const Candidate x = b.float_operand();
  const Candidate y = partner(b, x, false);
  Candidate c = bool_operand(b);
  if (b.chance(0.5)) {  // a condition computed from the data, as masks usually are
    const Candidate e = b.float_operand(true);
    c = Candidate{ops::gt(e.t, ops::scalar_like(e.t, 0.0)), Facts{0, 1, true}};
    b.add(c.t, c.f);
  }
  const Tensor z = ops::where(c.t, x.t, y.t);
  b.add(z, Builder::exact_if(x.f.exact && y.f.exact, std::min(x.f.lo, y.f.lo), std::max(x.f.hi, y.f.hi), z.dtype()));
}

void clamp(Builder& b) {
  const Candidate x = b.float_operand(b.gradient());
  std::optional<double> lo, hi;
  const int64_t which = b.integer(0, 2);
  if (which != 1) lo = static_cast<double>(b.integer(-2, 0));
  if (which != 0) hi = static_cast<double>(b.integer(0, 2));
  const Tensor y = ops::clamp(x.t, lo, hi);
  b.add(y, Builder::exact_if(x.f.exact, lo ? std::max(*lo, x.f.lo) : x.f.lo, hi ? std::min(*hi, x.f.hi) : x.f.hi,
                             y.dtype()));
}

void cast(Builder& b) {
  const int64_t kind = b.integer(0, 3);
  if (kind == 0) {  // float -> float
    const Candidate x = b.float_operand();
    const Tensor y = ops::cast(x.t, b.float_dtype());
    b.add(y, Builder::exact_if(x.f.exact, x.f.lo, x.f.hi, y.dtype()));
  } else if (kind == 1) {  // float -> integer or bool: a discontinuity, so exact operands only
    const Candidate x = b.float_operand(true);
    const DType to = b.choose<DType>({DType::i32, DType::i64, DType::boolean, DType::i8, DType::u8});
    if ((to == DType::u8 && x.f.lo < 0) || (to == DType::i8 && x.f.magnitude() > 127)) return;
    const Tensor y = ops::cast(x.t, to);
    b.add(y, to == DType::boolean ? Facts{0, 1, true} : Facts{x.f.lo, x.f.hi, true});
  } else {  // integer or bool -> float
    auto x = b.pick([](const Candidate& c) { return !is_floating(c.dtype()); });
    if (!x) return;
    const Tensor y = ops::cast(x->t, b.float_dtype());
    b.add(y, Builder::exact_if(true, x->f.lo, x->f.hi, y.dtype()));
  }
}

// Integer arithmetic: the same ops on i32/i64 data.
void integer_arithmetic(Builder& b) {
  auto x = b.pick([](const Candidate& c) { return c.dtype() == DType::i32 || c.dtype() == DType::i64; });
  Candidate a = x ? *x : b.fresh({b.int_dtype(), b.shape(0, 3)}, InputSpec::integers(-4, 4));
  if (a.f.magnitude() > 1e6) return;
  Candidate c = b.fresh({a.dtype(), b.broadcastable(a.shape())}, InputSpec::integers(-3, 3));
  const std::string op = b.choose<std::string>({"add", "sub", "mul", "maximum", "neg", "abs"});
  const Tensor y = op == "add"       ? ops::add(a.t, c.t)
                   : op == "sub"     ? ops::sub(a.t, c.t)
                   : op == "mul"     ? ops::mul(a.t, c.t)
                   : op == "maximum" ? ops::maximum(a.t, c.t)
                   : op == "neg"     ? ops::neg(a.t)
                                     : ops::abs(a.t);
  const double m = a.f.magnitude() * 3 + 3;
  b.add(y, Facts{-m, m, true});
}

}  // namespace

std::vector<Recipe> elementwise_recipes() {
  std::vector<std::string> unary_ops;
  for (const Unary& u : unaries()) unary_ops.push_back(u.op);
  return {
      {"unary", unary_ops, 6, unary},
      {"arithmetic", {"add", "sub", "mul", "maximum", "minimum"}, 6, arithmetic},
      {"division", {"div", "mul", "add"}, 1.5, division},
      {"power", {"pow"}, 1, power},
      {"comparison", {"eq", "ne", "lt", "le", "gt", "ge"}, 1.5, comparison},
      {"logic", {"logical_and", "logical_or", "logical_not"}, 0.7, logic},
      {"special_values", {"isnan", "isinf"}, 0.4, special_values},
      {"where", {"where", "gt"}, 1.5, select},
      {"clamp", {"clamp"}, 1, clamp},
      {"cast", {"cast"}, 1.5, cast},
      {"integer_arithmetic", {"add", "sub", "mul", "maximum", "neg", "abs"}, 0.8, integer_arithmetic},
  };
}

}  // namespace tessera::testing::fuzz
