#include "tessera/io/stablehlo/checker.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <set>
#include <sstream>

#include "tessera/io/stablehlo/text.h"

namespace tessera::io::stablehlo {

namespace {

struct TType {
  std::string elem;
  Shape shape;
  int64_t numel() const { return shape_numel(shape); }
};

std::string trim(const std::string& s) {
  size_t a = 0, b = s.size();
  while (a < b && std::isspace(static_cast<unsigned char>(s[a]))) ++a;
  while (b > a && std::isspace(static_cast<unsigned char>(s[b - 1]))) --b;
  return s.substr(a, b - a);
}

bool starts_with(const std::string& s, const std::string& p) {
  return s.rfind(p, 0) == 0;
}
bool ends_with(const std::string& s, const std::string& p) {
  return s.size() >= p.size() && s.compare(s.size() - p.size(), p.size(), p) == 0;
}

// Walks s keeping track of nesting in (), [], {}, <> (an "->" arrow is not a bracket) and of quoted
// strings; calls f(i, depth) for every character outside quotes.
template <class F>
void scan(const std::string& s, F&& f) {
  int depth = 0;
  bool quoted = false;
  for (size_t i = 0; i < s.size(); ++i) {
    const char ch = s[i];
    if (quoted) {
      if (ch == '"') quoted = false;
      continue;
    }
    if (ch == '"') {
      quoted = true;
      continue;
    }
    if (ch == '-' && i + 1 < s.size() && s[i + 1] == '>') {
      f(i, depth);
      ++i;
      continue;
    }
    if (ch == '(' || ch == '[' || ch == '{' || ch == '<') ++depth;
    if (ch == ')' || ch == ']' || ch == '}' || ch == '>') --depth;
    f(i, depth);
  }
}

std::vector<std::string> split_top(const std::string& s) {
  std::vector<std::string> out;
  size_t from = 0;
  scan(s, [&](size_t i, int depth) {
    if (depth == 0 && s[i] == ',') {
      out.push_back(trim(s.substr(from, i - from)));
      from = i + 1;
    }
  });
  const std::string last = trim(s.substr(from));
  if (!last.empty() || !out.empty()) out.push_back(last);
  return out;
}

// Position of the last top-level " : " (where an op's type signature starts), or npos.
size_t signature_start(const std::string& s) {
  size_t at = std::string::npos;
  scan(s, [&](size_t i, int depth) {
    if (depth == 0 && s[i] == ':' && i > 0 && s[i - 1] == ' ' && i + 1 < s.size() && s[i + 1] == ' ') at = i;
  });
  return at;
}

// Position of the top-level "->" in a signature, or npos.
size_t arrow(const std::string& s) {
  size_t at = std::string::npos;
  scan(s, [&](size_t i, int depth) {
    if (depth == 0 && s[i] == '-' && i + 1 < s.size() && s[i + 1] == '>') at = i;
  });
  return at;
}

std::string strip_parens(const std::string& s) {
  const std::string t = trim(s);
  if (starts_with(t, "(") && ends_with(t, ")")) return t.substr(1, t.size() - 2);
  return t;
}

// %names (with an optional #k) in order of appearance, outside quotes.
std::vector<std::string> value_names(const std::string& s) {
  std::vector<std::string> out;
  bool quoted = false;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '"') quoted = !quoted;
    if (quoted || s[i] != '%') continue;
    size_t j = i + 1;
    while (j < s.size() && (std::isalnum(static_cast<unsigned char>(s[j])) || s[j] == '_' || s[j] == '#' ||
                            s[j] == '$' || s[j] == '.')) {
      ++j;
    }
    out.push_back(s.substr(i, j - i));
    i = j - 1;
  }
  return out;
}

std::vector<int64_t> int_list_at(const std::string& s) {
  std::vector<int64_t> out;
  const std::string inner = strip_parens(s);
  std::string body = trim(inner);
  if (starts_with(body, "[")) body = body.substr(1, body.find(']') - 1);
  for (const std::string& part : split_top(body)) {
    if (!part.empty()) out.push_back(std::stoll(part));
  }
  return out;
}

// The bracketed list following `key` in s ("dims = [0, 1]" -> [0, 1]); `found` tells whether it is there.
std::vector<int64_t> list_after(const std::string& s, const std::string& key, bool* found = nullptr) {
  const size_t at = s.find(key);
  if (found) *found = at != std::string::npos;
  if (at == std::string::npos) return {};
  const size_t open = s.find('[', at + key.size());
  const size_t close = s.find(']', open);
  return int_list_at(s.substr(open, close - open + 1));
}

