#include "tessera/nn/incompatible_keys.h"

#include <fmt/format.h>

#include <map>

namespace tessera::nn {

namespace {

struct PrefixMatch {
  std::string prefix;
  size_t count = 0;
  std::string longer, shorter;  // one example pair: longer == prefix + shorter
};

// The prefix p for which the most `longer` names are p + one of the `shorter` names.
PrefixMatch best_prefix(const std::vector<std::string>& longer, const std::vector<std::string>& shorter) {
  std::map<std::string, PrefixMatch> by_prefix;
  for (const std::string& l : longer) {
    for (const std::string& s : shorter) {
      if (l.size() <= s.size() || l.compare(l.size() - s.size(), s.size(), s) != 0) continue;
      const std::string p = l.substr(0, l.size() - s.size());
      PrefixMatch& m = by_prefix[p];
      if (m.count++ == 0) m = {p, 1, l, s};
    }
  }
  PrefixMatch best;
  for (const auto& [p, m] : by_prefix) {
    if (m.count > best.count) best = m;
  }
  return best;
}

}  // namespace

std::string explain_key_differences(const IncompatibleKeys& keys) {
  const PrefixMatch extra = best_prefix(keys.unexpected_keys, keys.missing_keys);
  const PrefixMatch lacking = best_prefix(keys.missing_keys, keys.unexpected_keys);
  if (extra.count == 0 && lacking.count == 0) return "";
  if (extra.count >= lacking.count) {
    return fmt::format(
        "{} of the state dict's names are the module's with the prefix '{}' (e.g. '{}' for '{}'): strip it from "
        "the state dict's names (a training checkpoint stores the model as 'model.<name>'; "
        "train::load_checkpoint reads those)",
        extra.count, extra.prefix, extra.longer, extra.shorter);
  }
  return fmt::format(
      "{} of the module's names are the state dict's with the prefix '{}' (e.g. '{}' for '{}'): add it to the "
      "state dict's names",
      lacking.count, lacking.prefix, lacking.longer, lacking.shorter);
}

}  // namespace tessera::nn
