#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

#include "tessera/core/error.h"
#include "tessera/kernels/cpu/activation.h"
#include "tessera/kernels/cpu/conv.h"

namespace tessera::kernels {
namespace {

std::vector<float> random_conv_values(int64_t n, std::mt19937& rng) {
  std::uniform_real_distribution<float> d(-1.0f, 1.0f);
  std::vector<float> v(static_cast<size_t>(n));
  for (auto& x : v) x = d(rng);
  return v;
}

int64_t x_size(const Conv2dGeometry& g) {
  return g.batch * g.in_channels * g.in_h * g.in_w;
}
int64_t w_size(const Conv2dGeometry& g) {
  return g.out_channels * (g.in_channels / g.groups) * g.kernel_h * g.kernel_w;
}
int64_t y_size(const Conv2dGeometry& g) {
  return g.batch * g.out_channels * g.out_h * g.out_w;
}

// Calls f(n, co, oh, ow, ci, kh, kw, x_index, w_index) for every tap of the convolution that reads a
// real input element — the definition written out directly, independent of the kernels' im2col.
template <typename F>
void for_each_tap(const Conv2dGeometry& g, F&& f) {
  const int64_t cpg = g.in_channels / g.groups, opg = g.out_channels / g.groups;
  for (int64_t n = 0; n < g.batch; ++n)
    for (int64_t co = 0; co < g.out_channels; ++co)
      for (int64_t oh = 0; oh < g.out_h; ++oh)
        for (int64_t ow = 0; ow < g.out_w; ++ow)
          for (int64_t cl = 0; cl < cpg; ++cl)
            for (int64_t kh = 0; kh < g.kernel_h; ++kh)
              for (int64_t kw = 0; kw < g.kernel_w; ++kw) {
                const int64_t ih = oh * g.stride_h - g.pad_h + kh * g.dilation_h;
                const int64_t iw = ow * g.stride_w - g.pad_w + kw * g.dilation_w;
                if (ih < 0 || ih >= g.in_h || iw < 0 || iw >= g.in_w) continue;
                const int64_t ci = (co / opg) * cpg + cl;
                const int64_t xi = ((n * g.in_channels + ci) * g.in_h + ih) * g.in_w + iw;
                const int64_t wi = ((co * cpg + cl) * g.kernel_h + kh) * g.kernel_w + kw;
                const int64_t yi = ((n * g.out_channels + co) * g.out_h + oh) * g.out_w + ow;
                f(yi, xi, wi);
              }
}

struct ConvCase {
  Conv2dGeometry g;
  const char* name;
};

std::vector<ConvCase> conv_cases() {
  std::vector<ConvCase> cases = {
      {make_conv2d_geometry(3, 1, 28, 28, 32, 3, 3), "cnn conv1"},
      {make_conv2d_geometry(2, 32, 13, 13, 64, 3, 3), "cnn conv2"},
      {make_conv2d_geometry(2, 4, 9, 11, 6, 3, 2, 2, 1, 1, 2), "stride+padding"},
      {make_conv2d_geometry(2, 6, 10, 9, 4, 3, 3, 1, 2, 2, 1, 2, 1, 2), "dilation+groups"},
      {make_conv2d_geometry(3, 8, 7, 5, 8, 1, 1), "pointwise"},
      {make_conv2d_geometry(1, 2, 6, 6, 3, 6, 6), "kernel = input"},
      {make_conv2d_geometry(5, 3, 8, 8, 9, 1, 1, 2, 2), "strided 1x1"},
      {make_conv2d_geometry(2, 4, 7, 7, 4, 3, 3, 1, 1, 1, 1, 1, 1, 4), "depthwise"},
      {make_conv2d_geometry(2, 4, 9, 8, 8, 3, 3, 2, 2, 1, 1, 1, 1, 4), "strided depthwise, 2 outputs per channel"},
      {make_conv2d_geometry(1, 3, 11, 10, 3, 3, 3, 3, 3, 2, 2, 2, 2, 3), "stride 3 dilated depthwise"},
  };
  Conv2dGeometry cropped = make_conv2d_geometry(2, 3, 9, 9, 5, 3, 3, 2, 2, 1, 1);
  cropped.out_h -= 1;  // a cropped output (the IR's output_size), as in gradients of strided convs
  cropped.out_w -= 2;
  cases.push_back({cropped, "cropped output"});
  return cases;
}

void expect_near_all(const std::vector<float>& got, const std::vector<double>& want, double tol, const char* what) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i)
    ASSERT_NEAR(got[i], want[i], tol * (1.0 + std::abs(want[i]))) << what << " at " << i;
}

