#include "tessera/tokenizers/special_split.h"

namespace tessera::tokenizers {

std::vector<Fragment> split_specials(const Vocab& vocab, std::string_view text, bool parse_special) {
  std::vector<Fragment> fragments;
  if (text.empty()) return fragments;
  fragments.push_back({kNoToken, text});
  // Longest special first (vocab.specials is sorted so), each splitting every text fragment left.
  for (const TokenId id : vocab.specials) {
    const TokenType type = vocab.type(id);
    if (!parse_special && type != TokenType::user_defined) continue;
    const std::string& special = vocab.tokens[static_cast<size_t>(id)];
    std::vector<Fragment> next;
    next.reserve(fragments.size());
    for (const Fragment& f : fragments) {
      if (f.token != kNoToken) {
        next.push_back(f);
        continue;
      }
      std::string_view rest = f.text;
      for (size_t at = rest.find(special); at != std::string_view::npos; at = rest.find(special)) {
        if (at > 0) next.push_back({kNoToken, rest.substr(0, at)});
        next.push_back({id, {}});
        rest = rest.substr(at + special.size());
      }
      if (!rest.empty()) next.push_back({kNoToken, rest});
    }
    fragments = std::move(next);
  }
  return fragments;
}

}  // namespace tessera::tokenizers
