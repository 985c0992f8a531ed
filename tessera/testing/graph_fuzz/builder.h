#pragma once
// The generator's workbench, used by the recipes (recipes_*.cpp): random choices, the pool of values
// built so far with their facts, fresh leaves, and node construction (which throws tessera::Error when
// the op rejects its inputs: the generator then tries another recipe).
#include <functional>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "tessera/api/tensor.h"
#include "tessera/testing/graph_fuzz/generator.h"

namespace tessera::testing::fuzz {

// What is known of a value: every element lies in [lo, hi]; exact values are integer-valued (bools,
// integers, integer-valued floats) and small enough that backends must agree bit for bit.
struct Facts {
  double lo = 0, hi = 0;
  bool exact = false;
  double magnitude() const { return std::max(std::abs(lo), std::abs(hi)); }
};

struct Candidate {
  Tensor t;
  Facts f;
  DType dtype() const { return t.dtype(); }
  const Shape& shape() const { return t.shape(); }
  int64_t rank() const { return t.rank(); }
};

class Builder {
 public:
  Builder(uint64_t seed, const GeneratorOptions& options, bool gradient);

  // Random choices.
  int64_t integer(int64_t lo, int64_t hi);  // inclusive
  double real(double lo, double hi);
  bool chance(double p);
  template <class T>
  const T& choose(const std::vector<T>& v) {
    return v[static_cast<size_t>(integer(0, static_cast<int64_t>(v.size()) - 1))];
  }

  const GeneratorOptions& options() const { return options_; }
  bool gradient() const { return gradient_; }

  // Types.
  // A dimension in [1, hi], or up to 8 hi in a graph of large values.
  int64_t dim(int64_t hi);
  DType float_dtype();  // mostly f32
  DType int_dtype();    // i64 or i32
  Shape shape(int min_rank, int max_rank);
  // A shape that broadcasts against `s`: a suffix of it with some axes set to 1 (or s itself).
  Shape broadcastable(const Shape& s);

  // Operands: a recent value of the pool that satisfies `ok` (recent ones more likely, so graphs grow
  // deep as well as wide), or none.
  std::optional<Candidate> pick(const std::function<bool(const Candidate&)>& ok);
  // A float operand: from the pool (any shape within limits) or a fresh leaf.
  Candidate float_operand(bool exact_only = false);
  Candidate float_of_shape(const Shape& s, DType dtype, bool exact_only = false);
  // A fresh leaf: a graph input or, sometimes, a constant.
  Candidate fresh(const ir::TensorType& type, const InputSpec& spec);
  Candidate fresh_float(const Shape& s, DType dtype);    // integer-valued (exact) or uniform data
  Candidate fresh_index(const Shape& s, int64_t bound);  // integers in [0, bound)
  // Strictly positive values (x * x + 0.5): the domain of log, sqrt, division, pow.
  Candidate positive(const Candidate& x);
  // Values in [-limit, limit] (tanh(x) * limit), for exp and the like.
  Candidate bounded(const Candidate& x, double limit);

  // Results.
  void add(const Tensor& t, Facts f);
  // Facts of a result computed exactly when every operand is exact and the bounds stay within what
  // the dtype represents exactly.
  static Facts exact_if(bool exact, double lo, double hi, DType dtype);
  static double exact_limit(DType dtype);
  bool fits(const Shape& s) const;  // within max_elements

  const std::vector<Candidate>& pool() const { return pool_; }
  std::vector<InputSpec>& specs() { return specs_; }
  std::vector<Tensor>& inputs() { return inputs_; }

 private:
  std::mt19937_64 rng_;
  GeneratorOptions options_;
  bool gradient_;
  std::vector<Candidate> pool_;
  std::vector<Tensor> inputs_;
  std::vector<InputSpec> specs_;
  int leaves_ = 0;
};

using RecipeFn = void (*)(Builder&);
struct Recipe {
  std::string name;
  std::vector<std::string> ops;  // the registered ops it builds (for the coverage check)
  double weight = 1;
  RecipeFn make;
};

std::vector<Recipe> elementwise_recipes();  // recipes_elementwise.cpp
std::vector<Recipe> structure_recipes();    // recipes_structure.cpp: shapes, views, indexing, creation
std::vector<Recipe> reduction_recipes();    // recipes_reduce.cpp: reductions, softmax, scans
std::vector<Recipe> nn_recipes();           // recipes_nn.cpp: products, convolutions, pools, composites
const std::vector<Recipe>& all_recipes();

}  // namespace tessera::testing::fuzz
