#pragma once
// Made-up but working vocabularies for random-weight models (`tessera init-model`): any size, encode
// and decode round-trip every UTF-8 text, and common lowercase text splits into multi-letter pieces the
// way a real vocabulary would, so that benchmarks and tests see realistic token counts.
//   spm: <unk> <s> </s>, the 256 byte tokens, then "▁" and printable ASCII pieces with and without
//        a leading "▁", then lowercase pairs and triples; scores fall with the id.
//   bpe: the 256 byte-level symbols, then merges building "Ġ"-led and plain lowercase pairs and
//        triples (each merge's result is the next id), and <|endoftext|> last (BOS = EOS = it).
#include <cstdint>

#include "tessera/io/gguf/gguf_writer.h"
#include "tessera/tokenizers/vocab.h"

namespace tessera::tokenizers {

// The vocabulary alone (indexed); n_vocab must be at least 260 (spm) or 257 (bpe).
Vocab synthetic_vocab(Model model, int64_t n_vocab);

// Writes `vocab` as tokenizer.ggml.* metadata (model, pre, tokens, scores, types, merges, special ids
// and flags), as vocab_from_gguf reads it back.
void write_vocab(io::gguf::Writer& writer, const Vocab& vocab);

}  // namespace tessera::tokenizers