class Checker {
 public:
  explicit Checker(const std::string& text) {
    std::istringstream in(text);
    std::string l;
    while (std::getline(in, l)) lines_.push_back(l);
  }

  CheckedModule run() {
    while (next_meaningful() && !starts_with(cur(), "module @")) ++i_;
    if (i_ >= lines_.size()) bad("no module");
    ++i_;
    if (!next_meaningful() || !starts_with(cur(), "func.func public @main(")) bad("expected func.func public @main");
    parse_signature(cur());
    ++i_;
    scopes_.emplace_back();
    for (size_t a = 0; a < out_.argument_types.size(); ++a) define(fmt::format("%arg{}", a), out_.argument_types[a]);
    const std::vector<std::string> rets = parse_block(false);
    if (rets.size() != out_.result_types.size()) bad("return gives a different number of values than @main declares");
    if (!next_meaningful() || cur() != "}") bad("expected '}' closing @main");
    ++i_;
    if (!next_meaningful() || cur() != "}") bad("expected '}' closing the module");
    ++i_;
    if (next_meaningful()) bad("text after the module");
    return out_;
  }

 private:
  [[noreturn]] void bad(const std::string& what) const {
    fail("stablehlo check: line {}: {}{}", i_ + 1, what, i_ < lines_.size() ? ": " + trim(lines_[i_]) : std::string());
  }

  // Skips blank and comment lines; false at the end of the text.
  bool next_meaningful() {
    while (i_ < lines_.size() && (trim(lines_[i_]).empty() || starts_with(trim(lines_[i_]), "//"))) ++i_;
    return i_ < lines_.size();
  }
  std::string cur() const { return trim(lines_[i_]); }

  TType parse_type(const std::string& raw) const {
    const std::string s = trim(raw);
    if (!starts_with(s, "tensor<") || !ends_with(s, ">")) bad("not a tensor type: '" + s + "'");
    const std::string inner = s.substr(7, s.size() - 8);
    TType t;
    size_t from = 0;
    for (;;) {
      const size_t x = inner.find('x', from);
      if (x == std::string::npos || !std::isdigit(static_cast<unsigned char>(inner[from]))) break;
      t.shape.push_back(std::stoll(inner.substr(from, x - from)));
      from = x + 1;
    }
    t.elem = inner.substr(from);
    static const std::set<std::string> known = {"f16", "bf16", "f32", "f64",  "i1",   "i8",  "i16",
                                                "i32", "i64",  "ui8", "ui16", "ui32", "ui64"};
    if (!known.count(t.elem)) bad("unknown element type '" + t.elem + "'");
    return t;
  }

  void define(const std::string& name, const std::string& type) {
    if (!all_.insert(name).second) bad("value " + name + " is defined twice");
    parse_type(type);
    scopes_.back()[name] = type;
    ++out_.values;
  }

  std::string type_of(const std::string& name) const {
    for (auto it = scopes_.rbegin(); it != scopes_.rend(); ++it) {
      auto f = it->find(name);
      if (f != it->end()) return f->second;
    }
    bad("value " + name + " is used before it is defined (or outside its region)");
  }

  void define_results(const std::string& lhs, const std::vector<std::string>& types) {
    const size_t colon = lhs.find(':');
    if (colon == std::string::npos) {
      if (types.size() != 1) bad("one result name for several results");
      define(lhs, types[0]);
      return;
    }
    const std::string base = lhs.substr(0, colon);
    const size_t count = std::stoul(lhs.substr(colon + 1));
    if (count != types.size()) bad(fmt::format("{} results named but {} typed", count, types.size()));
    for (size_t k = 0; k < count; ++k) define(fmt::format("{}#{}", base, k), types[k]);
  }

