#include "tessera/tokenizers/spm.h"

#include <queue>
#include <string>

#include "tessera/core/error.h"
#include "tessera/tokenizers/utf8.h"

namespace tessera::tokenizers {

namespace {

struct SpmSymbol {
  int prev = -1, next = -1;
  size_t start = 0, length = 0;  // into the text; length 0 once merged into its left neighbour
};

struct SpmPair {
  int left = 0, right = 0;
  float score = 0;
  size_t length = 0;  // of the joined text, to notice a pair made stale by another join
};

// Highest score first; on equal scores the leftmost pair.
struct SpmPairOrder {
  bool operator()(const SpmPair& a, const SpmPair& b) const {
    return a.score < b.score || (a.score == b.score && a.left > b.left);
  }
};

class Session {
 public:
  Session(const Vocab& vocab, std::string_view text) : vocab_(vocab), text_(text) {}

  void run(std::vector<TokenId>& out) {
    for (size_t at = 0; at < text_.size();) {
      const size_t n = std::min(utf8_sequence_length(static_cast<unsigned char>(text_[at])), text_.size() - at);
      const int index = static_cast<int>(symbols_.size());
      symbols_.push_back({index - 1, at + n == text_.size() ? -1 : index + 1, at, n});
      at += n;
    }
    for (int i = 1; i < static_cast<int>(symbols_.size()); ++i) try_pair(i - 1, i);
    while (!queue_.empty()) {
      const SpmPair p = queue_.top();
      queue_.pop();
      SpmSymbol& left = symbols_[p.left];
      SpmSymbol& right = symbols_[p.right];
      if (left.length == 0 || right.length == 0 || left.length + right.length != p.length) continue;
      left.length += right.length;
      right.length = 0;
      left.next = right.next;
      if (right.next >= 0) symbols_[right.next].prev = p.left;
      try_pair(left.prev, p.left);
      try_pair(p.left, left.next);
    }
    for (int i = symbols_.empty() ? -1 : 0; i != -1; i = symbols_[i].next) emit(symbols_[i].start, symbols_[i].length, out);
  }

 private:
  void try_pair(int left, int right) {
    if (left < 0 || right < 0) return;
    const std::string_view joined = text_.substr(symbols_[left].start, symbols_[left].length + symbols_[right].length);
    const TokenId id = vocab_.find(joined);
    if (id == kNoToken) return;
    queue_.push({left, right, vocab_.score(id), joined.size()});
  }

  // A symbol's token, else its bytes. Joins only ever form tokens, so a symbol that is no token is a
  // single character (llama.cpp's re-split along the joins never applies for that reason).
  void emit(size_t start, size_t length, std::vector<TokenId>& out) {
    const std::string_view s = text_.substr(start, length);
    if (const TokenId id = vocab_.find(s); id != kNoToken) {
      out.push_back(id);
      return;
    }
    for (char c : s) out.push_back(spm_byte_token(vocab_, static_cast<unsigned char>(c)));
  }

  const Vocab& vocab_;
  std::string_view text_;
  std::vector<SpmSymbol> symbols_;
  std::priority_queue<SpmPair, std::vector<SpmPair>, SpmPairOrder> queue_;
};

}  // namespace

TokenId spm_byte_token(const Vocab& vocab, unsigned char b) {
  if (const TokenId id = vocab.find(fmt::format("<0x{:02X}>", b)); id != kNoToken) return id;
  if (const TokenId id = vocab.find(std::string(1, static_cast<char>(b))); id != kNoToken) return id;
  fail("SentencePiece vocabulary has no byte token <0x{:02X}> for a character that is no token", b);
}

void spm_encode(const Vocab& vocab, std::string_view text, std::vector<TokenId>& out) { Session(vocab, text).run(out); }

}  // namespace tessera::tokenizers
