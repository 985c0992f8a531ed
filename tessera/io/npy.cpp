#include "tessera/io/npy.h"

#include <algorithm>
#include <bit>
#include <cstring>
#include <limits>
#include <optional>
#include <string_view>

#include "tessera/core/printable.h"
#include "tessera/io/atomic_file.h"

namespace tessera::io {

static_assert(std::endian::native == std::endian::little, "npy I/O assumes a little-endian host");

namespace {

constexpr char kMagic[] = "\x93NUMPY";
constexpr size_t kMagicLen = 6;
constexpr size_t kAlign = 64;  // NumPy pads the header so the data starts 64-byte aligned

struct NpyType {
  char kind;
  int size;
  DType dtype;
};
constexpr NpyType kTypes[] = {{'f', 4, DType::f32}, {'f', 8, DType::f64},    {'f', 2, DType::f16},
                              {'i', 1, DType::i8},  {'i', 4, DType::i32},    {'i', 8, DType::i64},
                              {'u', 1, DType::u8},  {'b', 1, DType::boolean}};
constexpr const char* kTypeList = "<f4 <f8 <f2 |i1 <i4 <i8 |u1 |b1 (any byte order)";

std::string descr_for(DType dtype) {
  switch (dtype) {
    case DType::f32:
    case DType::bf16:
      return "<f4";
    case DType::f64:
      return "<f8";
    case DType::f16:
      return "<f2";
    case DType::i8:
      return "|i1";
    case DType::i32:
      return "<i4";
    case DType::i64:
      return "<i8";
    case DType::u8:
      return "|u1";
    case DType::boolean:
      return "|b1";
  }
  fail("save_npy: unsupported dtype {}", dtype_name(dtype));
}

// --- header parsing: the tiny subset of Python literals NumPy writes ------------------------------

struct Header {
  std::optional<std::string> descr;
  std::optional<bool> fortran_order;
  std::optional<Shape> shape;
};

class HeaderParser {
 public:
  HeaderParser(std::string_view text, const std::string& what) : s_(text), what_(what) {}

  Header parse() {
    Header h;
    expect('{');
    skip_space();
    while (peek() != '}') {
      const std::string key = parse_string();
      expect(':');
      if (key == "descr") {
        set_once(h.descr, parse_string(), key);
      } else if (key == "fortran_order") {
        set_once(h.fortran_order, parse_bool(), key);
      } else if (key == "shape") {
        set_once(h.shape, parse_shape(), key);
      } else {
        error(fmt::format("unexpected key '{}' (expected exactly 'descr', 'fortran_order' and 'shape')", key));
      }
      skip_space();
      if (peek() == ',') {
        ++pos_;
        skip_space();
      } else if (peek() != '}') {
        error("expected ',' or '}' after a value");
      }
    }
    ++pos_;
    skip_space();
    if (pos_ != s_.size()) error("unexpected text after the closing '}'");
    if (!h.descr) fail("{}: the header lacks the key 'descr'", what_);
    if (!h.fortran_order) fail("{}: the header lacks the key 'fortran_order'", what_);
    if (!h.shape) fail("{}: the header lacks the key 'shape'", what_);
    return h;
  }

