#include "tessera/nn/conv.h"

#include <cmath>
#include <functional>

#include "tessera/nn/init.h"
#include "tessera/ops/ops.h"

namespace tessera::nn {

namespace {
// PyTorch's conv initialisation: kaiming_uniform(a = sqrt(5)) weights, U(+-1/sqrt(fan_in)) bias.
void init_conv(Tensor& weight, Tensor& bias, const Shape& shape, bool with_bias, ops::Generator& g,
               const std::function<void(const std::string&, Tensor*)>& reg) {
  weight = init::kaiming_uniform(shape, g, std::sqrt(5.0));
  reg("weight", &weight);
  if (with_bias) {
    const double bound = 1.0 / std::sqrt(static_cast<double>(init::fan_in(shape)));
    bias = init::uniform({shape[0]}, -bound, bound, g);
    reg("bias", &bias);
  }
}

void check_channels(int64_t in, int64_t out, int64_t groups, const char* what) {
  TESSERA_CHECK(in > 0 && out > 0 && groups > 0 && in % groups == 0 && out % groups == 0,
                "{}: channels ({} in, {} out) must be positive multiples of groups ({})", what, in, out, groups);
}
}  // namespace

Conv1d::Conv1d(int64_t in_channels, int64_t out_channels, int64_t kernel, int64_t stride, int64_t padding,
               int64_t dilation, int64_t groups, bool with_bias, ops::Generator& gen)
    : stride_(stride), padding_(padding), dilation_(dilation), groups_(groups) {
  check_channels(in_channels, out_channels, groups, "Conv1d");
  init_conv(weight, bias, {out_channels, in_channels / groups, kernel}, with_bias, gen,
            [this](const std::string& n, Tensor* t) { register_parameter(n, t); });
}

Tensor Conv1d::forward(const Tensor& x) {
  return ops::conv1d(x, weight, bias, stride_, padding_, dilation_, groups_);
}

std::string Conv1d::name() const {
  return fmt::format("Conv1d({}, {}, kernel={}, stride={}, padding={})", weight.dim(1) * groups_, weight.dim(0),
                     weight.dim(2), stride_, padding_);
}

Conv2d::Conv2d(int64_t in_channels, int64_t out_channels, std::array<int64_t, 2> kernel, std::array<int64_t, 2> stride,
               std::array<int64_t, 2> padding, std::array<int64_t, 2> dilation, int64_t groups, bool with_bias,
               ops::Generator& gen)
    : stride_(stride), padding_(padding), dilation_(dilation), groups_(groups) {
  check_channels(in_channels, out_channels, groups, "Conv2d");
  init_conv(weight, bias, {out_channels, in_channels / groups, kernel[0], kernel[1]}, with_bias, gen,
            [this](const std::string& n, Tensor* t) { register_parameter(n, t); });
}

Tensor Conv2d::forward(const Tensor& x) { return ops::conv2d(x, weight, bias, stride_, padding_, dilation_, groups_); }

std::string Conv2d::name() const {
  return fmt::format("Conv2d({}, {}, kernel=[{}, {}], stride=[{}, {}], padding=[{}, {}])", weight.dim(1) * groups_,
                     weight.dim(0), weight.dim(2), weight.dim(3), stride_[0], stride_[1], padding_[0], padding_[1]);
}

ConvTranspose2d::ConvTranspose2d(int64_t in_channels, int64_t out_channels, std::array<int64_t, 2> kernel,
                                 std::array<int64_t, 2> stride, std::array<int64_t, 2> padding,
                                 std::array<int64_t, 2> output_padding, int64_t groups, bool with_bias,
                                 ops::Generator& gen)
    : stride_(stride), padding_(padding), output_padding_(output_padding), groups_(groups) {
  check_channels(in_channels, out_channels, groups, "ConvTranspose2d");
  // Weight [in, out/groups, kh, kw]; PyTorch computes fan_in from dimension 1 here as well.
  const Shape shape{in_channels, out_channels / groups, kernel[0], kernel[1]};
  weight = init::kaiming_uniform(shape, gen, std::sqrt(5.0));
  register_parameter("weight", &weight);
  if (with_bias) {
    const double bound = 1.0 / std::sqrt(static_cast<double>(init::fan_in(shape)));
    bias = init::uniform({out_channels}, -bound, bound, gen);
    register_parameter("bias", &bias);
  }
}

Tensor ConvTranspose2d::forward(const Tensor& x) {
  return ops::conv_transpose2d(x, weight, bias, stride_, padding_, output_padding_, {1, 1}, groups_);
}

std::string ConvTranspose2d::name() const {
  return fmt::format("ConvTranspose2d({}, {}, kernel=[{}, {}], stride=[{}, {}])", weight.dim(0),
                     weight.dim(1) * groups_, weight.dim(2), weight.dim(3), stride_[0], stride_[1]);
}

Tensor MaxPool2d::forward(const Tensor& x) {
  return ops::max_pool2d(x, kernel_, stride_, padding_, {1, 1}, ceil_mode_);
}
std::string MaxPool2d::name() const {
  return fmt::format("MaxPool2d([{}, {}]{})", kernel_[0], kernel_[1], ceil_mode_ ? ", ceil_mode" : "");
}
Tensor AvgPool2d::forward(const Tensor& x) {
  return ops::avg_pool2d(x, kernel_, stride_, padding_, /*count_include_pad=*/true, ceil_mode_);
}
std::string AvgPool2d::name() const {
  return fmt::format("AvgPool2d([{}, {}]{})", kernel_[0], kernel_[1], ceil_mode_ ? ", ceil_mode" : "");
}
Tensor AdaptiveAvgPool2d::forward(const Tensor& x) { return ops::adaptive_avg_pool2d(x, size_); }
std::string AdaptiveAvgPool2d::name() const { return fmt::format("AdaptiveAvgPool2d([{}, {}])", size_[0], size_[1]); }

}  // namespace tessera::nn
