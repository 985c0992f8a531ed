// Conv1d, Conv2d, ConvTranspose2d and the pooling modules against direct loops written here.
#include <algorithm>

#include "nn_helpers.h"

using namespace tessera;
using namespace tessera::test;

namespace {

// Cross-correlation of x [N, C, L] with w [O, C/groups, K].
std::vector<double> conv1d_reference(const std::vector<double>& x, const std::vector<double>& w,
                                     const std::vector<double>& b, int64_t n, int64_t c, int64_t l, int64_t o,
                                     int64_t k, int64_t stride, int64_t pad, int64_t dil, int64_t groups) {
  const int64_t out_l = (l + 2 * pad - dil * (k - 1) - 1) / stride + 1;
  const int64_t cg = c / groups, og = o / groups;
  std::vector<double> y(static_cast<size_t>(n * o * out_l));
  for (int64_t ni = 0; ni < n; ++ni) {
    for (int64_t oc = 0; oc < o; ++oc) {
      const int64_t g = oc / og;
      for (int64_t p = 0; p < out_l; ++p) {
        double acc = b.empty() ? 0.0 : b[static_cast<size_t>(oc)];
        for (int64_t ic = 0; ic < cg; ++ic) {
          for (int64_t ki = 0; ki < k; ++ki) {
            const int64_t pos = p * stride - pad + ki * dil;
            if (pos < 0 || pos >= l) continue;
            acc += x[idx3(ni, g * cg + ic, pos, c, l)] * w[idx3(oc, ic, ki, cg, k)];
          }
        }
        y[idx3(ni, oc, p, o, out_l)] = acc;
      }
    }
  }
  return y;
}

struct Conv2dGeometry {
  int64_t n, c, h, w, o, kh, kw;
  std::array<int64_t, 2> stride, pad, dil;
  int64_t groups;
  int64_t out_h() const { return (h + 2 * pad[0] - dil[0] * (kh - 1) - 1) / stride[0] + 1; }
  int64_t out_w() const { return (w + 2 * pad[1] - dil[1] * (kw - 1) - 1) / stride[1] + 1; }
};

std::vector<double> conv2d_reference(const std::vector<double>& x, const std::vector<double>& wt,
                                     const std::vector<double>& b, const Conv2dGeometry& g) {
  const int64_t oh = g.out_h(), ow = g.out_w(), cg = g.c / g.groups, og = g.o / g.groups;
  std::vector<double> y(static_cast<size_t>(g.n * g.o * oh * ow));
  for (int64_t ni = 0; ni < g.n; ++ni) {
    for (int64_t oc = 0; oc < g.o; ++oc) {
      const int64_t grp = oc / og;
      for (int64_t i = 0; i < oh; ++i) {
        for (int64_t j = 0; j < ow; ++j) {
          double acc = b.empty() ? 0.0 : b[static_cast<size_t>(oc)];
          for (int64_t ic = 0; ic < cg; ++ic) {
            for (int64_t a = 0; a < g.kh; ++a) {
              for (int64_t bb = 0; bb < g.kw; ++bb) {
                const int64_t r = i * g.stride[0] - g.pad[0] + a * g.dil[0];
                const int64_t s = j * g.stride[1] - g.pad[1] + bb * g.dil[1];
                if (r < 0 || r >= g.h || s < 0 || s >= g.w) continue;
                acc += x[idx4(ni, grp * cg + ic, r, s, g.c, g.h, g.w)] * wt[idx4(oc, ic, a, bb, cg, g.kh, g.kw)];
              }
            }
          }
          y[idx4(ni, oc, i, j, g.o, oh, ow)] = acc;
        }
      }
    }
  }
  return y;
}

}  // namespace

TEST(Conv1d, MatchesDirectCrossCorrelation) {
  ops::Generator gen(21);
  // 4 -> 6 channels in 2 groups, kernel 3, stride 2, padding 1, dilation 2.
  nn::Conv1d conv(4, 6, 3, 2, 1, 2, 2, true, gen);
  expect_shape(conv.weight, {6, 2, 3});
  expect_shape(conv.bias, {6});
  const Tensor x = random_tensor({2, 4, 9}, 31);
  const Tensor y = conv(x);
  expect_shape(y, {2, 6, 4});  // (9 + 2 - 4 - 1) / 2 + 1
  expect_values_near(
      values(y), conv1d_reference(values(x), values(conv.weight), values(conv.bias), 2, 4, 9, 6, 3, 2, 1, 2, 2), 1e-5);
  EXPECT_NE(conv.name().find("Conv1d(4, 6, kernel=3, stride=2, padding=1)"), std::string::npos) << conv.name();
}

TEST(Conv1d, WithoutBias) {
  ops::Generator gen(22);
  nn::Conv1d conv(2, 3, 2, 1, 0, 1, 1, false, gen);
  EXPECT_FALSE(conv.bias.defined());
  EXPECT_EQ(conv.named_parameters().size(), 1u);
  const Tensor x = random_tensor({1, 2, 5}, 32);
  expect_values_near(values(conv(x)), conv1d_reference(values(x), values(conv.weight), {}, 1, 2, 5, 3, 2, 1, 0, 1, 1),
                     1e-5);
}

