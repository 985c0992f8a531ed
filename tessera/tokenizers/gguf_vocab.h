#pragma once
// Reads a Vocab from a GGUF file's tokenizer.ggml.* metadata, with llama.cpp's defaults for what the
// file leaves out (SPM: BOS 1, EOS 2, unknown 0, add_bos, a space prefix; BPE: no BOS unless the
// pre-tokenizer is Llama 3's). A missing or malformed key, an unknown tokenizer.ggml.model or
// tokenizer.ggml.pre, or lists of different lengths raise tessera::Error naming the key and the file.
#include "tessera/io/gguf/gguf_reader.h"
#include "tessera/tokenizers/vocab.h"

namespace tessera::tokenizers {

Vocab vocab_from_gguf(const io::gguf::Reader& file);

}  // namespace tessera::tokenizers