 private:
  [[noreturn]] void error(const std::string& message) const {
    // `message` may quote keys from the header: escaped like the header itself.
    fail("{}: malformed header at character {}: {} in {}", what_, pos_, printable(message, 300),
         printable_quoted(s_, 160));
  }
  template <class T>
  void set_once(std::optional<T>& slot, T value, const std::string& key) {
    if (slot) error(fmt::format("duplicate key '{}'", key));
    slot = std::move(value);
  }
  char peek() const { return pos_ < s_.size() ? s_[pos_] : '\0'; }
  void skip_space() {
    while (pos_ < s_.size() && (s_[pos_] == ' ' || s_[pos_] == '\t' || s_[pos_] == '\n' || s_[pos_] == '\r')) ++pos_;
  }
  void expect(char c) {
    skip_space();
    if (peek() != c) error(fmt::format("expected '{}'", c));
    ++pos_;
  }
  std::string parse_string() {
    skip_space();
    const char quote = peek();
    if (quote != '\'' && quote != '"') error("expected a quoted string");
    const size_t start = ++pos_;
    while (pos_ < s_.size() && s_[pos_] != quote) {
      if (s_[pos_] == '\\') error("escape sequences are not supported in strings");
      ++pos_;
    }
    if (pos_ >= s_.size()) error("unterminated string");
    return std::string(s_.substr(start, pos_++ - start));
  }
  bool parse_bool() {
    skip_space();
    if (s_.substr(pos_, 4) == "True") {
      pos_ += 4;
      return true;
    }
    if (s_.substr(pos_, 5) == "False") {
      pos_ += 5;
      return false;
    }
    error("expected True or False");
  }
  int64_t parse_int() {
    skip_space();
    if (peek() < '0' || peek() > '9') error("expected a non-negative integer dimension");
    int64_t v = 0;
    while (peek() >= '0' && peek() <= '9') {
      if (__builtin_mul_overflow(v, 10, &v) || __builtin_add_overflow(v, peek() - '0', &v)) {
        error("dimension too large");
      }
      ++pos_;
    }
    if (peek() == 'L') ++pos_;  // Python 2 long literals
    return v;
  }
  Shape parse_shape() {
    expect('(');
    Shape shape;
    skip_space();
    while (peek() != ')') {
      shape.push_back(parse_int());
      skip_space();
      if (peek() == ',') {
        ++pos_;
        skip_space();
      } else if (peek() != ')') {
        error("expected ',' or ')' in the shape");
      } else if (shape.size() == 1) {
        error("a one-element shape needs a trailing comma, as in (3,)");
      }
    }
    ++pos_;
    return shape;
  }

