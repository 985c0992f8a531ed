#pragma once
// A Vocab from a Hugging Face tokenizer folder (what `tessera convert` writes into the GGUF file with
// write_vocab), read from the files transformers saves:
//   tokenizer.json with a byte-level BPE model (GPT-2, Llama 3): tokenizer.ggml.model "gpt2", the
//     pre-tokenizer named from its pre_tokenizer (GPT-2's ByteLevel regex -> "gpt-2", Llama 3's Split
//     pattern -> "llama-bpe"), tokens in id order, merges in rank order;
//   tokenizer.json with a SentencePiece-style BPE model (byte_fallback, "▁" for spaces, as
//     LlamaTokenizerFast writes it): tokenizer.ggml.model "llama", each token scored -rank of the first
//     merge that makes it (so SentencePiece's best-scored-pair-first order is HF's lowest-rank-first),
//     <0xNN> tokens typed byte, the unknown token unknown;
//   vocab.json + merges.txt (GPT-2's slow-tokenizer files), byte-level BPE as above.
// Special tokens come from tokenizer.json's added_tokens (special: control, else user-defined) and
// tokenizer_config.json's added_tokens_decoder; BOS/EOS/UNK from tokenizer_config.json (or
// special_tokens_map.json), else the ids the caller read from config.json, else the family's usual
// names (<|endoftext|> for GPT-2, <s> </s> for SentencePiece). add_bos_token/add_eos_token come from
// tokenizer_config.json when it has them, else from tokenizer.json's post-processor template, else the
// llama.cpp default for the model. The vocabulary is padded with unused "[PAD<i>]" tokens up to the
// model's embedding rows. A folder with only tokenizer.model (a SentencePiece protobuf) is refused
// naming what is supported, as is any other model type or pre-tokenizer; every error names the file
// and the key.
#include <cstdint>
#include <optional>
#include <string>

#include "tessera/tokenizers/vocab.h"

namespace tessera::tokenizers {

struct HfVocabOptions {
  std::string family = "gpt2";            // "gpt2" or "llama": the defaults for what the files leave open
  int64_t n_vocab = 0;                    // embedding rows: the vocabulary is padded to this size (0: no padding)
  std::optional<int64_t> bos_id, eos_id;  // config.json's bos_token_id / eos_token_id, when integers
};

struct HfVocab {
  Vocab vocab;
  std::string source;  // e.g. "tokenizer.json (byte-level BPE, pre-tokenizer llama-bpe)"
};

HfVocab vocab_from_hf(const std::string& folder, const HfVocabOptions& options);

}  // namespace tessera::tokenizers
