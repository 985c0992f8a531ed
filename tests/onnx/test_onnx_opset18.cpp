// Opset 18 (ONNX 1.13, what PyTorch's dynamo exporter writes): reductions taking axes as an input,
// Split's num_outputs, Pad's axes, Resize's axes and aspect-ratio policy, and the new Mish,
// GroupNormalization and CenterCropPad, each against values worked out by hand. Debian's conformance
// data stops at opset 17, so these are the opset's only value tests.
#include <gtest/gtest.h>

#include <cmath>

#include "onnx_builder.h"
#include "tessera/backends/backend.h"
#include "tessera/core/error.h"
#include "tessera/io/onnx/onnx_import.h"

namespace tessera::test {
namespace {

constexpr int64_t kOpset = 18;

std::vector<Array> run(const ModelBuilder& b, const std::vector<Array>& inputs) {
  const auto g = io::onnx::import_onnx(b.parse());
  return backends::reference_backend().compile(g.graph)->run(inputs);
}

std::string import_error(const ModelBuilder& b) {
  try {
    io::onnx::import_onnx(b.parse());
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

const Array k2x3 = Array::from_vector<float>({1, 2, 3, 4, 5, 6}, {2, 3});

TEST(OnnxOpset18, ReductionsTakeAxesAsAnInput) {
  ModelBuilder b(kOpset);
  b.input("x", {int64_t{2}, int64_t{3}}).output("mean").output("max").output("same");
  b.int_initializer("axes", {1});
  set_int(b.node("ReduceMean", {"x", "axes"}, {"mean"}), "keepdims", 0);
  b.node("ReduceMax", {"x"}, {"max"});  // no axes: every axis
  set_int(b.node("ReduceMin", {"x"}, {"same"}), "noop_with_empty_axes", 1);
  const auto out = run(b, {k2x3});
  EXPECT_EQ(out[0].to_vector<float>(), (std::vector<float>{2, 5}));
  EXPECT_EQ(out[1].shape(), (Shape{1, 1}));
  EXPECT_EQ(out[1].to_vector<float>(), (std::vector<float>{6}));
  EXPECT_EQ(out[2].to_vector<float>(), k2x3.to_vector<float>());
}

TEST(OnnxOpset18, SplitIntoNumOutputsMakesTheLastPartShorter) {
  ModelBuilder b(kOpset);
  b.input("x", {int64_t{5}}).output("a").output("b").output("c");
  set_int(b.node("Split", {"x"}, {"a", "b", "c"}), "num_outputs", 3);
  const auto out = run(b, {Array::from_vector<float>({0, 1, 2, 3, 4}, {5})});
  EXPECT_EQ(out[0].to_vector<float>(), (std::vector<float>{0, 1}));
  EXPECT_EQ(out[1].to_vector<float>(), (std::vector<float>{2, 3}));
  EXPECT_EQ(out[2].to_vector<float>(), (std::vector<float>{4}));

  ModelBuilder wrong(kOpset);
  wrong.input("x", {int64_t{5}}).output("a").output("b");
  set_int(wrong.node("Split", {"x"}, {"a", "b"}, "split_it"), "num_outputs", 3);
  const std::string e = import_error(wrong);
  EXPECT_NE(e.find("num_outputs is 3"), std::string::npos) << e;
  EXPECT_NE(e.find("split_it"), std::string::npos) << e;
}

TEST(OnnxOpset18, PadsOnlyTheAxesNamed) {
  ModelBuilder b(kOpset);
  b.input("x", {int64_t{2}, int64_t{3}}).output("y");
  b.int_initializer("pads", {1, 2});  // axis -1: one before, two after
  b.initializer("value", {}, {9});
  b.int_initializer("axes", {-1});
  b.node("Pad", {"x", "pads", "value", "axes"}, {"y"});
  const auto out = run(b, {k2x3});
  EXPECT_EQ(out[0].shape(), (Shape{2, 6}));
  EXPECT_EQ(out[0].to_vector<float>(), (std::vector<float>{9, 1, 2, 3, 9, 9, 9, 4, 5, 6, 9, 9}));
}

TEST(OnnxOpset18, ResizeOverNamedAxesKeepingTheAspectRatio) {
  // x [1, 2, 4]; sizes for axes (1, 2) of (4, 4): not_larger takes the scale 1 of the last axis, so the
  // result keeps [1, 2, 4]; not_smaller takes scale 2 and doubles both (nearest, asymmetric).
  for (const bool larger : {false, true}) {
    ModelBuilder b(kOpset);
    b.input("x", {int64_t{1}, int64_t{2}, int64_t{4}}).output("y");
    b.int_initializer("sizes", {4, 4});
    auto& n = b.node("Resize", {"x", "", "", "sizes"}, {"y"});
    set_ints(n, "axes", {1, 2});
    set_string(n, "keep_aspect_ratio_policy", larger ? "not_smaller" : "not_larger");
    set_string(n, "coordinate_transformation_mode", "asymmetric");
    set_string(n, "nearest_mode", "floor");
    const auto out = run(b, {Array::from_vector<float>({1, 2, 3, 4, 5, 6, 7, 8}, {1, 2, 4})});
    if (!larger) {
      EXPECT_EQ(out[0].shape(), (Shape{1, 2, 4}));
      continue;
    }
    ASSERT_EQ(out[0].shape(), (Shape{1, 4, 8}));
    const std::vector<float> y = out[0].to_vector<float>();
    EXPECT_EQ(std::vector<float>(y.begin(), y.begin() + 8), (std::vector<float>{1, 1, 2, 2, 3, 3, 4, 4}));
    EXPECT_EQ(std::vector<float>(y.begin() + 16, y.begin() + 24), (std::vector<float>{5, 5, 6, 6, 7, 7, 8, 8}));
  }
}

TEST(OnnxOpset18, ResizeWithScalesForSomeAxesAndAntialiasWhereItMatters) {
  ModelBuilder b(kOpset);
  b.input("x", {int64_t{1}, int64_t{4}}).output("y");
  b.initializer("scales", {1}, {0.5f});
  auto& n = b.node("Resize", {"x", "", "scales"}, {"y"}, "shrink");
  set_ints(n, "axes", {1});
  set_string(n, "mode", "linear");
  const auto out = run(b, {Array::from_vector<float>({0, 2, 4, 6}, {1, 4})});
  // half_pixel: outputs sample 0.5 and 2.5, halfway between neighbours.
  EXPECT_EQ(out[0].to_vector<float>(), (std::vector<float>{1, 5}));
  set_int(n, "antialias", 1);
  const std::string e = import_error(b);
  EXPECT_NE(e.find("antialias"), std::string::npos) << e;
  EXPECT_NE(e.find("shrink"), std::string::npos) << e;
}

TEST(OnnxOpset18, Mish) {
  ModelBuilder b(kOpset);
  b.input("x", {int64_t{3}}).output("y");
  b.node("Mish", {"x"}, {"y"});
  const std::vector<float> xs = {-2.0f, 0.0f, 1.5f};
  const auto y = run(b, {Array::from_vector<float>(xs, {3})})[0].to_vector<float>();
  for (size_t i = 0; i < xs.size(); ++i) {
    const double want = xs[i] * std::tanh(std::log1p(std::exp(static_cast<double>(xs[i]))));
    EXPECT_NEAR(y[i], want, 1e-6) << xs[i];
  }
}

TEST(OnnxOpset18, GroupNormalizationScalesEachGroup) {
  // N = 1, C = 4 in 2 groups, 1 position: group 0 = (1, 3), group 1 = (10, 30); each normalises to
  // (-1, 1) (eps 0), then scale (2, 3) and bias (0, 100) per group.
  ModelBuilder b(kOpset);
  b.input("x", {int64_t{1}, int64_t{4}, int64_t{1}}).output("y");
  b.initializer("scale", {2}, {2, 3});
  b.initializer("bias", {2}, {0, 100});
  auto& n = b.node("GroupNormalization", {"x", "scale", "bias"}, {"y"});
  set_int(n, "num_groups", 2);
  auto* eps = n.add_attribute();
  eps->set_name("epsilon");
  eps->set_type(::onnx::AttributeProto::FLOAT);
  eps->set_f(0.0f);
  const auto y = run(b, {Array::from_vector<float>({1, 3, 10, 30}, {1, 4, 1})})[0].to_vector<float>();
  const std::vector<float> want = {-2, 2, 97, 103};
  for (size_t i = 0; i < want.size(); ++i) EXPECT_NEAR(y[i], want[i], 1e-5) << i;

  ModelBuilder bad(kOpset);
  bad.input("x", {int64_t{1}, int64_t{4}, int64_t{1}}).output("y");
  bad.initializer("scale", {4}, {1, 1, 1, 1});
  bad.initializer("bias", {2}, {0, 0});
  set_int(bad.node("GroupNormalization", {"x", "scale", "bias"}, {"y"}), "num_groups", 2);
  const std::string e = import_error(bad);
  EXPECT_NE(e.find("one per group"), std::string::npos) << e;
}

TEST(OnnxOpset18, CenterCropPadCropsAndPadsAroundTheCentre) {
  // [2, 3] to [4, 2]: rows padded one before and one after, columns cropped from 3 to 2 starting at 0.
  ModelBuilder b(kOpset);
  b.input("x", {int64_t{2}, int64_t{3}}).output("y");
  b.int_initializer("shape", {4, 2});
  b.node("CenterCropPad", {"x", "shape"}, {"y"});
  const auto out = run(b, {k2x3});
  EXPECT_EQ(out[0].shape(), (Shape{4, 2}));
  EXPECT_EQ(out[0].to_vector<float>(), (std::vector<float>{0, 0, 1, 2, 4, 5, 0, 0}));
}

}  // namespace
}  // namespace tessera::test
