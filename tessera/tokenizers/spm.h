#pragma once
// SentencePiece-style encoding of one piece of text (llama.cpp's "SPM"): start from single characters,
// repeatedly join the adjacent pair whose joined text is the highest-scoring token (ties: leftmost),
// then emit each final symbol as its token, falling back to byte tokens <0xXX> for a character that is
// no token.
// The caller has already replaced spaces by U+2581 and added the leading one.
#include <string_view>
#include <vector>

#include "tessera/tokenizers/vocab.h"

namespace tessera::tokenizers {

void spm_encode(const Vocab& vocab, std::string_view text, std::vector<TokenId>& out);

// The byte token for `b`: <0xXX>, else the one-byte text itself; throws naming the byte if neither.
TokenId spm_byte_token(const Vocab& vocab, unsigned char b);

}  // namespace tessera::tokenizers
