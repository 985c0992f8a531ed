// Bad GGUF models and bad token sequences: every one is a tessera::Error whose message names what is
// wrong (the architecture, the key, the tensor and both shapes), never a crash.
#include <gtest/gtest.h>

#include "llm/tiny_models.h"
#include "tessera/backends/cpu/cpu_backend.h"
#include "tessera/core/error.h"
#include "tessera/models/llm/prefill.h"

using namespace tessera;
using namespace tessera::models::llm;
using test::parse_tiny;
using test::tiny_gpt2;
using test::tiny_llama;

namespace {

// The message of the error loading `w` raises (fails the test when it loads).
std::string load_error(const io::gguf::Writer& w) {
  try {
    LlmModel model(parse_tiny(w));
  } catch (const Error& e) {
    return e.what();
  }
  ADD_FAILURE() << "the model loaded";
  return "";
}

bool drop(const std::string& name, const std::string& target) {
  return name != target;
}

TEST(LlmBadInput, UnknownArchitectureIsNamed) {
  io::gguf::Writer w = tiny_llama();
  w.set("general.architecture", io::gguf::Value::string("mamba"));
  const std::string msg = load_error(w);
  EXPECT_NE(msg.find("tiny.gguf"), std::string::npos) << msg;
  EXPECT_NE(msg.find("unsupported architecture \"mamba\""), std::string::npos) << msg;
}

TEST(LlmBadInput, MissingArchitectureKey) {
  io::gguf::Writer w = tiny_llama();
  w.remove("general.architecture");
  EXPECT_NE(load_error(w).find("missing metadata key 'general.architecture'"), std::string::npos);
}

TEST(LlmBadInput, MissingKeysAreNamed) {
  for (const char* key : {"llama.embedding_length", "llama.block_count", "llama.attention.head_count",
                          "llama.feed_forward_length", "llama.context_length",
                          "llama.attention.layer_norm_rms_epsilon"}) {
    io::gguf::Writer w = tiny_llama();
    w.remove(key);
    const std::string msg = load_error(w);
    EXPECT_NE(msg.find(std::string("missing metadata key '") + key + "'"), std::string::npos) << msg;
  }
  io::gguf::Writer g = tiny_gpt2();
  g.remove("gpt2.attention.layer_norm_epsilon");
  EXPECT_NE(load_error(g).find("'gpt2.attention.layer_norm_epsilon'"), std::string::npos);
}

TEST(LlmBadInput, MistypedAndInconsistentKeysAreNamed) {
  io::gguf::Writer w = tiny_llama();
  w.set("llama.block_count", io::gguf::Value::string("two"));
  EXPECT_NE(load_error(w).find("'llama.block_count'"), std::string::npos);

  w = tiny_llama();
  w.set("llama.attention.head_count_kv", io::gguf::Value::u32(3));  // 4 query heads
  std::string msg = load_error(w);
  EXPECT_NE(msg.find("llama.attention.head_count = 4 is not a multiple of llama.attention.head_count_kv = 3"),
            std::string::npos)
      << msg;

  w = tiny_llama();
  w.set("llama.attention.head_count", io::gguf::Value::u32(5));  // 16 wide
  w.set("llama.attention.head_count_kv", io::gguf::Value::u32(5));
  EXPECT_NE(load_error(w).find("llama.embedding_length = 16 is not a multiple of llama.attention.head_count = 5"),
            std::string::npos);

  w = tiny_llama();
  w.set("llama.vocab_size", io::gguf::Value::u32(12));
  msg = load_error(w);
  EXPECT_NE(msg.find("llama.vocab_size = 12 disagrees with tensor 'token_embd.weight', which has 11 rows"),
            std::string::npos)
      << msg;

  w = tiny_llama();
  w.set("llama.rope.dimension_count", io::gguf::Value::u32(3));
  EXPECT_NE(load_error(w).find("llama.rope.dimension_count = 3 must be even"), std::string::npos);

  w = tiny_llama();
  w.set("llama.attention.layer_norm_rms_epsilon", io::gguf::Value::f32(-1.0f));
  EXPECT_NE(load_error(w).find("'llama.attention.layer_norm_rms_epsilon' = -1 must be a positive number"),
            std::string::npos);

  w = tiny_llama();
  w.set("llama.block_count", io::gguf::Value::u32(0));
  EXPECT_NE(load_error(w).find("'llama.block_count' = 0 is out of range"), std::string::npos);
}

TEST(LlmBadInput, MissingTensorIsNamed) {
  const std::string msg = load_error(tiny_llama({}, [](const std::string& n, Array&) {
    return drop(n, "blk.0.ffn_up.weight");
  }));
  EXPECT_NE(msg.find("missing tensor 'blk.0.ffn_up.weight' (llama expects it with GGUF ne [16, 24])"),
            std::string::npos)
      << msg;
  const std::string g = load_error(tiny_gpt2({}, [](const std::string& n, Array&) {
    return drop(n, "blk.0.attn_qkv.bias");
  }));
  EXPECT_NE(g.find("missing tensor 'blk.0.attn_qkv.bias'"), std::string::npos) << g;
  const std::string e = load_error(tiny_llama({}, [](const std::string& n, Array&) {
    return drop(n, "token_embd.weight");
  }));
  EXPECT_NE(e.find("missing tensor 'token_embd.weight'"), std::string::npos) << e;
}

TEST(LlmBadInput, WrongTensorShapeNamesTensorAndBothShapes) {
  const std::string msg = load_error(tiny_llama({}, [](const std::string& n, Array& a) {
    if (n == "blk.0.attn_k.weight") a = Array::zeros(DType::f32, {16, 16});  // 2 KV heads of 4 need 8 rows
    return true;
  }));
  EXPECT_NE(msg.find("tensor 'blk.0.attn_k.weight' has GGUF ne [16, 16], but llama with this file's "
                     "hyperparameters expects [16, 8]"),
            std::string::npos)
      << msg;
  const std::string norm = load_error(tiny_gpt2({}, [](const std::string& n, Array& a) {
    if (n == "output_norm.bias") a = Array::zeros(DType::f32, {1, 16});
    return true;
  }));
  EXPECT_NE(norm.find("tensor 'output_norm.bias' has GGUF ne [16, 1]"), std::string::npos) << norm;
}

TEST(LlmBadInput, BadTokenSequences) {
  const LlmModel model(parse_tiny(tiny_llama()));
  Prefill prefill(model, backends::cpu_backend());
  const auto error_of = [&](const std::vector<int64_t>& ids) -> std::string {
    try {
      prefill.logits(ids);
    } catch (const Error& e) {
      return e.what();
    }
    return "";
  };
  EXPECT_NE(error_of({}).find("the sequence is empty"), std::string::npos);
  EXPECT_NE(error_of({1, 11}).find("token 11 at position 1 is outside the vocabulary [0, 11)"), std::string::npos);
  EXPECT_NE(error_of({-1}).find("token -1 at position 0"), std::string::npos);
  EXPECT_NE(error_of(std::vector<int64_t>(33, 1)).find("33 tokens exceed the context length 32"), std::string::npos);
}

}  // namespace
