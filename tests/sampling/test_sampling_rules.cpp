// Each sampling rule on hand-made logits, where the surviving tokens follow from its definition.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "tessera/core/error.h"
#include "tessera/models/sampling/rules.h"

namespace tessera::models::sampling {
namespace {

std::vector<int32_t> ids(const Candidates& c) {
  std::vector<int32_t> out;
  for (const auto& x : c.items) out.push_back(x.id);
  return out;
}

// Logits whose softmax is exactly `probs` (up to rounding).
Candidates from_probs(const std::vector<double>& probs) {
  std::vector<float> logits;
  for (double p : probs) logits.push_back(static_cast<float>(std::log(p)));
  return Candidates::from_logits(logits);
}

TEST(SamplingRules, TopKKeepsTheKLargest) {
  auto c = Candidates::from_logits(std::vector<float>{0.5f, 3.0f, -1.0f, 2.0f, 2.5f});
  keep_top_k(c, 3);
  EXPECT_EQ(ids(c), (std::vector<int32_t>{1, 4, 3}));
  auto all = Candidates::from_logits(std::vector<float>{1, 2});
  keep_top_k(all, 0);  // off
  EXPECT_EQ(all.items.size(), 2u);
  keep_top_k(all, 10);  // more than there are
  EXPECT_EQ(all.items.size(), 2u);
}

TEST(SamplingRules, TopKOfOneIsGreedy) {
  const std::vector<float> logits{0.1f, -2.0f, 4.0f, 3.9f, 0.0f};
  auto c = Candidates::from_logits(logits);
  keep_top_k(c, 1);
  ASSERT_EQ(c.items.size(), 1u);
  EXPECT_EQ(c.items[0].id, argmax(Candidates::from_logits(logits)));
  EXPECT_EQ(c.items[0].id, 2);
}

TEST(SamplingRules, TopPKeepsTheSmallestSetReachingP) {
  // Sorted 0.5, 0.3, 0.15, 0.05: p = 0.75 is first reached by the top two (0.8).
  auto c = from_probs({0.15, 0.5, 0.05, 0.3});
  keep_top_p(c, 0.75f);
  EXPECT_EQ(ids(c), (std::vector<int32_t>{1, 3}));
  auto d = from_probs({0.15, 0.5, 0.05, 0.3});
  keep_top_p(d, 0.5f);  // the top token alone reaches 0.5 (rounding may push it to the next)
  EXPECT_LE(d.items.size(), 2u);
  EXPECT_EQ(d.items[0].id, 1);
  auto e = from_probs({0.15, 0.5, 0.05, 0.3});
  keep_top_p(e, 0.9f);
  EXPECT_EQ(ids(e), (std::vector<int32_t>{1, 3, 0}));
  auto f = from_probs({0.15, 0.5, 0.05, 0.3});
  keep_top_p(f, 1.0f);  // off
  EXPECT_EQ(f.items.size(), 4u);
}

TEST(SamplingRules, MinPDropsTokensBelowPTimesTheMax) {
  // max p 0.5: min_p 0.2 keeps p >= 0.1, i.e. 0.5, 0.3, 0.15 and drops 0.05.
  auto c = from_probs({0.15, 0.5, 0.05, 0.3});
  keep_min_p(c, 0.2f);
  EXPECT_EQ(ids(c), (std::vector<int32_t>{1, 3, 0}));
  auto d = from_probs({0.15, 0.5, 0.05, 0.3});
  keep_min_p(d, 0.7f);  // p >= 0.35
  EXPECT_EQ(ids(d), (std::vector<int32_t>{1}));
  auto e = from_probs({0.15, 0.5, 0.05, 0.3});
  keep_min_p(e, 0.0f);  // off
  EXPECT_EQ(e.items.size(), 4u);
}

TEST(SamplingRules, RepetitionPenaltyDividesPositiveAndMultipliesNegative) {
  auto c = Candidates::from_logits(std::vector<float>{2.0f, -1.0f, 3.0f, -0.5f});
  const std::vector<int32_t> recent{0, 1, 1};  // token 1 counts once
  apply_repetition_penalty(c, recent, 2.0f);
  EXPECT_FLOAT_EQ(c.items[0].logit, 1.0f);
  EXPECT_FLOAT_EQ(c.items[1].logit, -2.0f);
  EXPECT_FLOAT_EQ(c.items[2].logit, 3.0f);
  EXPECT_FLOAT_EQ(c.items[3].logit, -0.5f);
  EXPECT_THROW(apply_repetition_penalty(c, recent, 0.0f), Error);
}

TEST(SamplingRules, TemperatureScalesLogits) {
  auto c = Candidates::from_logits(std::vector<float>{1.0f, 2.0f});
  apply_temperature(c, 0.5f);
  EXPECT_FLOAT_EQ(c.items[0].logit, 2.0f);
  EXPECT_FLOAT_EQ(c.items[1].logit, 4.0f);
  c.softmax();
  EXPECT_NEAR(c.items[0].p, 1.0 / (1.0 + std::exp(-2.0)), 1e-6);
  EXPECT_THROW(apply_temperature(c, 0.0f), Error);
}

TEST(SamplingRules, SoftmaxIgnoresMinusInfinityAndRejectsNaN) {
  auto c = Candidates::from_logits(std::vector<float>{0.0f, -INFINITY, 0.0f});
  c.softmax();
  EXPECT_FLOAT_EQ(c.items[0].p, 0.5f);
  EXPECT_FLOAT_EQ(c.items[2].p, 0.0f);
  EXPECT_THROW(Candidates::from_logits(std::vector<float>{0.0f, NAN}), Error);
  EXPECT_THROW(Candidates::from_logits(std::vector<float>{}), Error);
}

}  // namespace
}  // namespace tessera::models::sampling
