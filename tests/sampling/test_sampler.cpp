// The whole sampler: greedy at temperature 0, reproducible for a seed, and drawing tokens with the
// probabilities its rules leave (checked over many draws).
#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <vector>

#include "tessera/core/error.h"
#include "tessera/models/sampling/sampler.h"

namespace tessera::models::sampling {
namespace {

const std::vector<float> kLogits{1.0f, 3.0f, 2.0f, -1.0f, 2.5f, 0.0f};

TEST(Sampler, TemperatureZeroIsGreedy) {
  Sampler s({.temperature = 0.0f});
  for (int i = 0; i < 5; ++i) EXPECT_EQ(s.sample(kLogits), 1);
}

TEST(Sampler, TopKOneIsGreedyAtAnyTemperature) {
  Sampler s({.temperature = 5.0f, .top_k = 1, .seed = 7});
  for (int i = 0; i < 50; ++i) EXPECT_EQ(s.sample(kLogits), 1);
}

TEST(Sampler, RepetitionPenaltyChangesTheGreedyChoice) {
  Sampler s({.temperature = 0.0f, .repeat_penalty = 1.5f, .repeat_last_n = 2});
  s.accept(1);  // 3.0 / 1.5 = 2.0 < 2.5
  EXPECT_EQ(s.sample(kLogits), 4);
  s.accept(7);
  s.accept(8);  // token 1 left the window of 2
  EXPECT_EQ(s.sample(kLogits), 1);
}

TEST(Sampler, SameSeedSameSequence) {
  const SamplingParams params{.temperature = 1.0f, .top_k = 0, .top_p = 1.0f, .min_p = 0.0f, .seed = 42};
  Sampler a(params), b(params);
  std::vector<int32_t> sa, sb;
  for (int i = 0; i < 200; ++i) {
    sa.push_back(a.sample(kLogits));
    sb.push_back(b.sample(kLogits));
  }
  EXPECT_EQ(sa, sb);
  SamplingParams other = params;
  other.seed = 43;
  Sampler c(other);
  std::vector<int32_t> sc;
  for (int i = 0; i < 200; ++i) sc.push_back(c.sample(kLogits));
  EXPECT_NE(sa, sc);
}

TEST(Sampler, DrawsMatchTheDistribution) {
  // No truncation: frequencies approach softmax(logits / T). 200k draws: the standard error of each
  // frequency is below 0.0012, so 0.006 is five of them.
  const float t = 0.7f;
  Sampler s({.temperature = t, .top_k = 0, .top_p = 1.0f, .min_p = 0.0f, .seed = 1});
  const int n = 200000;
  std::map<int32_t, int> counts;
  for (int i = 0; i < n; ++i) counts[s.sample(kLogits)]++;
  double z = 0;
  for (float l : kLogits) z += std::exp(l / t);
  for (size_t id = 0; id < kLogits.size(); ++id) {
    const double expected = std::exp(kLogits[id] / t) / z;
    EXPECT_NEAR(counts[static_cast<int32_t>(id)] / static_cast<double>(n), expected, 0.006) << "token " << id;
  }
}

TEST(Sampler, TruncatedTokensAreNeverDrawn) {
  // top-k 3 leaves tokens 1, 4, 2; min-p 0.5 then drops 2 (p(2)/p(1) = e^-1 < 0.5 at T = 1).
  Sampler s({.temperature = 1.0f, .top_k = 3, .top_p = 1.0f, .min_p = 0.5f, .seed = 3});
  std::map<int32_t, int> counts;
  for (int i = 0; i < 5000; ++i) counts[s.sample(kLogits)]++;
  EXPECT_EQ(counts.size(), 2u);
  EXPECT_GT(counts[1], counts[4]);
  EXPECT_GT(counts[4], 0);
}

TEST(Sampler, OptionsOutOfRangeAreNamed) {
  const auto message = [](const SamplingParams& p) {
    try {
      Sampler s(p);
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string("(no error)");
  };
  EXPECT_NE(message({.temperature = -1.0f}).find("--temp"), std::string::npos);
  EXPECT_NE(message({.top_k = -3}).find("--top-k"), std::string::npos);
  EXPECT_NE(message({.top_p = 0.0f}).find("--top-p"), std::string::npos);
  EXPECT_NE(message({.min_p = 1.5f}).find("--min-p"), std::string::npos);
  EXPECT_NE(message({.repeat_penalty = 0.0f}).find("--repeat-penalty"), std::string::npos);
}

}  // namespace
}  // namespace tessera::models::sampling