TEST(Conv2d, MatchesDirectCrossCorrelation) {
  ops::Generator gen(23);
  const Conv2dGeometry g{2, 4, 7, 6, 6, 3, 2, {2, 1}, {1, 0}, {1, 2}, 2};
  nn::Conv2d conv(4, 6, {3, 2}, g.stride, g.pad, g.dil, 2, true, gen);
  expect_shape(conv.weight, {6, 2, 3, 2});
  const Tensor x = random_tensor({2, 4, 7, 6}, 33);
  const Tensor y = conv(x);
  expect_shape(y, {2, 6, g.out_h(), g.out_w()});
  expect_values_near(values(y), conv2d_reference(values(x), values(conv.weight), values(conv.bias), g), 1e-5);
}

TEST(Conv2d, DefaultsAreStrideOneNoPadding) {
  ops::Generator gen(24);
  nn::Conv2d conv(1, 2, {3, 3}, {1, 1}, {0, 0}, {1, 1}, 1, true, gen);
  const Tensor x = random_tensor({1, 1, 5, 5}, 34);
  const Conv2dGeometry g{1, 1, 5, 5, 2, 3, 3, {1, 1}, {0, 0}, {1, 1}, 1};
  expect_shape(conv(x), {1, 2, 3, 3});
  expect_values_near(values(conv(x)), conv2d_reference(values(x), values(conv.weight), values(conv.bias), g), 1e-5);
}

TEST(Conv2d, BadChannelsAndInputsAreErrors) {
  EXPECT_TESSERA_ERROR(nn::Conv2d(3, 4, {3, 3}, {1, 1}, {0, 0}, {1, 1}, 2), "Conv2d", "3 in", "4 out", "groups (2)");
  EXPECT_TESSERA_ERROR(nn::Conv1d(0, 4, 3), "Conv1d");
  EXPECT_TESSERA_ERROR(nn::ConvTranspose2d(4, 3, {2, 2}, {1, 1}, {0, 0}, {0, 0}, 2), "ConvTranspose2d");
  nn::Conv2d conv(3, 4, {3, 3});
  EXPECT_TESSERA_ERROR(conv(random_tensor({1, 2, 5, 5}, 35)), "conv", "f32[1, 2, 5, 5]");
}

TEST(ConvTranspose2d, ScattersEachInputThroughTheKernel) {
  ops::Generator gen(25);
  const int64_t n = 2, cin = 4, cout = 6, groups = 2, h = 3, w = 4, kh = 3, kw = 2;
  const std::array<int64_t, 2> stride{2, 3}, pad{1, 0}, out_pad{1, 2};
  nn::ConvTranspose2d conv(cin, cout, {kh, kw}, stride, pad, out_pad, groups, true, gen);
  expect_shape(conv.weight, {cin, cout / groups, kh, kw});
  expect_shape(conv.bias, {cout});
  const Tensor x = random_tensor({n, cin, h, w}, 36);
  const Tensor y = conv(x);
  const int64_t oh = (h - 1) * stride[0] - 2 * pad[0] + kh + out_pad[0];
  const int64_t ow = (w - 1) * stride[1] - 2 * pad[1] + kw + out_pad[1];
  expect_shape(y, {n, cout, oh, ow});
  // out[n, g*og + oc, i*s - p + a, j*s - p + b] += x[n, g*cg + ic, i, j] * w[g*cg + ic, oc, a, b]
  const std::vector<double> xv = values(x), wv = values(conv.weight), bv = values(conv.bias);
  const int64_t cg = cin / groups, og = cout / groups;
  std::vector<double> ref(static_cast<size_t>(n * cout * oh * ow));
  for (int64_t ni = 0; ni < n; ++ni) {
    for (int64_t oc = 0; oc < cout; ++oc) {
      for (int64_t i = 0; i < oh; ++i) {
        for (int64_t j = 0; j < ow; ++j) ref[idx4(ni, oc, i, j, cout, oh, ow)] = bv[static_cast<size_t>(oc)];
      }
    }
    for (int64_t ic = 0; ic < cin; ++ic) {
      const int64_t g = ic / cg;
      for (int64_t i = 0; i < h; ++i) {
        for (int64_t j = 0; j < w; ++j) {
          for (int64_t oc = 0; oc < og; ++oc) {
            for (int64_t a = 0; a < kh; ++a) {
              for (int64_t b = 0; b < kw; ++b) {
                const int64_t r = i * stride[0] - pad[0] + a, s = j * stride[1] - pad[1] + b;
                if (r < 0 || r >= oh || s < 0 || s >= ow) continue;
                ref[idx4(ni, g * og + oc, r, s, cout, oh, ow)] +=
                    xv[idx4(ni, ic, i, j, cin, h, w)] * wv[idx4(ic, oc, a, b, og, kh, kw)];
              }
            }
          }
        }
      }
    }
  }
  expect_values_near(values(y), ref, 1e-5);
}

