#include "tessera/testing/graph_fuzz/input_spec.h"

#include <charconv>
#include <random>

#include "tessera/core/error.h"

namespace tessera::testing::fuzz {
namespace {

double number(std::string_view text, std::string_view whole) {
  double v = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  TESSERA_CHECK(ec == std::errc() && end == text.data() + text.size(),
                "input spec '{}': '{}' is not a number (expected int:LO:HI, uniform:LO:HI or bool)", whole, text);
  return v;
}

}  // namespace

std::string InputSpec::str() const {
  switch (kind) {
    case Kind::integers:
      return fmt::format("int:{}:{}", static_cast<int64_t>(lo), static_cast<int64_t>(hi));
    case Kind::uniform:
      return fmt::format("uniform:{}:{}", lo, hi);
    case Kind::boolean:
      return "bool";
  }
  return "?";
}

InputSpec InputSpec::parse(std::string_view text) {
  if (text == "bool") return boolean();
  const size_t a = text.find(':');
  const size_t b = a == std::string_view::npos ? a : text.find(':', a + 1);
  TESSERA_CHECK(b != std::string_view::npos, "input spec '{}': expected int:LO:HI, uniform:LO:HI or bool", text);
  const std::string_view kind = text.substr(0, a);
  const double lo = number(text.substr(a + 1, b - a - 1), text), hi = number(text.substr(b + 1), text);
  TESSERA_CHECK(lo <= hi, "input spec '{}': the low end exceeds the high end", text);
  if (kind == "int") return integers(static_cast<int64_t>(lo), static_cast<int64_t>(hi));
  if (kind == "uniform") return uniform(lo, hi);
  fail("input spec '{}': unknown kind '{}' (expected int, uniform or bool)", text, kind);
}

Array make_input(const ir::TensorType& type, const InputSpec& spec, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<double> values(static_cast<size_t>(type.numel()));
  switch (spec.kind) {
    case InputSpec::Kind::integers: {
      std::uniform_int_distribution<int64_t> dist(static_cast<int64_t>(spec.lo), static_cast<int64_t>(spec.hi));
      for (double& v : values) v = static_cast<double>(dist(rng));
      break;
    }
    case InputSpec::Kind::uniform: {
      std::uniform_real_distribution<double> dist(spec.lo, spec.hi);
      for (double& v : values) v = dist(rng);
      break;
    }
    case InputSpec::Kind::boolean:
      for (double& v : values) v = static_cast<double>(rng() & 1);
      break;
  }
  return Array::from_vector(values, type.shape).astype(type.dtype);
}

std::vector<Array> make_inputs(const std::vector<ir::TensorType>& types, const std::vector<InputSpec>& specs,
                               uint64_t seed) {
  TESSERA_CHECK(types.size() == specs.size(), "make_inputs: {} input types but {} specs", types.size(), specs.size());
  std::vector<Array> out;
  for (size_t i = 0; i < types.size(); ++i) out.push_back(make_input(types[i], specs[i], seed * 1000003 + i));
  return out;
}

}  // namespace tessera::testing::fuzz
