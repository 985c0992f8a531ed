#pragma once
// Byte-level BPE on one pre-token (a word already mapped to GPT-2's byte alphabet): start from its
// characters, repeatedly apply the lowest-ranked merge among adjacent pairs (ties: leftmost), and emit
// each final symbol's token. With vocab.ignore_merges (Llama 3) a word that is a token is emitted whole.
#include <string_view>
#include <vector>

#include "tessera/tokenizers/vocab.h"

namespace tessera::tokenizers {

void bpe_encode_word(const Vocab& vocab, std::string_view word, std::vector<TokenId>& out);

}  // namespace tessera::tokenizers
