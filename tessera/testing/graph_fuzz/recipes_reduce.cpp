// Recipes for reductions over random axes (sum, mean, max, min, prod, logsumexp, argmax/argmin),
// scans (cumsum), softmax / log_softmax, and reductions feeding elementwise chains.
#include <cmath>

#include "tessera/ops/ops.h"
#include "tessera/testing/graph_fuzz/builder.h"

namespace tessera::testing::fuzz {
namespace {

ops::Axes random_axes(Builder& b, int64_t rank) {
  ops::Axes axes;
  for (int64_t d = 0; d < rank; ++d) {
    if (b.chance(0.4)) axes.push_back(b.chance(0.2) ? d - rank : d);
  }
  return axes;  // empty: every axis
}

double reduced_count(const Shape& s, const ops::Axes& axes) {
  if (axes.empty()) return static_cast<double>(shape_numel(s));
  double n = 1;
  for (int64_t a : axes)
    n *= static_cast<double>(s[static_cast<size_t>(a < 0 ? a + static_cast<int64_t>(s.size()) : a)]);
  return n;
}

void reduce(Builder& b) {
  const std::string op = b.choose<std::string>({"sum", "sum", "mean", "max", "min", "prod", "logsumexp"});
  const bool kink = op == "max" || op == "min";
  Candidate x = b.float_operand(kink && b.gradient());
  if (op == "prod") x = b.bounded(x, 1.5);
  const ops::Axes axes = random_axes(b, x.rank());
  const bool keepdims = b.chance(0.4);
  const double n = reduced_count(x.shape(), axes);
  Tensor y;
  Facts f;
  if (op == "sum") {
    y = ops::sum(x.t, axes, keepdims);
    f = Builder::exact_if(x.f.exact, n * std::min(x.f.lo, 0.0), n * std::max(x.f.hi, 0.0), y.dtype());
  } else if (op == "mean") {
    y = ops::mean(x.t, axes, keepdims);
    f = Facts{std::min(x.f.lo, 0.0), std::max(x.f.hi, 0.0), false};
  } else if (op == "max" || op == "min") {
    if (n == 0) return;  // no identity for an empty max
    y = op == "max" ? ops::max(x.t, axes, keepdims) : ops::min(x.t, axes, keepdims);
    f = x.f;
  } else if (op == "prod") {
    y = ops::prod(x.t, axes, keepdims);
    const double m = std::pow(std::max(x.f.magnitude(), 1.0), n);
    f = Builder::exact_if(x.f.exact, -m, m, y.dtype());
  } else {
    y = ops::logsumexp(x.t, axes, keepdims);
    f = Facts{x.f.lo, x.f.hi + std::log(std::max(n, 1.0)), false};
  }
  b.add(y, f);
  if (b.chance(0.5)) {                       // a reduction feeding an elementwise chain against the unreduced value
    if (!keepdims && !axes.empty()) return;  // only a kept or scalar result broadcasts back
    const Tensor z = ops::sub(x.t, y);
    b.add(z, Facts{x.f.lo - f.hi, x.f.hi - f.lo, x.f.exact && f.exact});
  }
}

void arg_reduce(Builder& b) {
  const Candidate x = b.float_operand(true);  // ties decide the index: exact operands only
  if (x.rank() == 0 || x.t.numel() == 0) return;
  const int64_t axis = b.integer(0, x.rank() - 1);
  const Tensor y = b.chance(0.5) ? ops::argmax(x.t, axis, b.chance(0.3)) : ops::argmin(x.t, axis, b.chance(0.3));
  b.add(y, Facts{0, static_cast<double>(x.shape()[static_cast<size_t>(axis)]), true});
}

void scan(Builder& b) {
  const Candidate x = b.float_operand();
  if (x.rank() == 0) return;
  const int64_t axis = b.integer(0, x.rank() - 1);
  const Tensor y = ops::cumsum(x.t, axis, b.chance(0.3));
  const double n = static_cast<double>(x.shape()[static_cast<size_t>(axis)]);
  b.add(y, Builder::exact_if(x.f.exact, n * std::min(x.f.lo, 0.0), n * std::max(x.f.hi, 0.0), y.dtype()));
}

void softmax(Builder& b) {
  const Candidate x = b.float_operand();
  if (x.rank() == 0) return;
  const int64_t axis = b.integer(-x.rank(), x.rank() - 1);
  if (b.chance(0.5)) {
    b.add(ops::softmax(x.t, axis), Facts{0, 1, false});
  } else {
    const double n = static_cast<double>(x.shape()[static_cast<size_t>(axis < 0 ? axis + x.rank() : axis)]);
    b.add(ops::log_softmax(x.t, axis), Facts{x.f.lo - x.f.hi - std::log(std::max(n, 1.0)), 0, false});
  }
}

void moments(Builder& b) {
  const Candidate x = b.float_operand();
  if (x.t.numel() < 2) return;
  const ops::Axes axes = random_axes(b, x.rank());
  const bool keepdims = b.chance(0.5);
  const double spread = x.f.hi - x.f.lo;
  if (b.chance(0.5)) {
    b.add(ops::var(x.t, axes, b.integer(0, 1), keepdims), Facts{0, spread * spread * 2, false});
  } else {
    b.add(ops::std(x.t, axes, b.integer(0, 1), keepdims), Facts{0, spread * 2, false});
  }
}

}  // namespace

std::vector<Recipe> reduction_recipes() {
  return {
      {"reduce", {"sum", "mean", "max", "min", "prod", "logsumexp", "sub"}, 4, reduce},
      {"arg_reduce", {"argmax", "argmin"}, 1, arg_reduce},
      {"scan", {"cumsum"}, 1, scan},
      {"softmax", {"softmax", "log_softmax"}, 1.5, softmax},
      {"moments", {"mean", "sub", "square", "sum", "div", "sqrt"}, 0.6, moments},
  };
}

}  // namespace tessera::testing::fuzz