  void parse_signature(const std::string& l) {
    const size_t open = l.find('(');
    size_t close = open;
    int depth = 0;
    for (size_t k = open; k < l.size(); ++k) {
      if (l[k] == '(') ++depth;
      if (l[k] == ')' && --depth == 0) {
        close = k;
        break;
      }
    }
    const std::vector<std::string> params = split_top(l.substr(open + 1, close - open - 1));
    for (size_t a = 0; a < params.size(); ++a) {
      const std::string want = fmt::format("%arg{}: ", a);
      if (!starts_with(params[a], want)) bad(fmt::format("argument {} should be named %arg{}", a, a));
      out_.argument_types.push_back(params[a].substr(want.size()));
    }
    const size_t arr = l.find("->", close);
    if (arr == std::string::npos) return;
    std::string res = trim(l.substr(arr + 2));
    if (!ends_with(res, "{")) bad("expected '{' after the signature");
    res = strip_parens(trim(res.substr(0, res.size() - 1)));
    for (const std::string& r : split_top(res)) {
      if (!r.empty()) out_.result_types.push_back(r);
    }
  }

  // Parses ops up to a return (func.return or stablehlo.return) and gives the returned types.
  std::vector<std::string> parse_block(bool region) {
    while (next_meaningful()) {
      const std::string l = cur();
      if (starts_with(l, region ? "stablehlo.return" : "return")) {
        const std::string rest = trim(l.substr(region ? 16 : 6));
        std::vector<std::string> names, types;
        if (!rest.empty()) {
          const size_t sig = signature_start(rest);
          if (sig == std::string::npos) bad("return without types");
          names = value_names(rest.substr(0, sig));
          types = split_top(rest.substr(sig + 1));
          if (names.size() != types.size()) bad("return names and types differ in number");
          for (size_t k = 0; k < names.size(); ++k) {
            if (type_of(names[k]) != types[k]) {
              bad(fmt::format("{} has type {} but is returned as {}", names[k], type_of(names[k]), types[k]));
            }
          }
        }
        if (!region) {
          for (size_t k = 0; k < types.size() && k < out_.result_types.size(); ++k) {
            if (types[k] != out_.result_types[k])
              bad(fmt::format("result {} is {} but @main declares {}", k, types[k], out_.result_types[k]));
          }
        }
        ++i_;
        return types;
      }
      if (!starts_with(l, "%")) bad("expected an op or a return");
      parse_op(l);
    }
    bad("the block has no return");
  }

  void parse_op(const std::string& l) {
    const size_t eq = l.find(" = ");
    if (eq == std::string::npos) bad("expected '%name = op'");
    const std::string lhs = l.substr(0, eq);
    const std::string body = l.substr(eq + 3);
    const std::string name = op_name(body);
    ++out_.op_counts[name];
    if (ends_with(body, "({")) {
      parse_region_op(lhs, name, body.substr(0, body.size() - 2));
      return;
    }
    const size_t sig = signature_start(body);
    if (sig == std::string::npos) bad("the op has no type signature");
    const std::vector<std::string> operands = value_names(body.substr(0, sig));
    std::vector<std::string> in_types, out_types;
    signature_types(trim(body.substr(sig + 1)), operands.size(), &in_types, &out_types);
    check_operands(operands, in_types);
    check_semantics(name, body.substr(0, sig), in_types, out_types);
    define_results(lhs, out_types);
    ++i_;
  }

  void parse_region_op(const std::string& lhs, const std::string& name, const std::string& head) {
    const std::vector<std::string> operands = value_names(head);
    ++i_;
    if (!next_meaningful() || !starts_with(cur(), "^bb0(") || !ends_with(cur(), "):")) bad("expected a block header");
    const std::string header = cur();
    const std::vector<std::string> args = split_top(header.substr(5, header.size() - 7));
    ++i_;
    scopes_.emplace_back();
    std::vector<std::string> arg_types;
    for (const std::string& a : args) {
      const size_t colon = a.find(": ");
      if (colon == std::string::npos) bad("block argument without a type");
      define(a.substr(0, colon), a.substr(colon + 2));
      arg_types.push_back(a.substr(colon + 2));
    }
    const std::vector<std::string> returned = parse_block(true);
    scopes_.pop_back();
    if (!next_meaningful() || !starts_with(cur(), "}) : ")) bad("expected '}) : <signature>' closing the region");
    const std::string sig = cur().substr(5);
    std::vector<std::string> in_types, out_types;
    signature_types(sig, operands.size(), &in_types, &out_types);
    check_operands(operands, in_types);
    // Reductions and scatters take (acc..., x...) scalars and return acc...; sorts return one i1.
    const bool sort = name == "stablehlo.sort";
    const size_t n = sort ? in_types.size() : out_types.size();
    if (args.size() != 2 * n) bad(fmt::format("the region takes {} arguments, expected {}", args.size(), 2 * n));
    for (size_t k = 0; k < args.size(); ++k) {
      const TType a = parse_type(arg_types[k]);
      const TType want = parse_type(sort ? in_types[k / 2] : out_types[k % n]);
      if (!a.shape.empty() || a.elem != want.elem) bad(fmt::format("region argument {} has type {}", k, arg_types[k]));
    }
    if (sort) {
      if (returned.size() != 1 || returned[0] != "tensor<i1>") bad("a sort comparator returns one tensor<i1>");
    } else {
      if (returned.size() != n) bad("the region returns the wrong number of values");
      for (size_t k = 0; k < n; ++k) {
        if (parse_type(returned[k]).elem != parse_type(out_types[k]).elem) bad("the region returns the wrong type");
      }
    }
    define_results(lhs, out_types);
    ++i_;
  }

