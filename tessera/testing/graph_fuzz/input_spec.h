#pragma once
// How the graph fuzzer fills a graph input: integer values in [lo, hi] (in any dtype: integer-valued
// floats keep sums and products exact, so backends must agree bit for bit), uniform floats in [lo, hi],
// or random bools. The text form ("int:-4:4", "uniform:-2:2", "bool") is what regression files carry.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "tessera/core/array.h"
#include "tessera/ir/node.h"

namespace tessera::testing::fuzz {

struct InputSpec {
  enum class Kind { integers, uniform, boolean };
  Kind kind = Kind::uniform;
  double lo = -1, hi = 1;

  static InputSpec integers(int64_t lo, int64_t hi) { return {Kind::integers, double(lo), double(hi)}; }
  static InputSpec uniform(double lo, double hi) { return {Kind::uniform, lo, hi}; }
  static InputSpec boolean() { return {Kind::boolean, 0, 1}; }

  std::string str() const;
  static InputSpec parse(std::string_view text);  // throws naming the text and the accepted forms
};

// Deterministic data for an input of `type`.
Array make_input(const ir::TensorType& type, const InputSpec& spec, uint64_t seed);
std::vector<Array> make_inputs(const std::vector<ir::TensorType>& types, const std::vector<InputSpec>& specs,
                               uint64_t seed);

}  // namespace tessera::testing::fuzz
