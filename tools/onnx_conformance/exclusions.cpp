#include "tools/onnx_conformance/exclusions.h"

#include <fstream>

#include "tessera/core/error.h"

namespace tessera::onnx_conformance {

namespace {

std::string trim(const std::string& s) {
  const size_t b = s.find_first_not_of(" \t\r");
  if (b == std::string::npos) return "";
  return s.substr(b, s.find_last_not_of(" \t\r") - b + 1);
}

}  // namespace

ExclusionList ExclusionList::load(const std::string& path) {
  std::ifstream in(path);
  TESSERA_CHECK(in.good(), "cannot read the exclusion list {}", path);
  ExclusionList list;
  std::string line;
  for (int number = 1; std::getline(in, line); ++number) {
    const std::string text = trim(line);
    if (text.empty() || text[0] == '#') continue;
    const size_t colon = text.find(": ");
    TESSERA_CHECK(colon != std::string::npos, "{}:{}: expected '<suite>/<test>: <reason>'", path, number);
    Exclusion e{trim(text.substr(0, colon)), trim(text.substr(colon + 2)), number};
    TESSERA_CHECK(!e.reason.empty(), "{}:{}: the entry for {} gives no reason", path, number, e.pattern);
    TESSERA_CHECK(e.pattern.find('/') != std::string::npos, "{}:{}: {} names no suite (node/, simple/, ...)", path,
                  number, e.pattern);
    for (const Exclusion& other : list.entries_) {
      TESSERA_CHECK(other.pattern != e.pattern, "{}:{}: {} is listed twice (also line {})", path, number, e.pattern,
                    other.line);
    }
    list.entries_.push_back(std::move(e));
  }
  return list;
}

const Exclusion* ExclusionList::find(const std::string& test) const {
  const Exclusion* best = nullptr;
  for (const Exclusion& e : entries_) {
    const bool prefix = !e.pattern.empty() && e.pattern.back() == '*';
    const bool hit = prefix ? test.compare(0, e.pattern.size() - 1, e.pattern, 0, e.pattern.size() - 1) == 0
                            : test == e.pattern;
    // An exact entry wins over a pattern; a longer pattern over a shorter one.
    if (hit && (best == nullptr || !prefix || best->pattern.size() < e.pattern.size())) {
      if (best != nullptr && best->pattern.back() != '*' && prefix) continue;
      best = &e;
    }
  }
  if (best != nullptr) ++best->matched;
  return best;
}

}  // namespace tessera::onnx_conformance
