// Shape, attribute and dtype errors of the convolution, pooling and resampling ops: each names the op,
// the input types and what was expected.
#include "test_util.h"

using namespace tessera;
using namespace tessera::test;

namespace {
Tensor z(const Shape& s, DType dt = DType::f32) {
  return ops::zeros(s, dt);
}
}  // namespace

TEST(ConvErrors, ChannelMismatch) {
  EXPECT_TESSERA_ERROR(ops::conv2d(z({1, 3, 5, 5}), z({4, 2, 3, 3})), "conv", "f32[1, 3, 5, 5]", "f32[4, 2, 3, 3]",
                       "3 channels", "expects groups x weight.shape[1]");
  EXPECT_TESSERA_ERROR(ops::conv1d(z({2, 4, 9}), z({3, 2, 3})), "conv", "f32[2, 4, 9]", "f32[3, 2, 3]", "4 channels");
}

TEST(ConvErrors, GroupsMustDivideChannels) {
  EXPECT_TESSERA_ERROR(ops::conv2d(z({1, 4, 5, 5}), z({6, 2, 3, 3}), {}, {1, 1}, {0, 0}, {1, 1}, 3), "conv",
                       "f32[1, 4, 5, 5]", "groups 3 does not divide the 4 input channels");
  EXPECT_TESSERA_ERROR(ops::conv2d(z({1, 4, 5, 5}), z({3, 2, 3, 3}), {}, {1, 1}, {0, 0}, {1, 1}, 2), "conv",
                       "f32[3, 2, 3, 3]", "groups 2 does not divide the 3 output channels");
  EXPECT_TESSERA_ERROR(ops::conv2d(z({1, 4, 5, 5}), z({4, 4, 3, 3}), {}, {1, 1}, {0, 0}, {1, 1}, 0), "conv",
                       "groups must be positive");
}

TEST(ConvErrors, KernelLargerThanPaddedInput) {
  EXPECT_TESSERA_ERROR(ops::conv2d(z({1, 1, 2, 2}), z({1, 1, 3, 3})), "conv", "f32[1, 1, 2, 2]", "f32[1, 1, 3, 3]",
                       "larger than the padded input");
  // Dilation makes a 2-tap kernel span 4 > 3.
  EXPECT_TESSERA_ERROR(ops::conv1d(z({1, 1, 3}), z({1, 1, 2}), {}, 1, 0, 3), "conv", "dilated to 4",
                       "larger than the padded input");
  // Padding makes it fit.
  EXPECT_NO_THROW(ops::conv2d(z({1, 1, 2, 2}), z({1, 1, 3, 3}), {}, {1, 1}, {1, 1}));
}

TEST(ConvErrors, StrideDilationPadding) {
  EXPECT_TESSERA_ERROR(ops::conv2d(z({1, 1, 5, 5}), z({1, 1, 3, 3}), {}, {1, 0}), "conv", "f32[1, 1, 5, 5]",
                       "stride must be positive", "[1, 0]");
  EXPECT_TESSERA_ERROR(ops::conv2d(z({1, 1, 5, 5}), z({1, 1, 3, 3}), {}, {1, 1}, {0, 0}, {-1, 1}), "conv",
                       "dilation must be positive");
  EXPECT_TESSERA_ERROR(ops::conv2d(z({1, 1, 5, 5}), z({1, 1, 3, 3}), {}, {1, 1}, {0, -1}), "conv",
                       "padding must be non-negative", "[0, -1]");
  EXPECT_TESSERA_ERROR(ops::conv(z({1, 1, 5, 5}), z({1, 1, 3, 3}), {}, {1}, {0, 0}, {1, 1}), "conv",
                       "stride [1] has 1 entries, expected one per spatial axis (2)");
}

TEST(ConvErrors, WrongRank) {
  EXPECT_TESSERA_ERROR(ops::conv2d(z({1, 5, 5}), z({1, 1, 3, 3})), "conv2d", "f32[1, 5, 5]", "4-D input");
  EXPECT_TESSERA_ERROR(ops::conv1d(z({1, 1, 5, 5}), z({1, 1, 3})), "conv1d", "f32[1, 1, 5, 5]", "3-D input");
  EXPECT_TESSERA_ERROR(ops::conv(z({1, 5}), z({1, 5}), {}, {}, {}, {}), "conv", "f32[1, 5]", "rank >= 3");
  EXPECT_TESSERA_ERROR(ops::conv(z({1, 1, 5, 5}), z({1, 1, 3}), {}, {1}, {0}, {1}), "conv", "ranks 4 and 3");
}

