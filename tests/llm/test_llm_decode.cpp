// Decoding with the KV cache gives the logits of the whole-sequence forward: token by token, and in
// chunks of several tokens, on the tiny llama.cpp models (float and quantized) and small random ones.
#include <gtest/gtest.h>

#include "gguf/gguf_test_util.h"
#include "llm/parity_util.h"
#include "llm/tiny_models.h"
#include "tessera/backends/backend.h"
#include "tessera/core/error.h"
#include "tessera/models/llm/kv_cache.h"
#include "tessera/models/llm/prefill.h"
#include "tessera/models/llm/stacked_weight.h"

using namespace tessera;
using namespace tessera::models::llm;

namespace {

const std::vector<int64_t> kDecodeIds{3, 1, 4, 1, 5, 9, 2, 6, 5, 3, 5, 8};

// Logits of `ids` decoded in chunks of the given sizes, stacked [n, n_vocab].
Array decode_in_chunks(const LlmModel& model, const std::string& backend, const std::vector<int64_t>& ids,
                       const std::vector<size_t>& chunks) {
  Decoder decoder(model, backends::backend_by_name(backend));
  const int64_t v = model.config().n_vocab;
  Array out = Array::empty(DType::f32, {static_cast<int64_t>(ids.size()), v});
  size_t at = 0;
  for (size_t c = 0; at < ids.size(); ++c) {
    const size_t len = std::min(chunks[c % chunks.size()], ids.size() - at);
    const Array step = decoder.step({ids.begin() + static_cast<std::ptrdiff_t>(at),
                                     ids.begin() + static_cast<std::ptrdiff_t>(at + len)});
    std::copy(step.data<const float>(), step.data<const float>() + len * v, out.data<float>() + at * v);
    at += len;
  }
  EXPECT_EQ(decoder.position(), static_cast<int64_t>(ids.size()));
  return out;
}

// `cpu_tol` applies on the CPU backend, 1e-4 on the reference backend (exact products).
void expect_decode_matches_prefill(const LlmModel& model, const std::vector<int64_t>& ids, double cpu_tol,
                                   const std::string& what) {
  for (const char* backend : {"cpu", "reference"}) {
    const double tol = std::string(backend) == "cpu" ? cpu_tol : 1e-4;
    Prefill prefill(model, backends::backend_by_name(backend));
    const Array full = prefill.logits(ids);
    EXPECT_LT(test::compare_rows(decode_in_chunks(model, backend, ids, {1}), full).max_abs, tol)
        << what << " token by token on " << backend;
    EXPECT_LT(test::compare_rows(decode_in_chunks(model, backend, ids, {5, 1, 3}), full).max_abs, tol)
        << what << " in chunks on " << backend;
  }
}

TEST(LlmDecode, RandomModelsTokenByTokenEqualThePrefill) {
  test::TinyShape s;
  s.layers = 2;
  expect_decode_matches_prefill(LlmModel(test::parse_tiny(test::tiny_llama(s))), kDecodeIds, 1e-4, "llama");
  expect_decode_matches_prefill(LlmModel(test::parse_tiny(test::tiny_gpt2(s))), kDecodeIds, 1e-4, "gpt2");
}

TEST(LlmDecode, TinyLlamaCppModelsTokenByTokenEqualThePrefill) {
  TESSERA_REQUIRE_TESTDATA(data);
  // On the CPU, quantized products round the activations to 8-bit blocks as llama.cpp does; the float
  // rounding that differs between the two attention paths flips some of those roundings, which moves
  // the logits by a few hundredths (llama.cpp's own -ub 1 moves Q4_K_M's by 6.3e-2, README).
  for (const auto& [name, cpu_tol] : {std::pair{"tiny-llama-f32", 1e-4}, std::pair{"tiny-llama-q4_k", 0.05},
                                      std::pair{"tiny-gpt2-q8_0", 0.05}}) {
    const LlmModel model = LlmModel::load((data / "gguf" / (std::string(name) + ".gguf")).string());
    const auto ids = test::read_json(data / "logits" / (std::string(name) + ".tokens.json"))["token_ids"];
    expect_decode_matches_prefill(model, ids.get<std::vector<int64_t>>(), cpu_tol, name);
  }
}

TEST(LlmDecode, PastTheContextIsAnError) {
  test::TinyShape s;
  s.ctx = 4;
  const LlmModel model(test::parse_tiny(test::tiny_llama(s)));
  Decoder decoder(model, backends::backend_by_name("cpu"));
  decoder.step({1, 2, 3});
  try {
    decoder.step({1, 2});
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("decoding 2 more tokens at position 3 would pass the context length 4"),
              std::string::npos)
        << e.what();
  }
}

}  // namespace

