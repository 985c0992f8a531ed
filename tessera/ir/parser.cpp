// Parses the text form written by print_graph. Attribute values are read according to the op's
// schema, so "[]" is unambiguous and ints stay ints. Errors name the line and column.
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <unordered_map>

#include "tessera/core/printable.h"
#include "tessera/ir/graph.h"
#include "tessera/ir/op_def.h"

namespace tessera::ir {

namespace {

class Parser {
 public:
  explicit Parser(const std::string& text) : s_(text) {}

  Graph parse() {
    expect_word("graph");
    expect('@');
    std::string name = ident();
    expect('(');
    std::vector<Value> inputs;
    while (!try_consume(')')) {
      if (!inputs.empty()) expect(',');
      const int num = value_number();
      expect(':');
      TensorType t = type();
      std::string in_name = fmt::format("v{}", num);
      if (try_consume('{')) {
        expect_word("name");
        expect('=');
        in_name = string_lit();
        expect('}');
      }
      Value v;
      try {
        v = make_input(in_name, t);
      } catch (const Error& e) {
        error(e.what());
      }
      define(num, v);
      inputs.push_back(v);
    }
    expect('{');
    std::vector<Value> outputs;
    while (true) {
      skip_ws();
      if (peek_word("return")) {
        expect_word("return");
        skip_ws();
        while (peek() == '%') {
          outputs.push_back(use(value_number()));
          if (!try_consume(',')) break;
          if (peek() != '%') error("expected a value after ',' in return");
        }
        expect('}');
        break;
      }
      statement();
    }
    skip_ws();
    if (pos_ != s_.size()) error("unexpected text after the graph");
    return Graph::build(std::move(inputs), std::move(outputs), name);
  }

 private:
  void statement() {
    skip_ws();
    const size_t statement_start = pos_;
    std::vector<int> lhs{value_number()};
    while (try_consume(',')) lhs.push_back(value_number());
    expect('=');
    const std::string op_name = ident();
    const OpDef* op = OpRegistry::instance().find(op_name);
    if (!op) error(fmt::format("unknown op '{}'", op_name));
    expect('(');
    std::vector<Value> args;
    while (!try_consume(')')) {
      if (!args.empty()) expect(',');
      args.push_back(use(value_number()));
    }
    Attrs attrs;
    if (try_consume('{')) {
      while (!try_consume('}')) {
        if (!attrs.empty()) expect(',');
        std::string key = ident();
        expect('=');
        const AttrSpec* spec = nullptr;
        for (const auto& a : op->attrs) {
          if (a.name == key) spec = &a;
        }
        if (!spec) error(fmt::format("op '{}' has no attribute '{}'", op_name, key));
        attrs.set(key, attr_value(spec->kind));
      }
    }
    expect(':');
    std::vector<TensorType> types{type()};
    while (try_consume(',')) types.push_back(type());
    if (types.size() != lhs.size()) {
      error(fmt::format("{} results named but {} types given", lhs.size(), types.size()));
    }
    std::vector<Value> outs;
    try {
      outs = make_node_typed(*op, std::move(args), std::move(attrs), std::move(types));
    } catch (const Error& e) {
      pos_ = statement_start;  // report semantic errors at the statement that caused them
      error(e.what());
    }
    for (size_t i = 0; i < lhs.size(); ++i) {
      if (values_.count(lhs[i])) {
        pos_ = statement_start;
        error(fmt::format("value %{} defined twice", lhs[i]));
      }
      define(lhs[i], outs[i]);
    }
  }

  AttrValue attr_value(AttrKind kind) {
    skip_ws();
    switch (kind) {
      case AttrKind::Int: return integer();
      case AttrKind::Float: return floating();
      case AttrKind::Bool: {
        std::string w = ident();
        if (w == "true") return true;
        if (w == "false") return false;
        error("expected true or false");
      }
      case AttrKind::String: return string_lit();
      case AttrKind::Ints: {
        std::vector<int64_t> xs;
        expect('[');
        while (!try_consume(']')) {
          if (!xs.empty()) expect(',');
          xs.push_back(integer());
        }
        return xs;
      }
      case AttrKind::Floats: {
        std::vector<double> xs;
        expect('[');
        while (!try_consume(']')) {
          if (!xs.empty()) expect(',');
          xs.push_back(floating());
        }
        return xs;
      }
      case AttrKind::DType: return dtype_word();
      case AttrKind::Tensor: return dense();
    }
    error("unsupported attribute kind");
  }