TEST(ConvErrors, BiasAndDtypes) {
  EXPECT_TESSERA_ERROR(ops::conv2d(z({1, 2, 5, 5}), z({4, 2, 3, 3}), z({3})), "conv", "f32[3]",
                       "bias must have shape [4]");
  EXPECT_TESSERA_ERROR(ops::conv2d(z({1, 2, 5, 5}), z({4, 2, 3, 3}, DType::f64)), "conv", "f32[1, 2, 5, 5]",
                       "f64[4, 2, 3, 3]", "same dtype");
  EXPECT_TESSERA_ERROR(ops::conv2d(z({1, 2, 5, 5}, DType::i32), z({4, 2, 3, 3}, DType::i32)), "conv", "i32[1, 2, 5, 5]",
                       "floating dtype");
}

TEST(ConvErrors, TransposedConvolution) {
  EXPECT_TESSERA_ERROR(ops::conv_transpose2d(z({1, 3, 4, 4}), z({2, 2, 3, 3})), "conv_transpose2d", "f32[1, 3, 4, 4]",
                       "f32[2, 2, 3, 3]", "3 channels", "weight.shape[0] = 2");
  EXPECT_TESSERA_ERROR(ops::conv_transpose2d(z({1, 2, 4, 4}), z({2, 2, 3, 3}), {}, {2, 2}, {0, 0}, {2, 0}),
                       "conv_transpose2d", "output_padding [2, 0] must be non-negative and smaller than stride");
  EXPECT_TESSERA_ERROR(ops::conv_transpose2d(z({1, 3, 4, 4}), z({3, 2, 3, 3}), {}, {1, 1}, {0, 0}, {0, 0}, {1, 1}, 2),
                       "conv_transpose2d", "groups 2 does not divide the 3 input channels");
  EXPECT_TESSERA_ERROR(ops::conv_transpose2d(z({1, 2, 4, 4}), z({2, 2, 3, 3}), {}, {0, 1}), "conv_transpose2d",
                       "stride must be positive");
  EXPECT_TESSERA_ERROR(ops::conv_transpose2d(z({1, 2, 2, 2}), z({2, 2, 1, 1}), {}, {1, 1}, {2, 2}), "conv_transpose2d",
                       "output size", "would be -2");
  EXPECT_TESSERA_ERROR(ops::conv_transpose2d(z({1, 2, 4, 4}), z({2, 3, 3, 3}), z({2})), "conv_transpose2d", "f32[2]",
                       "bias must be f32[3]");
  EXPECT_TESSERA_ERROR(ops::conv_transpose2d(z({2, 4, 4}), z({2, 2, 3, 3})), "conv_transpose2d", "4-D input");
}

TEST(ConvErrors, GradientOpsCheckTheirShapes) {
  // An output gradient larger than the convolution of the stated input size produces.
  EXPECT_TESSERA_ERROR(ops::conv_input_grad(z({1, 2, 5, 5}), z({2, 1, 3, 3}), {5, 5}, {1, 1}, {0, 0}, {1, 1}),
                       "conv_input_grad", "f32[1, 2, 5, 5]", "gives only 3");
  EXPECT_TESSERA_ERROR(ops::conv_input_grad(z({1, 3, 3, 3}), z({2, 1, 3, 3}), {5, 5}, {1, 1}, {0, 0}, {1, 1}),
                       "conv_input_grad", "3 channels");
  EXPECT_TESSERA_ERROR(ops::conv_weight_grad(z({1, 1, 5, 5}), z({2, 2, 3, 3}), {3, 3}, {1, 1}, {0, 0}, {1, 1}),
                       "conv_weight_grad", "batch sizes differ");
  EXPECT_TESSERA_ERROR(ops::conv_weight_grad(z({1, 1, 5, 5}), z({1, 2, 3, 3}), {0, 3}, {1, 1}, {0, 0}, {1, 1}),
                       "conv_weight_grad", "kernel_size must be positive");
}

