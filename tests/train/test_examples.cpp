// The example programs build, run and do what their comments promise.
#include <string>

#include "train_helpers.h"

using namespace tessera;
using namespace tessera::test;

namespace {
// The number printed right after `label` in `text` (NaN if the label is missing).
double number_after(const std::string& text, const std::string& label) {
  const size_t at = text.rfind(label);
  if (at == std::string::npos) return std::nan("");
  return std::strtod(text.c_str() + at + label.size(), nullptr);
}
}  // namespace

TEST(Examples, TrainMlpLearnsFashionMnist) {
  REQUIRE_FASHION_MNIST();
  TempDir dir;
  // Two epochs over 512 examples (16 Adam steps); the evaluation covers the whole test set.
  const CliResult r = run_sibling("example_train_mlp", "2 512", dir);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(contains(r.out, "epoch 1: mean train loss")) << r.out;
  EXPECT_TRUE(contains(r.out, "epoch 2: mean train loss")) << r.out;
  const double accuracy = number_after(r.out, "test accuracy: ");
  ASSERT_FALSE(std::isnan(accuracy)) << r.out;
  EXPECT_GT(accuracy, 50.0) << r.out;
  EXPECT_LE(accuracy, 100.0) << r.out;
}

TEST(Examples, CustomModuleCutsTheLossTenfold) {
  TempDir dir;
  const CliResult r = run_sibling("example_custom_module", "300", dir);
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_TRUE(contains(r.out, "ResidualBlock")) << r.out;  // the summary
  EXPECT_TRUE(contains(r.out, "gate f32[1]")) << r.out;
  // The last line reads "loss FIRST -> LAST".
  const size_t line = r.out.rfind("\nloss ");
  ASSERT_NE(line, std::string::npos) << r.out;
  const double first = number_after(r.out.substr(line), "loss ");
  const double last = number_after(r.out.substr(line), " -> ");
  ASSERT_FALSE(std::isnan(first) || std::isnan(last)) << r.out;
  EXPECT_LT(last, first / 10.0) << r.out;
}
