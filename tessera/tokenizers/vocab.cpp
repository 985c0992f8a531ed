#include "tessera/tokenizers/vocab.h"

#include <algorithm>

namespace tessera::tokenizers {

std::string merge_key(std::string_view left, std::string_view right) {
  // A newline cannot occur inside either half: byte-level BPE symbols are printable code points.
  std::string key;
  key.reserve(left.size() + right.size() + 1);
  key.append(left);
  key += '\n';
  key.append(right);
  return key;
}

TokenId Vocab::find(std::string_view text) const {
  const auto it = ids.find(std::string(text));
  return it == ids.end() ? kNoToken : it->second;
}

int32_t Vocab::merge_rank(std::string_view left, std::string_view right) const {
  const auto it = merge_ranks.find(merge_key(left, right));
  return it == merge_ranks.end() ? -1 : it->second;
}

void Vocab::index() {
  ids.clear();
  ids.reserve(tokens.size());
  specials.clear();
  for (size_t i = 0; i < tokens.size(); ++i) {
    const auto id = static_cast<TokenId>(i);
    ids[tokens[i]] = id;
    const TokenType t = types[i];
    if ((t == TokenType::control || t == TokenType::user_defined || t == TokenType::unknown) && !tokens[i].empty()) {
      specials.push_back(id);
    }
  }
  // Longest first, so that a special token containing a shorter one wins; ties by id for determinism.
  std::stable_sort(specials.begin(), specials.end(),
                   [&](TokenId a, TokenId b) { return tokens[a].size() > tokens[b].size(); });
}

}  // namespace tessera::tokenizers