  static std::string op_name(const std::string& body) {
    if (starts_with(body, "\"")) return body.substr(1, body.find('"', 1) - 1);
    size_t end = 0;
    while (end < body.size() && body[end] != ' ' && body[end] != '(') ++end;
    return body.substr(0, end);
  }

  // The operand and result types a signature states for `n` operands.
  void signature_types(const std::string& sig, size_t n, std::vector<std::string>* in,
                       std::vector<std::string>* out) const {
    const size_t arr = arrow(sig);
    if (arr != std::string::npos) {
      for (const std::string& t : split_top(strip_parens(sig.substr(0, arr)))) {
        if (!t.empty()) in->push_back(t);
      }
      for (const std::string& t : split_top(strip_parens(sig.substr(arr + 2)))) {
        if (!t.empty()) out->push_back(t);
      }
      return;
    }
    const std::vector<std::string> types = split_top(sig);
    if (types.size() == 1) {
      in->assign(n, types[0]);
      out->push_back(types[0]);
    } else if (types.size() == 2 && n == 3) {  // select: predicate type, value type
      *in = {types[0], types[1], types[1]};
      out->push_back(types[1]);
    } else {
      bad("cannot read the type signature '" + sig + "'");
    }
  }

  void check_operands(const std::vector<std::string>& names, const std::vector<std::string>& types) const {
    for (const std::string& t : types) parse_type(t);
    if (names.size() != types.size()) bad(fmt::format("{} operands but {} operand types", names.size(), types.size()));
    for (size_t k = 0; k < names.size(); ++k) {
      const std::string actual = type_of(names[k]);
      if (actual != types[k])
        bad(fmt::format("operand {} ({}) has type {} but the signature says {}", k, names[k], actual, types[k]));
    }
  }