TEST(Conv2d, ForwardMatchesDefinition) {
  std::mt19937 rng(11);
  for (int threads : {1, 2}) {
    runtime::ThreadPool pool(threads);
    for (const auto& tc : conv_cases()) {
      const Conv2dGeometry& g = tc.g;
      const auto x = random_conv_values(x_size(g), rng), w = random_conv_values(w_size(g), rng);
      const auto bias = random_conv_values(g.out_channels, rng), res = random_conv_values(y_size(g), rng);
      std::vector<double> base(static_cast<size_t>(y_size(g)), 0.0);
      for_each_tap(g, [&](int64_t yi, int64_t xi, int64_t wi) {
        base[static_cast<size_t>(yi)] += static_cast<double>(x[static_cast<size_t>(xi)]) * w[static_cast<size_t>(wi)];
      });
      for (ConvAlgorithm algo : {ConvAlgorithm::automatic, ConvAlgorithm::im2col_gemm, ConvAlgorithm::direct}) {
        for (bool epilogue : {false, true}) {
          std::vector<double> want = base;
          const int64_t plane = g.out_h * g.out_w;
          for (size_t i = 0; i < want.size(); ++i) {
            if (!epilogue) continue;
            const int64_t co = static_cast<int64_t>(i) / plane % g.out_channels;
            want[i] = activation_value(Activation::relu, static_cast<float>(want[i] + bias[static_cast<size_t>(co)])) +
                      res[i];
          }
          std::vector<float> y(static_cast<size_t>(y_size(g)), std::nanf(""));
          std::vector<char> ws(static_cast<size_t>(conv2d_forward_workspace_bytes(g, &pool)));
          ConvEpilogue e;
          if (epilogue) {
            e.activation = Activation::relu;
            e.residual = res.data();
          }
          conv2d_forward(g, x.data(), w.data(), epilogue ? bias.data() : nullptr, y.data(),
                         ws.empty() ? nullptr : ws.data(), e, &pool, algo);
          SCOPED_TRACE(testing::Message() << tc.name << " threads=" << threads << " algo=" << static_cast<int>(algo)
                                          << " epilogue=" << epilogue);
          expect_near_all(y, want, 2e-5, "y");
        }
      }
    }
  }
}

TEST(Conv2d, InputGradIsTheAdjoint) {
  std::mt19937 rng(12);
  for (int threads : {1, 2}) {
    runtime::ThreadPool pool(threads);
    for (const auto& tc : conv_cases()) {
      const Conv2dGeometry& g = tc.g;
      const auto dy = random_conv_values(y_size(g), rng), w = random_conv_values(w_size(g), rng);
      std::vector<double> want(static_cast<size_t>(x_size(g)), 0.0);
      for_each_tap(g, [&](int64_t yi, int64_t xi, int64_t wi) {
        want[static_cast<size_t>(xi)] += static_cast<double>(dy[static_cast<size_t>(yi)]) * w[static_cast<size_t>(wi)];
      });
      std::vector<float> dx(static_cast<size_t>(x_size(g)), std::nanf(""));
      std::vector<char> ws(static_cast<size_t>(conv2d_input_grad_workspace_bytes(g, &pool)));
      conv2d_input_grad(g, dy.data(), w.data(), dx.data(), ws.empty() ? nullptr : ws.data(), &pool);
      SCOPED_TRACE(testing::Message() << tc.name << " threads=" << threads);
      expect_near_all(dx, want, 2e-5, "dx");
    }
  }
}

TEST(Conv2d, WeightGradIsTheAdjoint) {
  std::mt19937 rng(13);
  for (int threads : {1, 2}) {
    runtime::ThreadPool pool(threads);
    for (const auto& tc : conv_cases()) {
      const Conv2dGeometry& g = tc.g;
      const auto x = random_conv_values(x_size(g), rng), dy = random_conv_values(y_size(g), rng);
      std::vector<double> want(static_cast<size_t>(w_size(g)), 0.0);
      for_each_tap(g, [&](int64_t yi, int64_t xi, int64_t wi) {
        want[static_cast<size_t>(wi)] += static_cast<double>(dy[static_cast<size_t>(yi)]) * x[static_cast<size_t>(xi)];
      });
      std::vector<float> dw(static_cast<size_t>(w_size(g)), std::nanf(""));
      // nullptr workspace: the kernel allocates its own.
      conv2d_weight_grad(g, x.data(), dy.data(), dw.data(), nullptr, &pool);
      SCOPED_TRACE(testing::Message() << tc.name << " threads=" << threads);
      expect_near_all(dw, want, 1e-4, "dw");
    }
  }
}

TEST(Conv2d, HandComputedValue) {
  // 1x1x3x3 input, 2x2 kernel of ones: each output is the sum of a 2x2 window.
  const std::vector<float> x = {1, 2, 3, 4, 5, 6, 7, 8, 9}, w = {1, 1, 1, 1};
  std::vector<float> y(4);
  conv2d_forward(make_conv2d_geometry(1, 1, 3, 3, 1, 2, 2), x.data(), w.data(), nullptr, y.data(), nullptr);
  EXPECT_EQ(y, (std::vector<float>{12, 16, 24, 28}));
}

TEST(Conv2d, RejectsBadGeometry) {
  std::vector<float> buf(1000);
  Conv2dGeometry g = make_conv2d_geometry(1, 3, 5, 5, 4, 3, 3);
  g.groups = 2;  // 3 channels are not divisible by 2
  EXPECT_THROW(conv2d_forward(g, buf.data(), buf.data(), nullptr, buf.data(), nullptr), Error);
  g = make_conv2d_geometry(1, 2, 5, 5, 2, 3, 3);
  g.out_h = 4;  // larger than the natural 3
  EXPECT_THROW(conv2d_input_grad(g, buf.data(), buf.data(), buf.data(), nullptr), Error);
  g = make_conv2d_geometry(1, 2, 5, 5, 2, 3, 3);
  g.stride_w = 0;
  EXPECT_THROW(conv2d_weight_grad(g, buf.data(), buf.data(), buf.data(), nullptr), Error);
}

}  // namespace
}  // namespace tessera::kernels
