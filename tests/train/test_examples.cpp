// The example programs build, run and do what their comments promise.
#include <regex>

#include "train_helpers.h"

using namespace tessera;
using namespace tessera::test;

TEST(Examples, TrainMlpLearnsFashionMnist) {
  REQUIRE_FASHION_MNIST();
  TempDir dir;
  // Two epochs over 512 examples (16 Adam steps); the evaluation covers the whole test set.
  const CliResult r = run_sibling("example_train_mlp", "2 512", dir);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(contains(r.out, "epoch 1: mean train loss")) << r.out;
  EXPECT_TRUE(contains(r.out, "epoch 2: mean train loss")) << r.out;
  std::smatch m;
  ASSERT_TRUE(std::regex_search(r.out, m, std::regex(R"(test accuracy: ([0-9.]+)%)"))) << r.out;
  const double accuracy = std::stod(m[1].str());
  EXPECT_GT(accuracy, 50.0) << r.out;
  EXPECT_LE(accuracy, 100.0) << r.out;
}

TEST(Examples, CustomModuleCutsTheLossTenfold) {
  TempDir dir;
  const CliResult r = run_sibling("example_custom_module", "300", dir);
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_TRUE(contains(r.out, "ResidualBlock")) << r.out;  // the summary
  EXPECT_TRUE(contains(r.out, "gate f32[1]")) << r.out;
  std::smatch m;
  ASSERT_TRUE(std::regex_search(r.out, m, std::regex(R"(loss ([0-9.]+) -> ([0-9.]+))"))) << r.out;
  EXPECT_LT(std::stod(m[2].str()), std::stod(m[1].str()) / 10.0) << r.out;
}
