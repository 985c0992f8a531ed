// Tessera's Llama and GPT-2 graphs against llama.cpp on the tiny models of ../shared/testdata: logits at
// every prompt position within the README's thresholds for each weight type, and teacher-forced greedy
// agreement (the prompt and llama.cpp's 32 greedy tokens fed at once; at each step our argmax must be
// llama.cpp's next token unless our own top-2 margin is below the type's max threshold, a near-tie).
// Both the reference backend (weights decoded exactly, products in double) and the CPU backend
// (llama.cpp-style integer dot products on quantized activations) are checked.
#include <gtest/gtest.h>

#include <cstdio>

#include "gguf/gguf_test_util.h"
#include "llm/parity_util.h"
#include "tessera/backends/backend.h"
#include "tessera/backends/cpu/cpu_backend.h"
#include "tessera/io/npy.h"
#include "tessera/models/llm/prefill.h"

using namespace tessera;
using namespace tessera::models::llm;

namespace {

struct Case {
  std::string model;  // file stem, e.g. "tiny-llama-q4_k"
  std::string backend;
};

std::string type_of(const std::string& model) {
  return model.substr(model.rfind('-') + 1);
}

class LlmParity : public ::testing::TestWithParam<Case> {};

TEST_P(LlmParity, LogitsAndTeacherForcedGreedyMatchLlamaCpp) {
  TESSERA_REQUIRE_TESTDATA(data);
  const Case& c = GetParam();
  const test::Thresholds limit = test::thresholds_for(type_of(c.model));
  const LlmModel model = LlmModel::load((data / "gguf" / (c.model + ".gguf")).string());
  const auto tokens = test::read_json(data / "logits" / (c.model + ".tokens.json"));
  const auto greedy = test::read_json(data / "logits" / (c.model + ".greedy.json"));
  const Array expected = io::load_npy((data / "logits" / (c.model + ".logits.npy")).string());

  std::vector<int64_t> ids = tokens["token_ids"].get<std::vector<int64_t>>();
  ASSERT_EQ(ids, greedy["prompt_token_ids"].get<std::vector<int64_t>>());
  const auto generated = greedy["generated_token_ids"].get<std::vector<int64_t>>();
  const size_t n_prompt = ids.size();
  ids.insert(ids.end(), generated.begin(), generated.end() - 1);  // the last one is never fed

  Prefill prefill(model, backends::backend_by_name(c.backend));
  const Array logits = prefill.logits(ids);
  ASSERT_EQ(logits.shape(), (Shape{static_cast<int64_t>(ids.size()), model.config().n_vocab}));

  // Causal attention: the first n_prompt rows are the prompt's logits whatever follows.
  const test::Diff d = test::compare_rows(logits, expected);
  EXPECT_LE(d.max_abs, limit.max_abs) << c.model << " on " << c.backend;
  EXPECT_LE(d.mean_abs, limit.mean_abs) << c.model << " on " << c.backend;

  const int64_t n_vocab = model.config().n_vocab;
  const float* rows = logits.data<const float>();
  int agree = 0, near_ties = 0;
  for (size_t s = 0; s < generated.size(); ++s) {
    const float* row = rows + static_cast<int64_t>(n_prompt - 1 + s) * n_vocab;
    const test::Top2 t = test::top2(row, n_vocab);
    if (t.best == generated[s]) {
      ++agree;
    } else if (t.margin < limit.max_abs) {
      ++near_ties;  // llama.cpp's choice must still be within the tolerance of our best
      EXPECT_LE(row[t.best] - row[generated[s]], limit.max_abs) << c.model << " step " << s;
    } else {
      ADD_FAILURE() << c.model << " on " << c.backend << ": step " << s << " picks " << t.best << " by a margin of "
                    << t.margin << ", llama.cpp picked " << generated[s];
    }
  }
  std::printf("[parity] %-18s %-9s max|d| %.3e mean|d| %.3e greedy %d/%zu (near-ties %d)\n", c.model.c_str(),
              c.backend.c_str(), d.max_abs, d.mean_abs, agree, generated.size(), near_ties);
}

std::vector<Case> all_cases() {
  const char* models[] = {"tiny-llama-f32",  "tiny-llama-f16",  "tiny-llama-bf16",   "tiny-llama-q8_0",
                          "tiny-llama-q4_0", "tiny-llama-q4_1", "tiny-llama-q5_0",   "tiny-llama-q5_1",
                          "tiny-llama-q2_k", "tiny-llama-q3_k", "tiny-llama-q4_k",   "tiny-llama-q5_k",
                          "tiny-llama-q6_k", "tiny-llama-q4_k_m", "tiny-gpt2-f32", "tiny-gpt2-q8_0"};
  std::vector<Case> cases;
  for (const char* m : models)
    for (const char* b : {"cpu", "reference"}) cases.push_back({m, b});
  return cases;
}

INSTANTIATE_TEST_SUITE_P(Tiny, LlmParity, ::testing::ValuesIn(all_cases()),
                         [](const ::testing::TestParamInfo<Case>& p) {
                           std::string name = p.param.model + "_" + p.param.backend;
                           for (char& ch : name)
                             if (ch == '-') ch = '_';
                           return name;
                         });

}  // namespace