TEST(Pooling, MaxPool2dTakesWindowMaxima) {
  const Tensor x = random_tensor({2, 3, 5, 6}, 37);
  nn::MaxPool2d pool({2, 3});  // stride defaults to the kernel
  const Tensor y = pool(x);
  expect_shape(y, {2, 3, 2, 2});
  const std::vector<double> xv = values(x);
  std::vector<double> ref;
  for (int64_t nc = 0; nc < 6; ++nc) {
    for (int64_t i = 0; i < 2; ++i) {
      for (int64_t j = 0; j < 2; ++j) {
        double m = -INFINITY;
        for (int64_t a = 0; a < 2; ++a) {
          for (int64_t b = 0; b < 3; ++b) m = std::max(m, xv[idx3(nc, i * 2 + a, j * 3 + b, 5, 6)]);
        }
        ref.push_back(m);
      }
    }
  }
  EXPECT_EQ(values(y), ref);
  // With stride 1 and padding 1 a 3x3 window keeps the spatial size.
  nn::MaxPool2d same({3, 3}, {1, 1}, {1, 1});
  expect_shape(same(x), {2, 3, 5, 6});
  EXPECT_EQ(pool.name(), "MaxPool2d([2, 3])");
}

TEST(Pooling, AvgPool2dAveragesWindows) {
  const Tensor x = random_tensor({1, 2, 4, 6}, 38);
  nn::AvgPool2d pool({2, 2}, {2, 2});
  const Tensor y = pool(x);
  expect_shape(y, {1, 2, 2, 3});
  const std::vector<double> xv = values(x);
  std::vector<double> ref;
  for (int64_t c = 0; c < 2; ++c) {
    for (int64_t i = 0; i < 2; ++i) {
      for (int64_t j = 0; j < 3; ++j) {
        double s = 0;
        for (int64_t a = 0; a < 2; ++a) {
          for (int64_t b = 0; b < 2; ++b) s += xv[idx3(c, 2 * i + a, 2 * j + b, 4, 6)];
        }
        ref.push_back(s / 4.0);
      }
    }
  }
  expect_values_near(values(y), ref, 1e-6);
}

// ceil_mode keeps the partial last windows (PyTorch's nn.MaxPool2d / nn.AvgPool2d(ceil_mode=True)).
TEST(Pooling, CeilModeModules) {
  const Tensor x = random_tensor({1, 2, 5, 7}, 39);
  nn::MaxPool2d max_pool({2, 2}, {0, 0}, {0, 0}, true);
  nn::AvgPool2d avg_pool({2, 2}, {0, 0}, {0, 0}, true);
  expect_shape(max_pool(x), {1, 2, 3, 4});
  expect_shape(avg_pool(x), {1, 2, 3, 4});
  expect_values_near(values(max_pool(x)),
                     values(ops::max_pool2d(x, {2, 2}, {2, 2}, {0, 0}, {1, 1}, /*ceil_mode=*/true)), 0.0);
  expect_values_near(values(avg_pool(x)), values(ops::avg_pool2d(x, {2, 2}, {2, 2}, {0, 0}, true, true)), 0.0);
  EXPECT_EQ(max_pool.name(), "MaxPool2d([2, 2], ceil_mode)");
  EXPECT_EQ(nn::AvgPool2d({2, 2}).name(), "AvgPool2d([2, 2])");
}

TEST(Pooling, AdaptiveAvgPool2dUsesPyTorchBins) {
  const Tensor x = random_tensor({1, 1, 5, 7}, 39);
  nn::AdaptiveAvgPool2d pool({2, 3});
  const Tensor y = pool(x);
  expect_shape(y, {1, 1, 2, 3});
  const std::vector<double> xv = values(x);
  std::vector<double> ref;
  for (int64_t i = 0; i < 2; ++i) {
    const int64_t r0 = i * 5 / 2, r1 = ((i + 1) * 5 + 1) / 2;  // floor / ceil
    for (int64_t j = 0; j < 3; ++j) {
      const int64_t c0 = j * 7 / 3, c1 = ((j + 1) * 7 + 2) / 3;
      double s = 0;
      for (int64_t r = r0; r < r1; ++r) {
        for (int64_t c = c0; c < c1; ++c) s += xv[idx2(r, c, 7)];
      }
      ref.push_back(s / static_cast<double>((r1 - r0) * (c1 - c0)));
    }
  }
  expect_values_near(values(y), ref, 1e-6);
  // Output size 1x1 is global average pooling.
  nn::AdaptiveAvgPool2d global({1, 1});
  double total = 0;
  for (double v : xv) total += v;
  expect_values_near(values(global(x)), {total / 35.0}, 1e-6);
}
