#include "tessera/ir/attr.h"

#include <cmath>
#include <cstring>

#include <fmt/format.h>

namespace tessera::ir {

const char* attr_kind_name(AttrKind kind) {
  switch (kind) {
    case AttrKind::Int: return "int";
    case AttrKind::Float: return "float";
    case AttrKind::Bool: return "bool";
    case AttrKind::String: return "string";
    case AttrKind::Ints: return "int list";
    case AttrKind::Floats: return "float list";
    case AttrKind::DType: return "dtype";
    case AttrKind::Tensor: return "tensor";
  }
  return "?";
}

AttrKind attr_kind_of(const AttrValue& v) { return static_cast<AttrKind>(v.index()); }

const AttrValue& Attrs::at(const std::string& name, AttrKind kind) const {
  auto it = values_.find(name);
  TESSERA_CHECK(it != values_.end(), "attribute '{}' is missing (expected a {})", name, attr_kind_name(kind));
  TESSERA_CHECK(attr_kind_of(it->second) == kind, "attribute '{}' is a {}, expected a {}", name,
                attr_kind_name(attr_kind_of(it->second)), attr_kind_name(kind));
  return it->second;
}

int64_t Attrs::get_int(const std::string& name) const { return std::get<int64_t>(at(name, AttrKind::Int)); }
double Attrs::get_float(const std::string& name) const {
  auto it = values_.find(name);
  if (it != values_.end() && attr_kind_of(it->second) == AttrKind::Int) {
    return static_cast<double>(std::get<int64_t>(it->second));
  }
  return std::get<double>(at(name, AttrKind::Float));
}
bool Attrs::get_bool(const std::string& name) const { return std::get<bool>(at(name, AttrKind::Bool)); }
const std::string& Attrs::get_string(const std::string& name) const {
  return std::get<std::string>(at(name, AttrKind::String));
}
const std::vector<int64_t>& Attrs::get_ints(const std::string& name) const {
  return std::get<std::vector<int64_t>>(at(name, AttrKind::Ints));
}
const std::vector<double>& Attrs::get_floats(const std::string& name) const {
  return std::get<std::vector<double>>(at(name, AttrKind::Floats));
}
DType Attrs::get_dtype(const std::string& name) const { return std::get<DType>(at(name, AttrKind::DType)); }
const Array& Attrs::get_tensor(const std::string& name) const { return std::get<Array>(at(name, AttrKind::Tensor)); }

namespace {
bool arrays_equal(const Array& a, const Array& b) {
  if (a.dtype() != b.dtype() || a.shape() != b.shape()) return false;
  if (a.shares_storage_with(b) && a.offset() == b.offset() && a.strides() == b.strides()) return true;
  Array ca = a.contiguous(), cb = b.contiguous();
  return std::memcmp(ca.raw_data(), cb.raw_data(), ca.nbytes()) == 0;
}
}  // namespace

bool Attrs::operator==(const Attrs& other) const {
  if (values_.size() != other.values_.size()) return false;
  for (auto it = values_.begin(), jt = other.values_.begin(); it != values_.end(); ++it, ++jt) {
    if (it->first != jt->first || it->second.index() != jt->second.index()) return false;
    const bool same = std::visit(
        [&](const auto& x) {
          using V = std::decay_t<decltype(x)>;
          const V& y = std::get<V>(jt->second);
          if constexpr (std::is_same_v<V, Array>) {
            return arrays_equal(x, y);
          } else {
            return x == y;
          }
        },
        it->second);
    if (!same) return false;
  }
  return true;
}

namespace {
std::string float_str(double v) {
  // Shortest text that reads back to the same double, always with a '.' or exponent so that the
  // parser can tell it from an integer.
  if (std::isnan(v)) return "nan";  // the sign of a NaN carries no meaning and would not parse back
  std::string s = fmt::format("{}", v);
  if (s.find_first_of(".eEn") == std::string::npos) s += ".0";  // 'n' covers nan and inf
  return s;
}

std::string tensor_str(const Array& a) {
  // dense<f32[2,2], 0x...>: raw little-endian bytes in hex, so the text round-trips exactly.
  Array c = a.contiguous();
  const auto* bytes = static_cast<const unsigned char*>(c.raw_data());
  std::string hex;
  hex.reserve(c.nbytes() * 2);
  static const char* digits = "0123456789abcdef";
  for (size_t i = 0; i < c.nbytes(); ++i) {
    hex += digits[bytes[i] >> 4];
    hex += digits[bytes[i] & 15];
  }
  std::string dims;
  for (size_t i = 0; i < a.shape().size(); ++i) dims += (i ? "," : "") + std::to_string(a.shape()[i]);
  return fmt::format("dense<{}[{}], 0x{}>", dtype_name(a.dtype()), dims, hex);
}
}  // namespace

std::string attr_value_str(const AttrValue& v) {
  switch (attr_kind_of(v)) {
    case AttrKind::Int: return std::to_string(std::get<int64_t>(v));
    case AttrKind::Float: return float_str(std::get<double>(v));
    case AttrKind::Bool: return std::get<bool>(v) ? "true" : "false";
    case AttrKind::String: {
      std::string out = "\"";
      for (char c : std::get<std::string>(v)) {
        if (c == '"' || c == '\\') out += '\\';
        if (c == '\n') {
          out += "\\n";
          continue;
        }
        out += c;
      }
      return out + "\"";
    }
    case AttrKind::Ints: {
      std::string out = "[";
      const auto& xs = std::get<std::vector<int64_t>>(v);
      for (size_t i = 0; i < xs.size(); ++i) out += (i ? ", " : "") + std::to_string(xs[i]);
      return out + "]";
    }
    case AttrKind::Floats: {
      std::string out = "[";
      const auto& xs = std::get<std::vector<double>>(v);
      for (size_t i = 0; i < xs.size(); ++i) out += (i ? ", " : "") + float_str(xs[i]);
      return out + "]";
    }
    case AttrKind::DType: return dtype_name(std::get<DType>(v));
    case AttrKind::Tensor: return tensor_str(std::get<Array>(v));
  }
  return "?";
}

}  // namespace tessera::ir