  std::string_view s_;
  const std::string& what_;
  size_t pos_ = 0;
};

struct Descr {
  DType dtype;
  bool big_endian;
};

Descr parse_descr(const std::string& descr, const std::string& what) {
  std::string_view d = descr;
  bool big = false;
  if (!d.empty() && (d[0] == '<' || d[0] == '>' || d[0] == '|' || d[0] == '=')) {
    big = d[0] == '>';
    d.remove_prefix(1);
  }
  if (d == "?") d = "b1";
  for (const NpyType& t : kTypes) {
    if (d.size() == 2 && d[0] == t.kind && d[1] - '0' == t.size) return {t.dtype, big && t.size > 1};
  }
  fail("{}: unsupported dtype descriptor '{}' (expected one of {})", what, printable(descr, 48), kTypeList);
}

void byteswap_elements(uint8_t* p, int64_t count, size_t size) {
  for (int64_t i = 0; i < count; ++i, p += size) std::reverse(p, p + size);
}

}  // namespace

std::string serialize_npy(const Array& input) {
  TESSERA_CHECK(input.defined(), "save_npy: undefined array");
  const Array a = (input.dtype() == DType::bf16 ? input.astype(DType::f32) : input).contiguous();
  std::string dict = "{'descr': '" + descr_for(a.dtype()) + "', 'fortran_order': False, 'shape': (";
  for (size_t i = 0; i < a.shape().size(); ++i) dict += (i ? ", " : "") + std::to_string(a.shape()[i]);
  dict += a.shape().size() == 1 ? ",), }" : "), }";
  // Version 1.0 stores the header length in 16 bits; very high ranks need version 2.0 (32 bits).
  const bool v2 = dict.size() + 1 + kMagicLen + 4 + kAlign > 65535;
  const size_t prefix = kMagicLen + 2 + (v2 ? 4 : 2);
  const size_t padded = (prefix + dict.size() + 1 + kAlign - 1) / kAlign * kAlign - prefix;
  dict.append(padded - dict.size() - 1, ' ');
  dict += '\n';
  std::string out(kMagic, kMagicLen);
  out += static_cast<char>(v2 ? 2 : 1);
  out += '\0';
  for (int i = 0; i < (v2 ? 4 : 2); ++i) out += static_cast<char>((padded >> (8 * i)) & 0xff);
  out += dict;
  out.append(static_cast<const char*>(a.raw_data()), a.nbytes());
  return out;
}

void save_npy(const std::string& path, const Array& array) {
  write_file_atomic(path, serialize_npy(array));
}

Array load_npy_from_memory(const uint8_t* data, size_t size, const std::string& what) {
  TESSERA_CHECK(size >= kMagicLen + 2 && std::memcmp(data, kMagic, kMagicLen) == 0,
                "{}: not a .npy file (expected it to start with \"\\x93NUMPY\" and a version)", what);
  const uint8_t major = data[kMagicLen], minor = data[kMagicLen + 1];
  TESSERA_CHECK((major == 1 || major == 2 || major == 3) && minor == 0,
                "{}: unsupported .npy format version {}.{} (expected 1.0, 2.0 or 3.0)", what, major, minor);
  const size_t len_bytes = major == 1 ? 2 : 4;
  const size_t prefix = kMagicLen + 2 + len_bytes;
  TESSERA_CHECK(size >= prefix, "{}: truncated: {} bytes is too short for the header length", what, size);
  uint64_t header_len = 0;
  for (size_t i = 0; i < len_bytes; ++i) header_len |= static_cast<uint64_t>(data[kMagicLen + 2 + i]) << (8 * i);
  TESSERA_CHECK(header_len <= size - prefix, "{}: truncated: the header needs {} bytes but only {} follow", what,
                header_len, size - prefix);
  const std::string_view text(reinterpret_cast<const char*>(data + prefix), header_len);
  const Header h = HeaderParser(text, what).parse();
  const Descr descr = parse_descr(*h.descr, what);

  // Strides multiply the non-zero dimensions, so those must not overflow even when a zero makes numel 0.
  int64_t numel = 1, extent = 1;
  for (int64_t d : *h.shape) {
    TESSERA_CHECK(!__builtin_mul_overflow(extent, std::max<int64_t>(d, 1), &extent),
                  "{}: the element count of shape {} overflows 64 bits", what, shape_str(*h.shape));
    numel *= d;
  }
  uint64_t nbytes = 0;
  TESSERA_CHECK(!__builtin_mul_overflow(static_cast<uint64_t>(numel), dtype_size(descr.dtype), &nbytes),
                "{}: the byte size of shape {} overflows 64 bits", what, shape_str(*h.shape));
  const uint64_t available = size - prefix - header_len;
  TESSERA_CHECK(available == nbytes, "{}: {}{} ('{}') needs {} data bytes but the file holds {}{}", what,
                dtype_name(descr.dtype), shape_str(*h.shape), printable(*h.descr, 48), nbytes, available,
                available < nbytes ? " (truncated?)" : "");

  // Fortran order is C order of the reversed shape; read that way, then transpose back.
  Shape stored = *h.shape;
  if (*h.fortran_order) std::reverse(stored.begin(), stored.end());
  Array a = Array::empty(descr.dtype, stored);
  uint8_t* dst = static_cast<uint8_t*>(a.raw_data());
  if (nbytes > 0) std::memcpy(dst, data + prefix + header_len, nbytes);
  if (descr.big_endian) byteswap_elements(dst, numel, dtype_size(descr.dtype));
  if (descr.dtype == DType::boolean) {
    for (int64_t i = 0; i < numel; ++i) dst[i] = dst[i] != 0;  // only 0 and 1 are valid bools
  }
  if (*h.fortran_order && a.rank() > 1) {
    std::vector<int64_t> axes(static_cast<size_t>(a.rank()));
    for (size_t i = 0; i < axes.size(); ++i) axes[i] = static_cast<int64_t>(axes.size() - 1 - i);
    a = a.permute(axes).contiguous();
  }
  return a;
}

Array load_npy(const std::string& path) {
  MappedFile file(path);
  return load_npy_from_memory(file.data(), file.size(), fmt::format("npy file '{}'", path));
}

}  // namespace tessera::io