  void check_semantics(const std::string& name, const std::string& body, const std::vector<std::string>& in_s,
                       const std::vector<std::string>& out_s) const {
    std::vector<TType> in, out;
    for (const std::string& t : in_s) in.push_back(parse_type(t));
    for (const std::string& t : out_s) out.push_back(parse_type(t));
    auto need = [&](bool ok, const std::string& what) {
      if (!ok) bad(name + ": " + what);
    };
    if (name == "stablehlo.constant") {
      need(in.empty() && out.size() == 1, "a constant has no operands and one result");
      check_literal(body, out[0]);
    } else if (name == "stablehlo.iota") {
      bool found = false;
      const size_t at = body.find("dim = ");
      found = at != std::string::npos;
      need(found && std::stoll(body.substr(at + 6)) < static_cast<int64_t>(out[0].shape.size()), "iota dimension");
    } else if (name == "stablehlo.compare") {
      need(in.size() == 2 && in[0].shape == out[0].shape && out[0].elem == "i1",
           "compare gives i1 of its operands' shape");
    } else if (name == "stablehlo.convert" || name == "stablehlo.bitcast_convert") {
      need(in.size() == 1 && in[0].shape == out[0].shape, "the shape must not change");
      if (name == "stablehlo.bitcast_convert")
        need(element_bits(in[0].elem) == element_bits(out[0].elem), "bit widths differ");
    } else if (name == "stablehlo.reshape") {
      need(in.size() == 1 && in[0].numel() == out[0].numel() && in[0].elem == out[0].elem, "reshape keeps elements");
    } else if (name == "stablehlo.broadcast_in_dim") {
      const std::vector<int64_t> dims = list_after(body, "dims = ");
      need(in.size() == 1 && dims.size() == in[0].shape.size() && in[0].elem == out[0].elem,
           "one dim per operand axis");
      for (size_t k = 0; k < dims.size(); ++k) {
        need(dims[k] >= 0 && dims[k] < static_cast<int64_t>(out[0].shape.size()), "dimension out of range");
        const int64_t s = in[0].shape[k];
        need(s == 1 || s == out[0].shape[static_cast<size_t>(dims[k])], "operand axis does not broadcast");
      }
    } else if (name == "stablehlo.transpose") {
      const std::vector<int64_t> perm = list_after(body, "dims = ");
      need(perm.size() == in[0].shape.size(), "permutation rank");
      Shape s;
      for (int64_t p : perm) s.push_back(in[0].shape.at(static_cast<size_t>(p)));
      need(s == out[0].shape && in[0].elem == out[0].elem, "permuted shape");
    } else if (name == "stablehlo.slice") {
      check_slice(body, in[0], out[0]);
    } else if (name == "stablehlo.concatenate") {
      const size_t at = body.find("dim = ");
      need(at != std::string::npos, "concatenate needs dim");
      const size_t d = std::stoul(body.substr(at + 6));
      Shape s = in[0].shape;
      s.at(d) = 0;
      for (const TType& t : in) s[d] += t.shape.at(d);
      need(s == out[0].shape, "concatenated shape");
    } else if (name == "stablehlo.pad") {
      const auto lo = list_after(body, "low = "), hi = list_after(body, "high = "),
                 inner = list_after(body, "interior = ");
      need(in.size() == 2 && in[1].shape.empty() && lo.size() == in[0].shape.size(), "pad operands");
      Shape s;
      for (size_t k = 0; k < lo.size(); ++k) {
        const int64_t n = in[0].shape[k];
        s.push_back(lo[k] + hi[k] + n + (n > 0 ? (n - 1) * inner[k] : 0));
      }
      need(s == out[0].shape, "padded shape");
    } else if (name == "stablehlo.select") {
      need(in[0].elem == "i1" && in[0].shape == out[0].shape, "select predicate");
    } else if (name == "stablehlo.dot_general") {
      check_dot(body, in, out[0]);
    } else if (name == "stablehlo.reduce") {
      const std::vector<int64_t> dims = list_after(body, "dimensions = ");
      Shape s;
      for (size_t d = 0; d < in[0].shape.size(); ++d) {
        if (std::find(dims.begin(), dims.end(), static_cast<int64_t>(d)) == dims.end()) s.push_back(in[0].shape[d]);
      }
      need(in.size() == 2 && in[1].shape.empty() && s == out[0].shape, "reduced shape");
    } else if (name == "stablehlo.reverse") {
      for (int64_t d : list_after(body, "dims = "))
        need(d >= 0 && d < static_cast<int64_t>(in[0].shape.size()), "dims");
    }
  }

  void check_literal(const std::string& body, const TType& t) const {
    const size_t open = body.find("dense<");
    if (open == std::string::npos) bad("a constant needs a dense literal");
    size_t close = open + 6;
    int depth = 1;
    bool quoted = false;
    for (; close < body.size() && depth > 0; ++close) {
      if (body[close] == '"') quoted = !quoted;
      if (quoted) continue;
      if (body[close] == '<') ++depth;
      if (body[close] == '>') --depth;
    }
    const std::string lit = body.substr(open + 6, close - open - 7);
    if (lit.empty()) {
      if (t.numel() != 0) bad("an empty literal for a non-empty tensor");
      return;
    }
    if (starts_with(lit, "\"0x")) {
      const size_t bytes = (lit.size() - 4) / 2;
      if (bytes != static_cast<size_t>(t.numel()) * static_cast<size_t>(element_bits(t.elem) / 8))
        bad("hex literal size");
      return;
    }
    if (!starts_with(lit, "[")) return;  // a splat
    int64_t leaves = 0;
    std::string token;
    for (char ch : lit + ",") {
      if (ch == '[' || ch == ']' || ch == ',' || ch == ' ') {
        if (!token.empty()) ++leaves;
        token.clear();
      } else {
        token += ch;
      }
    }
    if (leaves != t.numel())
      bad(fmt::format("the literal has {} elements for {}", leaves, tensor_type(t.elem, t.shape)));
  }

