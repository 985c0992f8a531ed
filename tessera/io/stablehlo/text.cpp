#include "tessera/io/stablehlo/text.h"

#include <fmt/format.h>

#include <cmath>
#include <cstdlib>
#include <cstring>

namespace tessera::io::stablehlo {

std::string element_type(DType dt) {
  switch (dt) {
    case DType::f32:
      return "f32";
    case DType::f64:
      return "f64";
    case DType::f16:
      return "f16";
    case DType::bf16:
      return "bf16";
    case DType::i8:
      return "i8";
    case DType::i32:
      return "i32";
    case DType::i64:
      return "i64";
    case DType::u8:
      return "ui8";
    case DType::boolean:
      return "i1";
  }
  fail("stablehlo export: no element type for dtype {}", dtype_name(dt));
}

bool is_float_element(const std::string& elem) {
  return elem == "f32" || elem == "f64" || elem == "f16" || elem == "bf16";
}

bool is_unsigned_element(const std::string& elem) {
  return elem == "i1" || elem.rfind("ui", 0) == 0;
}

int element_bits(const std::string& elem) {
  if (elem == "i1") return 1;
  const size_t digits = elem.find_first_of("0123456789");
  TESSERA_CHECK(digits != std::string::npos, "stablehlo export: element type '{}' has no width", elem);
  return std::atoi(elem.c_str() + digits);
}

std::string tensor_type(const std::string& elem, const Shape& shape) {
  std::string out = "tensor<";
  for (int64_t d : shape) out += fmt::format("{}x", d);
  return out + elem + ">";
}

std::string tensor_type(const ir::TensorType& t) {
  return tensor_type(element_type(t.dtype), t.shape);
}

std::string int_list(const std::vector<int64_t>& v) {
  return fmt::format("[{}]", fmt::join(v, ", "));
}

std::string array_i64(const std::vector<int64_t>& v) {
  return v.empty() ? std::string("array<i64>") : fmt::format("array<i64: {}>", fmt::join(v, ", "));
}

std::string padding_attr(const std::vector<std::pair<int64_t, int64_t>>& pads) {
  std::vector<std::string> rows;
  for (const auto& [lo, hi] : pads) rows.push_back(fmt::format("[{}, {}]", lo, hi));
  return fmt::format("dense<[{}]> : tensor<{}x2xi64>", fmt::join(rows, ", "), pads.size());
}

namespace {

// The bit pattern of `value` rounded to `elem`, for the hex form of non-finite floats.
std::string hex_bits(double value, const std::string& elem) {
  if (elem == "f64") {
    uint64_t bits = 0;
    std::memcpy(&bits, &value, sizeof bits);
    return fmt::format("0x{:016X}", bits);
  }
  const float f = static_cast<float>(value);
  if (elem == "f16") return fmt::format("0x{:04X}", f32_to_f16_bits(f));
  if (elem == "bf16") return fmt::format("0x{:04X}", f32_to_bf16_bits(f));
  uint32_t bits = 0;
  std::memcpy(&bits, &f, sizeof bits);
  return fmt::format("0x{:08X}", bits);
}

// MLIR's float literal needs a '.' before any exponent ("1e-05" would lex as an integer).
std::string with_point(std::string s) {
  if (s.find('.') != std::string::npos) return s;
  const size_t e = s.find_first_of("eE");
  if (e == std::string::npos) return s + ".0";
  return s.substr(0, e) + ".0" + s.substr(e);
}

}  // namespace

std::string float_literal(double value, const std::string& elem) {
  if (!std::isfinite(value)) return hex_bits(value, elem);
  if (elem == "f64") return with_point(fmt::format("{}", value));  // shortest round-trip form
  // f32, f16 and bf16 values are exact floats: print the shortest form that reads back as the same
  // float both directly and through a double (MLIR may parse either way); else nine digits, which
  // always do.
  const auto f = static_cast<float>(value);
  std::string s = fmt::format("{}", f);
  if (static_cast<float>(std::strtod(s.c_str(), nullptr)) != f) s = fmt::format("{:.9g}", f);
  return with_point(s);
}

std::string int_literal(int64_t value, const std::string& elem) {
  if (elem == "i1") return value != 0 ? "true" : "false";
  if (is_unsigned_element(elem)) return uint_literal(static_cast<uint64_t>(value));
  return fmt::format("{}", value);
}

std::string uint_literal(uint64_t value) {
  return fmt::format("{}", value);
}

namespace {

// Element i (row-major) of a contiguous array as a literal.
std::string element_at(const Array& c, int64_t i, const std::string& elem) {
  return dispatch_dtype(c.dtype(), [&](auto tag) -> std::string {
    using T = decltype(tag);
    const T v = c.data<const T>()[i];
    if constexpr (std::is_same_v<T, bool>) {
      return v ? "true" : "false";
    } else if constexpr (std::is_same_v<T, uint8_t>) {
      return fmt::format("{}", static_cast<unsigned>(v));
    } else if constexpr (std::is_integral_v<T>) {
      return fmt::format("{}", static_cast<int64_t>(v));
    } else {
      return float_literal(static_cast<double>(static_cast<compute_t<T>>(v)), elem);
    }
  });
}

void nested_list(const Array& c, const std::string& elem, size_t axis, int64_t& flat, std::string& out) {
  if (axis == c.shape().size()) {
    out += element_at(c, flat++, elem);
    return;
  }
  out += '[';
  for (int64_t i = 0; i < c.shape()[axis]; ++i) {
    if (i > 0) out += ", ";
    nested_list(c, elem, axis + 1, flat, out);
  }
  out += ']';
}

bool all_equal_bytes(const Array& c) {
  const size_t width = dtype_size(c.dtype());
  const auto* p = static_cast<const unsigned char*>(c.raw_data());
  for (int64_t i = 1; i < c.numel(); ++i) {
    if (std::memcmp(p, p + static_cast<size_t>(i) * width, width) != 0) return false;
  }
  return true;
}

}  // namespace

std::string dense_literal(const Array& value, int64_t max_list_elements) {
  const Array c = value.contiguous();
  const std::string elem = element_type(c.dtype());
  if (c.numel() == 0) return "dense<>";
  if (all_equal_bytes(c)) return "dense<" + element_at(c, 0, elem) + ">";
  // Booleans always list: MLIR's hex form of i1 data is bit-packed, not one byte per element.
  if (c.numel() <= max_list_elements || c.dtype() == DType::boolean) {
    std::string out = "dense<";
    int64_t flat = 0;
    nested_list(c, elem, 0, flat, out);
    return out + ">";
  }
  // Raw little-endian bytes: the form MLIR prints for large constants.
  std::string out = "dense<\"0x";
  out.reserve(out.size() + c.nbytes() * 2 + 2);
  const auto* p = static_cast<const unsigned char*>(c.raw_data());
  for (size_t i = 0; i < c.nbytes(); ++i) out += fmt::format("{:02X}", p[i]);
  return out + "\">";
}

}  // namespace tessera::io::stablehlo
