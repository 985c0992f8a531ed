#pragma once
// A tokenizer's vocabulary as GGUF stores it (tokenizer.ggml.*): the token strings with their scores
// and types, the BPE merges, the special ids and the flags that steer encoding and decoding. The
// algorithms (spm.h, bpe.h) read it; vocab_from_gguf (gguf_vocab.h) fills it.
#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace tessera::tokenizers {

using TokenId = int32_t;
inline constexpr TokenId kNoToken = -1;
// U+2581 LOWER ONE EIGHTH BLOCK: SentencePiece's visible space in pieces.
inline constexpr std::string_view kSpmSpace = "\xE2\x96\x81";

// tokenizer.ggml.token_type, as llama.cpp numbers them.
enum class TokenType : int32_t {
  undefined = 0,
  normal = 1,
  unknown = 2,
  control = 3,
  user_defined = 4,
  unused = 5,
  byte = 6,
};

enum class Model { spm, bpe };                    // tokenizer.ggml.model "llama" / "gpt2"
enum class PreTokenizer { none, gpt2, llama3 };   // tokenizer.ggml.pre, for BPE

struct Vocab {
  Model model = Model::spm;
  PreTokenizer pre = PreTokenizer::none;
  std::string pre_name;  // as the file spells it, for messages
  std::vector<std::string> tokens;
  std::vector<float> scores;     // SPM merge priorities (empty: all 0)
  std::vector<TokenType> types;  // one per token
  std::unordered_map<std::string, TokenId> ids;  // text -> id; a repeated text keeps its last id

  // BPE merges: "left right" -> rank (its index in tokenizer.ggml.merges).
  std::unordered_map<std::string, int32_t> merge_ranks;

  TokenId bos = kNoToken, eos = kNoToken, unk = kNoToken;
  bool add_bos = false, add_eos = false;
  bool add_space_prefix = false;  // SPM: a space before text that starts the input or follows a special token
  bool clean_spaces = false;      // decode drops the space before . , ! ? and some contractions (BPE)
  bool ignore_merges = false;     // Llama 3: a pre-token that is a whole token skips the merges

  // Control, user-defined and unknown tokens, longest text first: what encode() matches whole.
  std::vector<TokenId> specials;

  int64_t size() const { return static_cast<int64_t>(tokens.size()); }
  TokenType type(TokenId id) const { return types[static_cast<size_t>(id)]; }
  float score(TokenId id) const { return scores.empty() ? 0.0f : scores[static_cast<size_t>(id)]; }
  TokenId find(std::string_view text) const;  // kNoToken when absent
  int32_t merge_rank(std::string_view left, std::string_view right) const;  // -1 when not a merge

  // Fills `ids` and `specials` from tokens/types; called once the lists are set.
  void index();
};

// The key of a merge in merge_ranks.
std::string merge_key(std::string_view left, std::string_view right);

}  // namespace tessera::tokenizers