  Array dense() {
    expect_word("dense");
    expect('<');
    TensorType t = type();
    expect(',');
    skip_ws();
    if (s_.compare(pos_, 2, "0x") != 0) error("expected 0x followed by hex bytes");
    pos_ += 2;
    // The text must hold every byte before the array is allocated: a short literal may declare any
    // size (up to Array's 256 TiB limit).
    size_t digits = 0;
    while (pos_ + digits < s_.size() && std::isxdigit(static_cast<unsigned char>(s_[pos_ + digits]))) ++digits;
    uint64_t needed = dtype_size(t.dtype);
    for (int64_t d : t.shape) {
      if (d < 0) error(fmt::format("negative dimension in dense literal type {}", type_str(t)));
      if (__builtin_mul_overflow(needed, static_cast<uint64_t>(d), &needed)) {
        error(fmt::format("dense literal type {} is too large", type_str(t)));
      }
    }
    if (needed > digits / 2) {
      if (pos_ + digits < s_.size() && std::isalnum(static_cast<unsigned char>(s_[pos_ + digits]))) {
        pos_ += digits;
        error("bad hex digit in dense literal");
      }
      error(fmt::format("dense literal has {} bytes, but its type {} needs {}", digits / 2, type_str(t), needed));
    }
    Array a;
    try {
      a = Array::empty(t.dtype, t.shape);
    } catch (const Error& e) {
      error(e.what());
    }
    auto* bytes = static_cast<unsigned char*>(a.raw_data());
    auto hexval = [&](char c) -> int {
      if (c >= '0' && c <= '9') return c - '0';
      if (c >= 'a' && c <= 'f') return c - 'a' + 10;
      error("bad hex digit in dense literal");
    };
    for (size_t i = 0; i < a.nbytes(); ++i) {
      const bool more = pos_ + 2 <= s_.size() && std::isxdigit(static_cast<unsigned char>(s_[pos_])) &&
                        std::isxdigit(static_cast<unsigned char>(s_[pos_ + 1]));
      if (!more && (pos_ >= s_.size() || !std::isalnum(static_cast<unsigned char>(s_[pos_])))) {
        error(fmt::format("dense literal has {} bytes, but its type {} needs {}", i, type_str(t), a.nbytes()));
      }
      bytes[i] = static_cast<unsigned char>(hexval(s_[pos_]) * 16 + hexval(s_[pos_ + 1]));
      pos_ += 2;
    }
    expect('>');
    return a;
  }

  TensorType type() {
    TensorType t;
    t.dtype = dtype_word();
    expect('[');
    while (!try_consume(']')) {
      if (!t.shape.empty()) expect(',');
      t.shape.push_back(integer());
    }
    return t;
  }

  DType dtype_word() {
    std::string w = ident();
    try {
      return parse_dtype(w);
    } catch (const Error& e) {
      error(e.what());
    }
  }

  int64_t integer() {
    skip_ws();
    size_t start = pos_;
    if (pos_ < s_.size() && s_[pos_] == '-') ++pos_;
    while (pos_ < s_.size() && std::isdigit(static_cast<unsigned char>(s_[pos_]))) ++pos_;
    if (pos_ == start || (pos_ == start + 1 && s_[start] == '-')) error("expected an integer");
    try {
      return std::stoll(s_.substr(start, pos_ - start));
    } catch (const std::exception&) {
      error("integer out of range");
    }
  }

