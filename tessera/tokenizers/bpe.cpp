#include "tessera/tokenizers/bpe.h"

#include <queue>
#include <string>

#include "tessera/tokenizers/utf8.h"

namespace tessera::tokenizers {

namespace {

struct Symbol {
  int prev = -1, next = -1;
  size_t start = 0, length = 0;  // length 0 once merged into its left neighbour
};

struct Pair {
  int left = 0, right = 0;
  int32_t rank = 0;
  size_t left_length = 0, right_length = 0;  // as when queued: a later merge of either makes it stale
};

// Lowest rank first; on equal ranks the leftmost pair.
struct PairOrder {
  bool operator()(const Pair& a, const Pair& b) const { return a.rank > b.rank || (a.rank == b.rank && a.left > b.left); }
};

}  // namespace

void bpe_encode_word(const Vocab& vocab, std::string_view word, std::vector<TokenId>& out) {
  if (word.empty()) return;
  if (vocab.ignore_merges) {
    if (const TokenId id = vocab.find(word); id != kNoToken) {
      out.push_back(id);
      return;
    }
  }
  std::vector<Symbol> symbols;
  for (size_t at = 0; at < word.size();) {
    const size_t n = std::min(utf8_sequence_length(static_cast<unsigned char>(word[at])), word.size() - at);
    const int index = static_cast<int>(symbols.size());
    symbols.push_back({index - 1, at + n == word.size() ? -1 : index + 1, at, n});
    at += n;
  }
  std::priority_queue<Pair, std::vector<Pair>, PairOrder> queue;
  const auto try_pair = [&](int left, int right) {
    if (left < 0 || right < 0) return;
    const Symbol& l = symbols[left];
    const Symbol& r = symbols[right];
    const int32_t rank = vocab.merge_rank(word.substr(l.start, l.length), word.substr(r.start, r.length));
    if (rank >= 0) queue.push({left, right, rank, l.length, r.length});
  };
  for (int i = 1; i < static_cast<int>(symbols.size()); ++i) try_pair(i - 1, i);
  while (!queue.empty()) {
    const Pair p = queue.top();
    queue.pop();
    Symbol& left = symbols[p.left];
    Symbol& right = symbols[p.right];
    // Stale: one side was merged away or grew since the pair was queued.
    if (left.length != p.left_length || right.length != p.right_length || left.next != p.right) continue;
    left.length += right.length;
    right.length = 0;
    left.next = right.next;
    if (right.next >= 0) symbols[right.next].prev = p.left;
    try_pair(left.prev, p.left);
    try_pair(p.left, left.next);
  }
  for (int i = 0; i != -1; i = symbols[i].next) {
    const std::string_view s = word.substr(symbols[i].start, symbols[i].length);
    if (const TokenId id = vocab.find(s); id != kNoToken) {
      out.push_back(id);
      continue;
    }
    // A merge result that is no token (a malformed vocabulary): its single bytes where they are tokens.
    for (char c : s) {
      if (const TokenId id = vocab.find(std::string(1, c)); id != kNoToken) out.push_back(id);
    }
  }
}

}  // namespace tessera::tokenizers
