#pragma once
// GGUF metadata values: the 13 value types of the format, arrays of any of them (arrays of arrays
// included). Scalars widen to one C++ type per family (unsigned -> uint64_t, signed -> int64_t,
// f64 -> double) while `type()` remembers the exact GGUF type, so a file read and written back
// keeps every value's type and bits (f32 values stay floats so that even NaN payloads survive).
#include <cstdint>
#include <string>
#include <variant>
#include <vector>

namespace tessera::io::gguf {

enum class ValueType : uint32_t {
  u8 = 0,
  i8 = 1,
  u16 = 2,
  i16 = 3,
  u32 = 4,
  i32 = 5,
  f32 = 6,
  boolean = 7,
  string = 8,
  array = 9,
  u64 = 10,
  i64 = 11,
  f64 = 12,
};

const char* value_type_name(ValueType type);  // "u32", "string", "array", ...
bool is_valid_value_type(uint32_t id);
// Bytes of one encoded scalar of a fixed-size type (0 for string and array).
size_t value_type_size(ValueType type);

class Value {
 public:
  using Payload = std::variant<uint64_t, int64_t, float, double, bool, std::string, std::vector<uint64_t>,
                               std::vector<int64_t>, std::vector<float>, std::vector<double>, std::vector<bool>,
                               std::vector<std::string>, std::vector<Value>>;

  Value() : Value(ValueType::u8, uint64_t{0}) {}

  // Scalars. Out-of-range integers for the narrower types throw.
  static Value u8(uint64_t v) { return checked_unsigned(ValueType::u8, v); }
  static Value u16(uint64_t v) { return checked_unsigned(ValueType::u16, v); }
  static Value u32(uint64_t v) { return checked_unsigned(ValueType::u32, v); }
  static Value u64(uint64_t v) { return Value(ValueType::u64, v); }
  static Value i8(int64_t v) { return checked_signed(ValueType::i8, v); }
  static Value i16(int64_t v) { return checked_signed(ValueType::i16, v); }
  static Value i32(int64_t v) { return checked_signed(ValueType::i32, v); }
  static Value i64(int64_t v) { return Value(ValueType::i64, v); }
  static Value f32(float v) { return Value(ValueType::f32, v); }
  static Value f64(double v) { return Value(ValueType::f64, v); }
  static Value boolean(bool v) { return Value(ValueType::boolean, v); }
  static Value string(std::string v) { return Value(ValueType::string, std::move(v)); }

  // Arrays of one element type (the element type of an empty array is kept too).
  static Value unsigned_array(ValueType elem, std::vector<uint64_t> v);
  static Value signed_array(ValueType elem, std::vector<int64_t> v);
  static Value f32_array(std::vector<float> v);
  static Value f64_array(std::vector<double> v);
  static Value bool_array(std::vector<bool> v);
  static Value string_array(std::vector<std::string> v);
  static Value array_of_arrays(std::vector<Value> v);  // each element must itself be an array

  ValueType type() const { return type_; }
  ValueType elem_type() const { return elem_type_; }  // arrays only
  bool is_array() const { return type_ == ValueType::array; }
  const Payload& payload() const { return payload_; }

  // Typed reads that throw tessera::Error naming `what` (usually the key) and the actual type.
  uint64_t as_u64(const std::string& what = "value") const;  // any integer type, if >= 0
  int64_t as_i64(const std::string& what = "value") const;   // any integer type, if it fits
  double as_f64(const std::string& what = "value") const;    // any numeric scalar
  bool as_bool(const std::string& what = "value") const;
  const std::string& as_string(const std::string& what = "value") const;
  size_t array_size() const;  // 0 for scalars
  const std::vector<std::string>& as_strings(const std::string& what = "value") const;
  std::vector<double> as_f64s(const std::string& what = "value") const;   // numeric arrays
  std::vector<int64_t> as_i64s(const std::string& what = "value") const;  // integer arrays

  // Human-readable text for `inspect`: scalars in full (strings quoted and escaped), arrays as
  // "[u32 x 1024] [1, 2, 3, ...]" with at most `max_items` items.
  std::string to_string(size_t max_items = 8) const;

  bool operator==(const Value& other) const {
    return type_ == other.type_ && elem_type_ == other.elem_type_ && payload_ == other.payload_;
  }

 private:
  Value(ValueType type, Payload payload, ValueType elem = ValueType::u8)
      : type_(type), elem_type_(elem), payload_(std::move(payload)) {}
  static Value checked_unsigned(ValueType type, uint64_t v);
  static Value checked_signed(ValueType type, int64_t v);

  ValueType type_;
  ValueType elem_type_;
  Payload payload_;
};

}  // namespace tessera::io::gguf
