#pragma once
// Typed node attributes. Each op declares its attributes (name, kind, required) in its OpDef; node
// construction checks the given attributes against that schema, so kernels can read them unchecked.
#include <cstdint>
#include <map>
#include <string>
#include <variant>
#include <vector>

#include "tessera/core/array.h"
#include "tessera/core/dtype.h"

namespace tessera::ir {

enum class AttrKind { Int, Float, Bool, String, Ints, Floats, DType, Tensor };
const char* attr_kind_name(AttrKind kind);

using AttrValue =
    std::variant<int64_t, double, bool, std::string, std::vector<int64_t>, std::vector<double>, DType, Array>;
AttrKind attr_kind_of(const AttrValue& v);

class Attrs {
 public:
  Attrs() = default;
  Attrs(std::initializer_list<std::pair<const std::string, AttrValue>> init) : values_(init) {}

  Attrs& set(const std::string& name, AttrValue value) {
    values_[name] = std::move(value);
    return *this;
  }
  bool has(const std::string& name) const { return values_.count(name) != 0; }
  const std::map<std::string, AttrValue>& values() const { return values_; }
  bool empty() const { return values_.empty(); }

  int64_t get_int(const std::string& name) const;
  double get_float(const std::string& name) const;  // an Int attribute reads as a float too
  bool get_bool(const std::string& name) const;
  const std::string& get_string(const std::string& name) const;
  const std::vector<int64_t>& get_ints(const std::string& name) const;
  const std::vector<double>& get_floats(const std::string& name) const;
  DType get_dtype(const std::string& name) const;
  const Array& get_tensor(const std::string& name) const;

  int64_t get_int_or(const std::string& name, int64_t fallback) const { return has(name) ? get_int(name) : fallback; }
  double get_float_or(const std::string& name, double fallback) const {
    return has(name) ? get_float(name) : fallback;
  }
  bool get_bool_or(const std::string& name, bool fallback) const { return has(name) ? get_bool(name) : fallback; }

  bool operator==(const Attrs& other) const;  // deep comparison (tensors compared by value)

 private:
  const AttrValue& at(const std::string& name, AttrKind kind) const;
  std::map<std::string, AttrValue> values_;
};

// Text form of one attribute value, as printed in the IR text and DOT.
std::string attr_value_str(const AttrValue& v);

}  // namespace tessera::ir
