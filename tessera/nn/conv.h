#pragma once
// Convolution and pooling modules over NC(H)(W) tensors.
#include <array>

#include "tessera/nn/module.h"
#include "tessera/ops/random.h"

namespace tessera::nn {

// 1-D convolution over [N, C, L], as PyTorch's nn.Conv1d.
class Conv1d : public Module {
 public:
  Conv1d(int64_t in_channels, int64_t out_channels, int64_t kernel, int64_t stride = 1, int64_t padding = 0,
         int64_t dilation = 1, int64_t groups = 1, bool bias = true, ops::Generator& gen = ops::default_generator());
  Tensor forward(const Tensor& x) override;
  std::string name() const override;
  // weight [out_channels, in_channels / groups, kernel], bias [out_channels] (undefined without bias).
  Tensor weight, bias;

 private:
  int64_t stride_, padding_, dilation_, groups_;
};

// 2-D convolution over [N, C, H, W], as PyTorch's nn.Conv2d.
class Conv2d : public Module {
 public:
  Conv2d(int64_t in_channels, int64_t out_channels, std::array<int64_t, 2> kernel,
         std::array<int64_t, 2> stride = {1, 1}, std::array<int64_t, 2> padding = {0, 0},
         std::array<int64_t, 2> dilation = {1, 1}, int64_t groups = 1, bool bias = true,
         ops::Generator& gen = ops::default_generator());
  Tensor forward(const Tensor& x) override;
  std::string name() const override;
  // weight [out_channels, in_channels / groups, kh, kw], bias [out_channels] (undefined without bias).
  Tensor weight, bias;

 private:
  std::array<int64_t, 2> stride_, padding_, dilation_;
  int64_t groups_;
};

// The transpose (gradient) of a 2-D convolution, as PyTorch's nn.ConvTranspose2d.
class ConvTranspose2d : public Module {
 public:
  ConvTranspose2d(int64_t in_channels, int64_t out_channels, std::array<int64_t, 2> kernel,
                  std::array<int64_t, 2> stride = {1, 1}, std::array<int64_t, 2> padding = {0, 0},
                  std::array<int64_t, 2> output_padding = {0, 0}, int64_t groups = 1, bool bias = true,
                  ops::Generator& gen = ops::default_generator());
  Tensor forward(const Tensor& x) override;
  std::string name() const override;
  // weight [in_channels, out_channels / groups, kh, kw] (as PyTorch), bias [out_channels] (or undefined).
  Tensor weight, bias;

 private:
  std::array<int64_t, 2> stride_, padding_, output_padding_;
  int64_t groups_;
};

// ceil_mode as PyTorch's (ops::max_pool2d / ops::avg_pool2d describe it).
class MaxPool2d : public Module {
 public:
  explicit MaxPool2d(std::array<int64_t, 2> kernel, std::array<int64_t, 2> stride = {0, 0},
                     std::array<int64_t, 2> padding = {0, 0}, bool ceil_mode = false)
      : kernel_(kernel), stride_(stride), padding_(padding), ceil_mode_(ceil_mode) {}
  Tensor forward(const Tensor& x) override;
  std::string name() const override;

 private:
  std::array<int64_t, 2> kernel_, stride_, padding_;
  bool ceil_mode_;
};

// Average pooling over windows of [N, C, H, W].
class AvgPool2d : public Module {
 public:
  explicit AvgPool2d(std::array<int64_t, 2> kernel, std::array<int64_t, 2> stride = {0, 0},
                     std::array<int64_t, 2> padding = {0, 0}, bool ceil_mode = false)
      : kernel_(kernel), stride_(stride), padding_(padding), ceil_mode_(ceil_mode) {}
  Tensor forward(const Tensor& x) override;  // counts the padding in each average, as PyTorch's default
  std::string name() const override;

 private:
  std::array<int64_t, 2> kernel_, stride_, padding_;
  bool ceil_mode_;
};

// Average pooling to a fixed output size, whatever the input size.
class AdaptiveAvgPool2d : public Module {
 public:
  explicit AdaptiveAvgPool2d(std::array<int64_t, 2> output_size) : size_(output_size) {}
  Tensor forward(const Tensor& x) override;
  std::string name() const override;

 private:
  std::array<int64_t, 2> size_;
};

}  // namespace tessera::nn