  void check_slice(const std::string& body, const TType& in, const TType& out) const {
    const size_t open = body.find('[');
    const size_t close = body.find(']', open);
    const std::vector<std::string> parts = split_top(body.substr(open + 1, close - open - 1));
    if (parts.size() != in.shape.size()) bad("slice: one range per axis");
    Shape s;
    for (size_t k = 0; k < parts.size(); ++k) {
      std::vector<int64_t> v;
      std::stringstream ss(parts[k]);
      std::string item;
      while (std::getline(ss, item, ':')) v.push_back(std::stoll(item));
      const int64_t start = v.at(0), limit = v.at(1), stride = v.size() > 2 ? v[2] : 1;
      if (start < 0 || limit > in.shape[k] || start > limit || stride < 1) bad("slice: range out of bounds");
      s.push_back(limit == start ? 0 : (limit - start - 1) / stride + 1);
    }
    if (s != out.shape) bad("slice: result shape");
  }

  void check_dot(const std::string& body, const std::vector<TType>& in, const TType& out) const {
    if (in.size() != 2 || in[0].elem != in[1].elem) bad("dot_general operands");
    bool has_batch = false;
    std::vector<int64_t> ab, bb;
    const size_t bat = body.find("batching_dims = ");
    has_batch = bat != std::string::npos;
    if (has_batch) {
      const std::string rest = body.substr(bat);
      ab = list_after(rest, "batching_dims = ");
      bb = list_after(rest.substr(rest.find(" x ")), " x ");
    }
    const std::string rest = body.substr(body.find("contracting_dims = "));
    const std::vector<int64_t> ac = list_after(rest, "contracting_dims = ");
    const std::vector<int64_t> bc = list_after(rest.substr(rest.find(" x ")), " x ");
    if (ab.size() != bb.size() || ac.size() != bc.size()) bad("dot_general dimension lists");
    Shape s;
    for (size_t k = 0; k < ab.size(); ++k) {
      if (in[0].shape.at(static_cast<size_t>(ab[k])) != in[1].shape.at(static_cast<size_t>(bb[k])))
        bad("batch sizes differ");
      s.push_back(in[0].shape[static_cast<size_t>(ab[k])]);
    }
    for (size_t k = 0; k < ac.size(); ++k) {
      if (in[0].shape.at(static_cast<size_t>(ac[k])) != in[1].shape.at(static_cast<size_t>(bc[k])))
        bad("contracted sizes differ");
    }
    for (int side = 0; side < 2; ++side) {
      const auto& batch = side == 0 ? ab : bb;
      const auto& contract = side == 0 ? ac : bc;
      for (size_t d = 0; d < in[static_cast<size_t>(side)].shape.size(); ++d) {
        const auto di = static_cast<int64_t>(d);
        if (std::find(batch.begin(), batch.end(), di) == batch.end() &&
            std::find(contract.begin(), contract.end(), di) == contract.end()) {
          s.push_back(in[static_cast<size_t>(side)].shape[d]);
        }
      }
    }
    if (s != out.shape || out.elem != in[0].elem) bad("dot_general result type");
  }

  std::vector<std::string> lines_;
  size_t i_ = 0;
  std::vector<std::map<std::string, std::string>> scopes_;
  std::set<std::string> all_;
  CheckedModule out_;
};

}  // namespace

CheckedModule check_module(const std::string& text) {
  try {
    return Checker(text).run();
  } catch (const Error&) {
    throw;
  } catch (const std::exception& e) {  // a number that does not parse, say
    fail("stablehlo check: malformed text: {}", e.what());
  }
}

CheckedModule check_exported(const Module& module) {
  CheckedModule m = check_module(module.text);
  std::vector<std::string> args, results;
  for (const Argument& a : module.arguments) args.push_back(tensor_type(a.type));
  for (const ir::TensorType& t : module.results) results.push_back(tensor_type(t));
  TESSERA_CHECK(m.argument_types == args, "stablehlo check: @main takes ({}) but the graph's inputs are ({})",
                fmt::join(m.argument_types, ", "), fmt::join(args, ", "));
  TESSERA_CHECK(m.result_types == results, "stablehlo check: @main returns ({}) but the graph's outputs are ({})",
                fmt::join(m.result_types, ", "), fmt::join(results, ", "));
  return m;
}

}  // namespace tessera::io::stablehlo