  double floating() {
    skip_ws();
    size_t start = pos_;
    while (pos_ < s_.size() && (std::isalnum(static_cast<unsigned char>(s_[pos_])) || std::strchr("+-.", s_[pos_]))) {
      ++pos_;
    }
    std::string w = s_.substr(start, pos_ - start);
    if (w == "nan" || w == "-nan") return std::numeric_limits<double>::quiet_NaN();
    if (w == "inf") return std::numeric_limits<double>::infinity();
    if (w == "-inf") return -std::numeric_limits<double>::infinity();
    // strtod, unlike std::stod, accepts subnormals (it only reports ERANGE for them).
    char* end = nullptr;
    const double v = w.empty() ? 0.0 : std::strtod(w.c_str(), &end);
    const size_t used = w.empty() ? 0 : static_cast<size_t>(end - w.c_str());
    if (w.empty() || used != w.size()) {
      pos_ = start;
      error(fmt::format("expected a number, got '{}'", w));
    }
    return v;
  }

  std::string string_lit() {
    expect('"');
    std::string out;
    while (true) {
      if (pos_ >= s_.size()) error("unterminated string");
      char c = s_[pos_++];
      if (c == '"') break;
      if (c == '\\') {
        if (pos_ >= s_.size()) error("unterminated string");
        char e = s_[pos_++];
        out += e == 'n' ? '\n' : e;
      } else {
        out += c;
      }
    }
    return out;
  }

  int value_number() {
    expect('%');
    int64_t n = integer();
    if (n < 0 || n > std::numeric_limits<int>::max()) error("bad value number");
    return static_cast<int>(n);
  }

  void define(int num, const Value& v) {
    if (!values_.emplace(num, v).second) error(fmt::format("value %{} defined twice", num));
  }
  Value use(int num) {
    auto it = values_.find(num);
    if (it == values_.end()) error(fmt::format("value %{} used before it is defined", num));
    return it->second;
  }

  std::string ident() {
    skip_ws();
    size_t start = pos_;
    while (pos_ < s_.size() && (std::isalnum(static_cast<unsigned char>(s_[pos_])) || s_[pos_] == '_' || s_[pos_] == '.')) {
      ++pos_;
    }
    if (pos_ == start) error("expected a name");
    return s_.substr(start, pos_ - start);
  }

  void skip_ws() {
    while (pos_ < s_.size()) {
      if (std::isspace(static_cast<unsigned char>(s_[pos_]))) {
        ++pos_;
      } else if (s_[pos_] == '#') {  // comment to end of line
        while (pos_ < s_.size() && s_[pos_] != '\n') ++pos_;
      } else {
        break;
      }
    }
  }
  char peek() {
    skip_ws();
    return pos_ < s_.size() ? s_[pos_] : '\0';
  }
  bool peek_word(const char* w) {
    skip_ws();
    const size_t n = std::strlen(w);
    return s_.compare(pos_, n, w) == 0 &&
           (pos_ + n >= s_.size() || !std::isalnum(static_cast<unsigned char>(s_[pos_ + n])));
  }
  bool try_consume(char c) {
    if (peek() != c) return false;
    ++pos_;
    return true;
  }
  void expect(char c) {
    if (!try_consume(c)) error(fmt::format("expected '{}'", c));
  }
  void expect_word(const char* w) {
    if (!peek_word(w)) error(fmt::format("expected '{}'", w));
    pos_ += std::strlen(w);
  }

  [[noreturn]] void error(const std::string& what) {
    size_t line = 1, col = 1;
    for (size_t i = 0; i < pos_ && i < s_.size(); ++i) {
      if (s_[i] == '\n') {
        ++line;
        col = 1;
      } else {
        ++col;
      }
    }
    // Messages quote names and text from the input: escaped, so they cannot forge terminal output.
    fail("IR text line {}, column {}: {}", line, col, printable(what, 1000));
  }

  const std::string& s_;
  size_t pos_ = 0;
  std::unordered_map<int, Value> values_;
};

}  // namespace

Graph parse_graph(const std::string& text) { return Parser(text).parse(); }

}  // namespace tessera::ir
