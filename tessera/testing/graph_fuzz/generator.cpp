// generate_graph: leaves, then recipes drawn by weight until the op budget is spent, then a few
// outputs (the last values built, and random others), and for gradient graphs the gradient of a
// random projection of the float outputs with respect to the float inputs.
#include "tessera/testing/graph_fuzz/generator.h"

#include <algorithm>
#include <cmath>
#include <unordered_set>

#include "tessera/autodiff/grad.h"
#include "tessera/ir/op_def.h"
#include "tessera/ops/ops.h"
#include "tessera/testing/graph_fuzz/builder.h"

namespace tessera::testing::fuzz {

Builder::Builder(uint64_t seed, const GeneratorOptions& options, bool gradient)
    : rng_(seed), options_(options), gradient_(gradient) {}

int64_t Builder::integer(int64_t lo, int64_t hi) {
  return std::uniform_int_distribution<int64_t>(lo, hi)(rng_);
}
double Builder::real(double lo, double hi) {
  return std::uniform_real_distribution<double>(lo, hi)(rng_);
}
bool Builder::chance(double p) {
  return real(0, 1) < p;
}

DType Builder::float_dtype() {
  const int64_t r = integer(0, 9);
  return r < 6 ? DType::f32 : r < 8 ? DType::f64 : r < 9 ? DType::f16 : DType::bf16;
}
DType Builder::int_dtype() {
  return chance(0.7) ? DType::i64 : DType::i32;
}

Shape Builder::shape(int min_rank, int max_rank) {
  for (;;) {
    const int64_t rank = integer(min_rank, std::max(min_rank, std::min(max_rank, options_.max_rank)));
    Shape s;
    for (int64_t d = 0; d < rank; ++d) s.push_back(chance(0.03) ? 0 : integer(1, options_.max_dim));
    if (fits(s)) return s;
  }
}

Shape Builder::broadcastable(const Shape& s) {
  if (chance(0.4)) return s;
  const auto keep = static_cast<size_t>(integer(0, static_cast<int64_t>(s.size())));
  Shape out(s.end() - static_cast<long>(keep), s.end());
  for (int64_t& d : out) {
    if (chance(0.4)) d = 1;
  }
  return out;
}

int64_t Builder::dim(int64_t hi) { return integer(1, options_.max_dim > 5 ? hi * 8 : hi); }

bool Builder::fits(const Shape& s) const {
  return shape_numel(s) <= options_.max_elements;
}

std::optional<Candidate> Builder::pick(const std::function<bool(const Candidate&)>& ok) {
  std::vector<size_t> matches;
  for (size_t i = 0; i < pool_.size(); ++i) {
    if (ok(pool_[i])) matches.push_back(i);
  }
  if (matches.empty()) return std::nullopt;
  // Recent values are likelier: the draw is the maximum of two uniform picks.
  const int64_t n = static_cast<int64_t>(matches.size());
  const int64_t a = integer(0, n - 1), b = integer(0, n - 1);
  return pool_[matches[static_cast<size_t>(std::max(a, b))]];
}

Candidate Builder::float_operand(bool exact_only) {
  if (!chance(0.2)) {
    auto c = pick([&](const Candidate& x) { return is_floating(x.dtype()) && (!exact_only || x.f.exact); });
    if (c) return *c;
  }
  return fresh_float(shape(0, options_.max_rank), float_dtype());
}

Candidate Builder::float_of_shape(const Shape& s, DType dtype, bool exact_only) {
  if (!chance(0.3)) {
    auto c = pick(
        [&](const Candidate& x) { return x.shape() == s && is_floating(x.dtype()) && (!exact_only || x.f.exact); });
    if (c) return *c;
  }
  return fresh_float(s, dtype);
}

Candidate Builder::fresh(const ir::TensorType& type, const InputSpec& spec) {
  Facts f;
  f.lo = spec.kind == InputSpec::Kind::boolean ? 0 : spec.lo;
  f.hi = spec.kind == InputSpec::Kind::boolean ? 1 : spec.hi;
  f.exact = spec.kind != InputSpec::Kind::uniform;
  Tensor t;
  if (chance(options_.constant_probability)) {
    t = Tensor::from_array(make_input(type, spec, static_cast<uint64_t>(integer(0, 1 << 30))));
  } else {
    t = Tensor::placeholder(fmt::format("x{}", leaves_), type.dtype, type.shape);
    inputs_.push_back(t);
    specs_.push_back(spec);
  }
  ++leaves_;
  Candidate c{t, f};
  pool_.push_back(c);
  return c;
}

Candidate Builder::fresh_float(const Shape& s, DType dtype) {
  if (chance(0.5)) return fresh({dtype, s}, InputSpec::integers(-3, 3));
  return fresh({dtype, s}, InputSpec::uniform(-2, 2));
}

Candidate Builder::fresh_index(const Shape& s, int64_t bound) {
  return fresh({int_dtype(), s}, InputSpec::integers(0, std::max<int64_t>(bound, 1) - 1));
}

Candidate Builder::positive(const Candidate& x) {
  const Tensor y = x.t * x.t + 0.5;
  const double m = x.f.magnitude();
  Facts f{0.5, m * m + 0.5, false};
  add(y, f);
  return Candidate{y, f};
}

Candidate Builder::bounded(const Candidate& x, double limit) {
  if (x.f.magnitude() <= limit) return x;
  const Tensor y = ops::tanh(x.t) * limit;
  Facts f{-limit, limit, false};
  add(y, f);
  return Candidate{y, f};
}

void Builder::add(const Tensor& t, Facts f) {
  if (!f.exact && !is_floating(t.dtype())) f.exact = true;  // integers and bools are exact by nature
  pool_.push_back(Candidate{t, f});
}

double Builder::exact_limit(DType dtype) {
  switch (dtype) {
    case DType::f64:
      return 9.0e15;
    case DType::f32:
      return 1.6e7;
    case DType::f16:
      return 2048;
    case DType::bf16:
      return 256;
    case DType::i32:
      return 1.0e9;
    case DType::i64:
      return 1.0e15;
    case DType::i8:
      return 127;
    case DType::u8:
      return 255;
    case DType::boolean:
      return 1;
  }
  return 0;
}

Facts Builder::exact_if(bool exact, double lo, double hi, DType dtype) {
  const double limit = exact_limit(dtype);
  return Facts{lo, hi, exact && std::abs(lo) <= limit && std::abs(hi) <= limit};
}

const std::vector<Recipe>& all_recipes() {
  static const std::vector<Recipe> all = [] {
    std::vector<Recipe> r = elementwise_recipes();
    for (auto* family : {&structure_recipes, &reduction_recipes, &nn_recipes}) {
      for (Recipe& x : family()) r.push_back(std::move(x));
    }
    return r;
  }();
  return all;
}

std::vector<std::string> recipe_names() {
  std::vector<std::string> names;
  for (const Recipe& r : all_recipes()) names.push_back(r.name);
  return names;
}

std::set<std::string> generated_ops() {
  std::set<std::string> ops{"input", "constant"};
  for (const Recipe& r : all_recipes()) ops.insert(r.ops.begin(), r.ops.end());
  return ops;
}

namespace {

std::vector<const Recipe*> selected_recipes(const GeneratorOptions& options) {
  std::vector<const Recipe*> out;
  for (const Recipe& r : all_recipes()) {
    if (options.only.empty() || std::find(options.only.begin(), options.only.end(), r.name) != options.only.end()) {
      out.push_back(&r);
    }
  }
  TESSERA_CHECK(!out.empty(), "graph fuzzer: no recipe matches the selection");
  return out;
}

const Recipe& draw(Builder& b, const std::vector<const Recipe*>& recipes) {
  double total = 0;
  for (const Recipe* r : recipes) total += r->weight;
  double x = b.real(0, total);
  for (const Recipe* r : recipes) {
    if ((x -= r->weight) <= 0) return *r;
  }
  return *recipes.back();
}

// The scalar whose gradient is taken: each float output against a fixed random weight.
Tensor projection(Builder& b, const std::vector<Tensor>& outputs) {
  Tensor total;
  for (const Tensor& y : outputs) {
    if (!is_floating(y.dtype())) continue;
    const Array w =
        make_input({y.dtype(), y.shape()}, InputSpec::integers(-2, 2), static_cast<uint64_t>(b.integer(0, 1 << 30)));
    Tensor term = ops::cast(ops::sum(y * Tensor::from_array(w)), DType::f64);
    total = total.defined() ? total + term : term;
  }
  return total;
}

}  // namespace

GeneratedGraph generate_graph(uint64_t seed, const GeneratorOptions& options) {
  std::mt19937_64 seeder(seed);
  const bool gradient = std::uniform_real_distribution<double>(0, 1)(seeder) < options.gradient_probability;
  GeneratorOptions sizes = options;
  if (std::uniform_real_distribution<double>(0, 1)(seeder) < options.large_probability) {
    sizes.max_dim = 48;
    sizes.max_elements = 1 << 16;
    sizes.max_ops = std::min(options.max_ops, 6);
    sizes.min_ops = std::min(sizes.min_ops, sizes.max_ops);
  }
  Builder b(seeder(), sizes, gradient);
  const std::vector<const Recipe*> recipes = selected_recipes(options);
  GeneratedGraph out;
  out.gradient = gradient;
  const int64_t budget = b.integer(sizes.min_ops, sizes.max_ops);
  int applied = 0;
  for (int attempts = 0; applied < budget && attempts < 20 * budget + 40; ++attempts) {
    const Recipe& r = draw(b, recipes);
    const size_t before = b.pool().size();
    try {
      r.make(b);
    } catch (const Error&) {
      // The op rejected what the recipe proposed (shapes, attributes): draw again. Values the recipe
      // did build stay in the pool; they are valid nodes.
    }
    if (b.pool().size() > before) {
      out.recipes.push_back(r.name);
      ++applied;
    }
  }
  // Outputs: the computed values nothing else consumes (newest first, at most four), so most of what
  // was built stays in the graph, and sometimes an intermediate that is also consumed (fan-out to an
  // output).
  std::vector<Tensor> outputs;
  std::vector<bool> exact;
  const std::vector<Candidate>& pool = b.pool();
  std::unordered_set<const ir::Node*> consumed;
  for (const Candidate& c : pool) {
    for (const ir::Value& in : c.t.value().node()->inputs()) consumed.insert(in.node().get());
  }
  std::unordered_set<const ir::Node*> chosen;
  auto take = [&](const Candidate& c) {
    if (c.t.value().node()->is_leaf() || !chosen.insert(c.t.value().node().get()).second) return;
    outputs.push_back(c.t);
    exact.push_back(c.f.exact);
  };
  for (size_t i = pool.size(); i-- > 0 && outputs.size() < 4;) {
    if (!consumed.count(pool[i].t.value().node().get())) take(pool[i]);
  }
  if (!pool.empty() && b.chance(0.3))
    take(pool[static_cast<size_t>(b.integer(0, static_cast<int64_t>(pool.size()) - 1))]);
  if (outputs.empty()) {  // nothing was built: one op on a fresh input
    const Candidate x = b.fresh_float(b.shape(1, 2), DType::f32);
    outputs.push_back(ops::neg(x.t));
    exact.push_back(x.f.exact);
  }
  if (gradient) {
    std::vector<ir::Value> wrt;
    for (const Tensor& in : b.inputs()) {
      if (is_floating(in.dtype())) wrt.push_back(in.value());
    }
    const Tensor loss = projection(b, outputs);
    if (!wrt.empty() && loss.defined()) {
      try {
        const std::vector<ir::Value> grads = autodiff::vjp({loss.value()}, {ops::ones_like(loss).value()}, wrt);
        for (const ir::Value& g : grads) {
          if (!g.defined()) continue;
          outputs.push_back(Tensor(g));
          exact.push_back(false);
        }
      } catch (const Error&) {
        out.gradient = false;  // an op on the way has no gradient rule: keep the forward graph
      }
    } else {
      out.gradient = false;
    }
  }
  std::vector<ir::Value> inputs, outs;
  for (const Tensor& t : b.inputs()) inputs.push_back(t.value());
  for (const Tensor& t : outputs) outs.push_back(t.value());
  out.graph = ir::Graph::build(inputs, outs, "fuzz");
  // Inputs that no output depends on are still inputs of the graph: keep their specs aligned.
  out.specs = b.specs();
  out.exact = exact;
  return out;
}

const std::map<std::string, std::string>& ops_not_generated() {
  static const std::map<std::string, std::string> reasons{};
  return reasons;
}

}  // namespace tessera::testing::fuzz