TEST(PoolErrors, MaxPool) {
  EXPECT_TESSERA_ERROR(ops::max_pool2d(z({4, 4}), {2, 2}), "max_pool", "f32[4, 4]", "rank >= 3");
  EXPECT_TESSERA_ERROR(ops::max_pool2d(z({1, 4, 4}), {2, 2}, {2, 2}, {2, 0}), "max_pool", "f32[1, 4, 4]",
                       "padding [2, 0] must be at most half the kernel size [2, 2]");
  EXPECT_TESSERA_ERROR(ops::max_pool2d(z({1, 3, 3}), {4, 2}), "max_pool", "larger than the padded input");
  EXPECT_TESSERA_ERROR(ops::max_pool2d(z({1, 5, 5}), {3, 3}, {1, 1}, {0, 0}, {2, 3}), "max_pool", "dilated to 7");
  EXPECT_TESSERA_ERROR(ops::max_pool2d(z({1, 4, 4}), {2, 2}, {0, 1}), "max_pool", "stride must be positive");
  EXPECT_TESSERA_ERROR(ops::max_pool2d(z({1, 4, 4}), {2, 2}, {2, 2}, {-1, 0}), "max_pool",
                       "padding must be non-negative");
  EXPECT_TESSERA_ERROR(ops::max_pool2d(z({1, 4, 4}), {2, 2}, {2, 2}, {0, 0}, {1, 0}), "max_pool",
                       "dilation must be positive");
  EXPECT_TESSERA_ERROR(ops::max_pool2d(z({1, 4, 4}, DType::boolean), {2, 2}), "max_pool", "bool[1, 4, 4]", "numeric");
  EXPECT_TESSERA_ERROR(ops::max_pool2d(z({1, 4, 4}), {0, 2}), "max_pool", "kernel must be positive");
}

TEST(PoolErrors, AvgAndAdaptive) {
  EXPECT_TESSERA_ERROR(ops::avg_pool2d(z({1, 4, 4}, DType::i32), {2, 2}), "avg_pool", "i32[1, 4, 4]", "floating");
  EXPECT_TESSERA_ERROR(ops::avg_pool2d(z({4, 4}), {2, 2}), "avg_pool", "f32[4, 4]", "rank >= 3");
  EXPECT_TESSERA_ERROR(ops::avg_pool2d(z({1, 4, 4}), {3, 3}, {1, 1}, {2, 2}), "avg_pool", "at most half");
  EXPECT_TESSERA_ERROR(ops::avg_pool2d(z({1, 2, 2}), {3, 3}), "avg_pool", "larger than the padded input");
  EXPECT_TESSERA_ERROR(ops::adaptive_avg_pool2d(z({1, 4, 4}), {0, 2}), "adaptive_avg_pool", "f32[1, 4, 4]",
                       "output_size must be positive");
  EXPECT_TESSERA_ERROR(ops::adaptive_avg_pool2d(z({1, 0, 4}), {2, 2}), "adaptive_avg_pool", "spatial sizes");
  EXPECT_TESSERA_ERROR(ops::adaptive_avg_pool2d(z({4, 4}), {2, 2}), "adaptive_avg_pool", "rank >= 3");
}

TEST(UpsampleErrors, ModesSizesAndDtypes) {
  EXPECT_TESSERA_ERROR(ops::upsample2d(z({1, 1, 2, 2}), {4, 4}, ops::UpsampleMode::Nearest, true), "upsample",
                       "f32[1, 1, 2, 2]", "align_corners applies only to linear");
  EXPECT_TESSERA_ERROR(ops::upsample2d(z({1, 1, 2, 2}), {0, 4}), "upsample", "size must be positive");
  EXPECT_TESSERA_ERROR(ops::upsample2d(z({1, 1, 2, 2}, DType::i32), {4, 4}, ops::UpsampleMode::Bilinear), "upsample",
                       "i32[1, 1, 2, 2]", "floating");
  EXPECT_TESSERA_ERROR(ops::upsample2d(z({3}), {4, 4}), "upsample", "f32[3]", "rank >= 2");
  EXPECT_TESSERA_ERROR(ops::upsample2d(z({1, 0, 2}), {4, 4}), "upsample", "spatial sizes must be positive");
}