TEST(LlmDecode, LastRowOnlyGivesTheLastTokensLogits) {
  test::TinyShape s;
  s.layers = 2;
  const LlmModel model(test::parse_tiny(test::tiny_llama(s)));
  Decoder all(model, backends::backend_by_name("cpu"), 32);
  Decoder last(model, backends::backend_by_name("cpu"), 32);
  const std::vector<int64_t> prompt(kDecodeIds.begin(), kDecodeIds.begin() + 6);
  const Array full = all.step(prompt);
  const Array one = last.step(prompt, /*last_row_only=*/true);
  ASSERT_EQ(one.shape(), (Shape{1, model.config().n_vocab}));
  const int64_t v = model.config().n_vocab;
  for (int64_t j = 0; j < v; ++j) EXPECT_NEAR(one.data<const float>()[j], full.data<const float>()[5 * v + j], 1e-5);
  // The caches agree: the next step gives the same logits either way.
  EXPECT_LT(test::compare_rows(all.step({7}), last.step({7}, true)).max_abs, 1e-5);
  EXPECT_EQ(last.context(), 32);
  EXPECT_THROW(Decoder(model, backends::backend_by_name("cpu"), model.config().n_ctx + 1), Error);
}

TEST(LlmDecode, HalfPrecisionCacheStaysCloseToTheF32One) {
  test::TinyShape s;
  s.layers = 2;
  const LlmModel model(test::parse_tiny(test::tiny_llama(s)));
  Decoder wide(model, backends::backend_by_name("cpu"), 32, DType::f32);
  Decoder half(model, backends::backend_by_name("cpu"), 32, DType::f16);
  const std::vector<int64_t> prompt(kDecodeIds.begin(), kDecodeIds.begin() + 5);
  EXPECT_LT(test::compare_rows(half.step(prompt), wide.step(prompt)).max_abs, 2e-2);
  for (int64_t t : {4, 2, 8}) EXPECT_LT(test::compare_rows(half.step({t}), wide.step({t})).max_abs, 2e-2);
  EXPECT_THROW(Decoder(model, backends::backend_by_name("cpu"), 32, DType::bf16).step({1}), Error);
}

TEST(LlmDecode, StackedProjectionsGiveTheLogitsOfSeparateOnes) {
  TESSERA_REQUIRE_TESTDATA(data);
  // Q4_K_M keeps blk.1.attn_v in Q6_K: there q and k stack and v stays alone, elsewhere all three stack.
  for (const char* name : {"tiny-llama-f32", "tiny-llama-q4_k_m"}) {
    const std::string path = (data / "gguf" / (std::string(name) + ".gguf")).string();
    const LlmModel separate = LlmModel::load(path);
    LoadOptions stacked_options;
    stacked_options.stack_projections = true;
    const LlmModel stacked = LlmModel::load(path, stacked_options);
    const auto ids = test::read_json(data / "logits" / (std::string(name) + ".tokens.json"))["token_ids"];
    const std::vector<int64_t> prompt = ids.get<std::vector<int64_t>>();
    for (const char* backend : {"cpu", "reference"}) {
      Decoder a(separate, backends::backend_by_name(backend)), b(stacked, backends::backend_by_name(backend));
      EXPECT_LT(test::compare_rows(b.step(prompt), a.step(prompt)).max_abs, 1e-4) << name << " prefill on " << backend;
      for (int64_t t : {4, 2}) {
        EXPECT_LT(test::compare_rows(b.step({t}), a.step({t})).max_abs, 1e-4) << name << " decode on " << backend;
      }
    }
  }
}

TEST(StackedWeight, StacksRunsOfOneTypeAndKeepsTheRowsOfEachPart) {
  const auto weight = [](const std::string& type, int64_t rows, uint8_t fill) {
    QuantWeight w;
    w.type = type;
    w.rows = rows;
    w.cols = 32;
    w.blocks = Tensor::from_array(Array::full(DType::u8, {rows, 34}, fill));
    return w;
  };
  const QuantWeight q = weight("q8_0", 4, 1), k = weight("q8_0", 2, 2), v = weight("q6_k", 2, 3);
  const std::vector<StackedWeight> stacks = stack_weights({&q, &k, &v}, true);
  ASSERT_EQ(stacks.size(), 2u);
  EXPECT_EQ(stacks[0].rows, (std::vector<int64_t>{4, 2}));
  EXPECT_EQ(stacks[0].weight.rows, 6);
  const Array bytes = stacks[0].weight.blocks.array();
  EXPECT_EQ(bytes.shape(), (Shape{6, 34}));
  EXPECT_EQ(bytes.data<const uint8_t>()[3 * 34], 1);
  EXPECT_EQ(bytes.data<const uint8_t>()[4 * 34], 2);
  EXPECT_EQ(stacks[1].weight.type, "q6_k");
  EXPECT_EQ(stacks[1].rows, (std::vector<int64_t>{2}));
  EXPECT_EQ(stack_weights({&q, &k, &v}, false).size(), 3u);
}
