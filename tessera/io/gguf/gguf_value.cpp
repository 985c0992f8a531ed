#include "tessera/io/gguf/gguf_value.h"

#include <fmt/format.h>

#include <limits>

#include "tessera/core/error.h"
#include "tessera/core/printable.h"

namespace tessera::io::gguf {

namespace {

bool is_unsigned(ValueType t) {
  return t == ValueType::u8 || t == ValueType::u16 || t == ValueType::u32 || t == ValueType::u64;
}
bool is_signed(ValueType t) {
  return t == ValueType::i8 || t == ValueType::i16 || t == ValueType::i32 || t == ValueType::i64;
}

[[noreturn]] void wrong_type(const std::string& what, const Value& v, const char* expected) {
  std::string actual = value_type_name(v.type());
  if (v.is_array()) actual += fmt::format(" of {}", value_type_name(v.elem_type()));
  fail("{}: expected {}, but the value is {}", what, expected, actual);
}

}  // namespace

const char* value_type_name(ValueType type) {
  switch (type) {
    case ValueType::u8:
      return "u8";
    case ValueType::i8:
      return "i8";
    case ValueType::u16:
      return "u16";
    case ValueType::i16:
      return "i16";
    case ValueType::u32:
      return "u32";
    case ValueType::i32:
      return "i32";
    case ValueType::f32:
      return "f32";
    case ValueType::boolean:
      return "bool";
    case ValueType::string:
      return "string";
    case ValueType::array:
      return "array";
    case ValueType::u64:
      return "u64";
    case ValueType::i64:
      return "i64";
    case ValueType::f64:
      return "f64";
  }
  return "?";
}

bool is_valid_value_type(uint32_t id) {
  return id <= static_cast<uint32_t>(ValueType::f64);
}

size_t value_type_size(ValueType type) {
  switch (type) {
    case ValueType::u8:
    case ValueType::i8:
    case ValueType::boolean:
      return 1;
    case ValueType::u16:
    case ValueType::i16:
      return 2;
    case ValueType::u32:
    case ValueType::i32:
    case ValueType::f32:
      return 4;
    case ValueType::u64:
    case ValueType::i64:
    case ValueType::f64:
      return 8;
    case ValueType::string:
    case ValueType::array:
      return 0;
  }
  return 0;
}

Value Value::checked_unsigned(ValueType type, uint64_t v) {
  const uint64_t max = type == ValueType::u8 ? 0xFF : type == ValueType::u16 ? 0xFFFF : 0xFFFFFFFFull;
  TESSERA_CHECK(v <= max, "gguf value {} does not fit in {}", v, value_type_name(type));
  return Value(type, v);
}

Value Value::checked_signed(ValueType type, int64_t v) {
  const int bits = type == ValueType::i8 ? 8 : type == ValueType::i16 ? 16 : 32;
  const int64_t max = (int64_t{1} << (bits - 1)) - 1;
  TESSERA_CHECK(v >= -max - 1 && v <= max, "gguf value {} does not fit in {}", v, value_type_name(type));
  return Value(type, v);
}

Value Value::unsigned_array(ValueType elem, std::vector<uint64_t> v) {
  TESSERA_CHECK(is_unsigned(elem), "gguf unsigned_array: {} is not an unsigned type", value_type_name(elem));
  if (elem != ValueType::u64) {
    for (uint64_t x : v) checked_unsigned(elem, x);
  }
  return Value(ValueType::array, std::move(v), elem);
}

Value Value::signed_array(ValueType elem, std::vector<int64_t> v) {
  TESSERA_CHECK(is_signed(elem), "gguf signed_array: {} is not a signed type", value_type_name(elem));
  if (elem != ValueType::i64) {
    for (int64_t x : v) checked_signed(elem, x);
  }
  return Value(ValueType::array, std::move(v), elem);
}

Value Value::f32_array(std::vector<float> v) {
  return Value(ValueType::array, std::move(v), ValueType::f32);
}
Value Value::f64_array(std::vector<double> v) {
  return Value(ValueType::array, std::move(v), ValueType::f64);
}
Value Value::bool_array(std::vector<bool> v) {
  return Value(ValueType::array, std::move(v), ValueType::boolean);
}
Value Value::string_array(std::vector<std::string> v) {
  return Value(ValueType::array, std::move(v), ValueType::string);
}
Value Value::array_of_arrays(std::vector<Value> v) {
  for (const Value& x : v)
    TESSERA_CHECK(x.is_array(), "gguf array_of_arrays: an element is a {}", value_type_name(x.type()));
  return Value(ValueType::array, std::move(v), ValueType::array);
}

uint64_t Value::as_u64(const std::string& what) const {
  if (const auto* u = std::get_if<uint64_t>(&payload_)) return *u;
  if (const auto* i = std::get_if<int64_t>(&payload_)) {
    if (*i >= 0) return static_cast<uint64_t>(*i);
    fail("{}: expected a non-negative integer, got {}", what, *i);
  }
  wrong_type(what, *this, "an integer");
}

int64_t Value::as_i64(const std::string& what) const {
  if (const auto* i = std::get_if<int64_t>(&payload_)) return *i;
  if (const auto* u = std::get_if<uint64_t>(&payload_)) {
    if (*u <= static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) return static_cast<int64_t>(*u);
    fail("{}: {} does not fit in a signed 64-bit integer", what, *u);
  }
  wrong_type(what, *this, "an integer");
}

double Value::as_f64(const std::string& what) const {
  if (const auto* f = std::get_if<float>(&payload_)) return *f;
  if (const auto* d = std::get_if<double>(&payload_)) return *d;
  if (const auto* u = std::get_if<uint64_t>(&payload_)) return static_cast<double>(*u);
  if (const auto* i = std::get_if<int64_t>(&payload_)) return static_cast<double>(*i);
  wrong_type(what, *this, "a number");
}

bool Value::as_bool(const std::string& what) const {
  if (const auto* b = std::get_if<bool>(&payload_)) return *b;
  wrong_type(what, *this, "a bool");
}

const std::string& Value::as_string(const std::string& what) const {
  if (const auto* s = std::get_if<std::string>(&payload_)) return *s;
  wrong_type(what, *this, "a string");
}

size_t Value::array_size() const {
  if (!is_array()) return 0;
  return std::visit(
      [](const auto& p) -> size_t {
        using P = std::decay_t<decltype(p)>;
        if constexpr (requires { p.size(); } && !std::is_same_v<P, std::string>) {
          return p.size();
        } else {
          return 0;
        }
      },
      payload_);
}

const std::vector<std::string>& Value::as_strings(const std::string& what) const {
  if (const auto* s = std::get_if<std::vector<std::string>>(&payload_)) return *s;
  wrong_type(what, *this, "an array of strings");
}

std::vector<double> Value::as_f64s(const std::string& what) const {
  if (const auto* f = std::get_if<std::vector<float>>(&payload_)) return {f->begin(), f->end()};
  if (const auto* d = std::get_if<std::vector<double>>(&payload_)) return *d;
  if (const auto* u = std::get_if<std::vector<uint64_t>>(&payload_)) return {u->begin(), u->end()};
  if (const auto* i = std::get_if<std::vector<int64_t>>(&payload_)) return {i->begin(), i->end()};
  wrong_type(what, *this, "an array of numbers");
}

std::vector<int64_t> Value::as_i64s(const std::string& what) const {
  if (const auto* i = std::get_if<std::vector<int64_t>>(&payload_)) return *i;
  if (const auto* u = std::get_if<std::vector<uint64_t>>(&payload_)) {
    std::vector<int64_t> out;
    out.reserve(u->size());
    for (uint64_t x : *u) {
      TESSERA_CHECK(x <= static_cast<uint64_t>(std::numeric_limits<int64_t>::max()),
                    "{}: {} does not fit in a signed 64-bit integer", what, x);
      out.push_back(static_cast<int64_t>(x));
    }
    return out;
  }
  wrong_type(what, *this, "an array of integers");
}

std::string Value::to_string(size_t max_items) const {
  if (!is_array()) {
    return std::visit(
        [&](const auto& p) -> std::string {
          using P = std::decay_t<decltype(p)>;
          if constexpr (std::is_same_v<P, std::string>) {
            return printable_quoted(p);
          } else if constexpr (std::is_same_v<P, bool>) {
            return p ? "true" : "false";
          } else if constexpr (std::is_arithmetic_v<P>) {
            return fmt::format("{}", p);
          } else {
            return "?";
          }
        },
        payload_);
  }
  std::string out = fmt::format("[{} x {}] [", value_type_name(elem_type_), array_size());
  std::visit(
      [&](const auto& p) {
        using P = std::decay_t<decltype(p)>;
        if constexpr (!std::is_arithmetic_v<P> && !std::is_same_v<P, std::string>) {
          for (size_t i = 0; i < p.size() && i < max_items; ++i) {
            if (i > 0) out += ", ";
            if constexpr (std::is_same_v<P, std::vector<std::string>>) {
              out += printable_quoted(p[i], 40);
            } else if constexpr (std::is_same_v<P, std::vector<Value>>) {
              out += p[i].to_string(max_items);
            } else if constexpr (std::is_same_v<P, std::vector<bool>>) {
              out += p[i] ? "true" : "false";
            } else {
              out += fmt::format("{}", p[i]);
            }
          }
          if (p.size() > max_items) out += ", ...";
        }
      },
      payload_);
  return out + "]";
}

}  // namespace tessera::io::gguf
