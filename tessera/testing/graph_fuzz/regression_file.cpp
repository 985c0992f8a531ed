#include "tessera/testing/graph_fuzz/regression_file.h"

#include <cstring>
#include <fstream>
#include <sstream>

#include "tessera/core/error.h"

namespace tessera::testing::fuzz {
namespace {

std::string hex(const Array& a) {
  const Array c = a.contiguous();
  const auto* p = static_cast<const unsigned char*>(c.raw_data());
  std::string out = "0x";
  static const char* digits = "0123456789abcdef";
  for (size_t i = 0; i < c.nbytes(); ++i) {
    out += digits[p[i] >> 4];
    out += digits[p[i] & 15];
  }
  return out;
}

int nibble(char ch) {
  if (ch >= '0' && ch <= '9') return ch - '0';
  if (ch >= 'a' && ch <= 'f') return ch - 'a' + 10;
  if (ch >= 'A' && ch <= 'F') return ch - 'A' + 10;
  return -1;
}

}  // namespace

std::string write_regression(const Regression& r) {
  std::string out = "# tessera graph fuzzer regression (replayed by tests/fuzz_graphs)\n";
  for (const std::string& note : r.notes) {
    std::string line = note;
    for (char& ch : line) {
      if (ch == '\n' || ch == '\r') ch = ' ';
    }
    out += "# note: " + line + "\n";
  }
  if (!r.variant.empty()) out += "# variant: " + r.variant + "\n";
  out += "# exact:";
  for (bool e : r.c.exact) out += e ? " 1" : " 0";
  out += "\n";
  for (size_t i = 0; i < r.c.inputs.size(); ++i) out += fmt::format("# input {}: {}\n", i, hex(r.c.inputs[i]));
  return out + ir::print_graph(r.c.graph);
}

Regression parse_regression(const std::string& text, const std::string& where) {
  Regression r;
  r.c.graph = ir::parse_graph(text);
  std::vector<std::string> data(r.c.graph.inputs().size());
  std::vector<bool> seen(data.size(), false);
  bool have_exact = false;
  std::istringstream lines(text);
  std::string line;
  while (std::getline(lines, line)) {
    if (line.rfind("# note: ", 0) == 0) {
      r.notes.push_back(line.substr(8));
    } else if (line.rfind("# variant: ", 0) == 0) {
      r.variant = line.substr(11);
    } else if (line.rfind("# exact:", 0) == 0) {
      std::istringstream flags(line.substr(8));
      int flag;
      while (flags >> flag) r.c.exact.push_back(flag != 0);
      have_exact = true;
    } else if (line.rfind("# input ", 0) == 0) {
      const size_t colon = line.find(':');
      TESSERA_CHECK(colon != std::string::npos, "{}: malformed input line '{}'", where, line.substr(0, 40));
      size_t index = 0;
      try {
        index = std::stoul(line.substr(8, colon - 8));
      } catch (const std::exception&) {
        fail("{}: malformed input line '{}'", where, line.substr(0, 40));
      }
      TESSERA_CHECK(index < data.size(), "{}: data for input {}, but the graph has {} inputs", where, index,
                    data.size());
      data[index] = line.substr(colon + 1);
      seen[index] = true;
    }
  }
  TESSERA_CHECK(have_exact && r.c.exact.size() == r.c.graph.outputs().size(),
                "{}: the '# exact:' line must give one flag per output ({})", where, r.c.graph.outputs().size());
  for (size_t i = 0; i < data.size(); ++i) {
    TESSERA_CHECK(seen[i], "{}: no data for input {}", where, i);
    const ir::TensorType& t = r.c.graph.inputs()[i].type();
    Array a = Array::empty(t.dtype, t.shape);
    std::string_view h(data[i]);
    while (!h.empty() && h.front() == ' ') h.remove_prefix(1);
    TESSERA_CHECK(h.size() >= 2 && h.substr(0, 2) == "0x" && (h.size() - 2) == 2 * a.nbytes(),
                  "{}: input {} ({}) needs {} bytes of hex data", where, i, ir::type_str(t), a.nbytes());
    auto* p = static_cast<unsigned char*>(a.raw_data());
    for (size_t b = 0; b < a.nbytes(); ++b) {
      const int hi = nibble(h[2 + 2 * b]), lo = nibble(h[3 + 2 * b]);
      TESSERA_CHECK(hi >= 0 && lo >= 0, "{}: input {} has a non-hex digit", where, i);
      p[b] = static_cast<unsigned char>(hi * 16 + lo);
    }
    r.c.inputs.push_back(std::move(a));
  }
  return r;
}

Regression read_regression_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  TESSERA_CHECK(in.good(), "cannot open graph regression file '{}'", path);
  std::ostringstream ss;
  ss << in.rdbuf();
  return parse_regression(ss.str(), path);
}

}  // namespace tessera::testing::fuzz
