// The fast forward convolutions, the implicit GEMM (conv_gemm.cpp) on every tile this CPU runs
// (AVX-512, AVX2, portable) and the direct tiles (conv_direct_avx512.cpp, AVX-512 only), against a
// double-precision loop over the definition: shapes that cut tiles at image and batch edges,
// several k blocks and row blocks, columns packed per task and packed once for all, every tail (bias, in-register and other activations, residual,
// activation after the residual), weights packed per call and packed once (also in a layout the
// CPU no longer runs), and one thread or two.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

#include "tessera/kernels/cpu/activation.h"
#include "tessera/kernels/cpu/conv.h"
#include "tessera/kernels/cpu/cpu_features.h"

namespace tessera::kernels {
namespace {

enum class Path { avx512, avx2, portable };

const char* path_name(Path p) {
  return p == Path::avx512 ? "avx512" : p == Path::avx2 ? "avx2" : "portable";
}

// Selects one kernel path for the scope and restores the switches (AVX-512 is read before AVX2 goes
// off: use_avx512() is false while AVX2 is off).
class PathSwitch {
 public:
  explicit PathSwitch(Path p) : avx512_was_(use_avx512()), avx2_was_(use_avx2()) {
    set_avx512_enabled(p == Path::avx512);
    set_avx2_enabled(p != Path::portable);
  }
  ~PathSwitch() {
    set_avx2_enabled(avx2_was_);
    set_avx512_enabled(avx512_was_);
  }

 private:
  bool avx512_was_, avx2_was_;
};

std::vector<Path> paths() {
  std::vector<Path> p;
  if (use_avx512()) p.push_back(Path::avx512);
  if (use_avx2()) p.push_back(Path::avx2);
  p.push_back(Path::portable);
  return p;
}

std::vector<float> random_values(int64_t n, std::mt19937& rng, float scale = 1.0f) {
  std::uniform_real_distribution<float> d(-scale, scale);
  std::vector<float> v(static_cast<size_t>(n));
  for (auto& x : v) x = d(rng);
  return v;
}

// The convolution by its definition, in double; `magnitude` gets sum |x w| per output (for the bound).
void reference_conv(const Conv2dGeometry& g, const std::vector<float>& x, const std::vector<float>& w,
                    std::vector<double>& y, std::vector<double>& magnitude) {
  const int64_t cpg = g.in_channels / g.groups, opg = g.out_channels / g.groups;
  y.assign(static_cast<size_t>(g.batch * g.out_channels * g.out_h * g.out_w), 0.0);
  magnitude.assign(y.size(), 0.0);
  size_t yi = 0;
  for (int64_t n = 0; n < g.batch; ++n)
    for (int64_t co = 0; co < g.out_channels; ++co)
      for (int64_t oh = 0; oh < g.out_h; ++oh)
        for (int64_t ow = 0; ow < g.out_w; ++ow, ++yi)
          for (int64_t cl = 0; cl < cpg; ++cl)
            for (int64_t kh = 0; kh < g.kernel_h; ++kh)
              for (int64_t kw = 0; kw < g.kernel_w; ++kw) {
                const int64_t ih = oh * g.stride_h - g.pad_h + kh * g.dilation_h;
                const int64_t iw = ow * g.stride_w - g.pad_w + kw * g.dilation_w;
                if (ih < 0 || ih >= g.in_h || iw < 0 || iw >= g.in_w) continue;
                const int64_t ci = co / opg * cpg + cl;
                const double p = static_cast<double>(x[static_cast<size_t>(((n * g.in_channels + ci) * g.in_h + ih) * g.in_w + iw)]) *
                                 w[static_cast<size_t>(((co * cpg + cl) * g.kernel_h + kh) * g.kernel_w + kw)];
                y[yi] += p;
                magnitude[yi] += std::abs(p);
              }
}

struct Tail {
  bool bias = false;
  Activation activation = Activation::none;
  bool residual = false;
  Activation post = Activation::none;
  const char* name;
};

double apply(Activation a, double v) {
  return activation_value(a, static_cast<float>(v));
}

void check_case(const char* name, const Conv2dGeometry& g, std::mt19937& rng, ConvAlgorithm algorithm) {
  const auto x = random_values(g.batch * g.in_channels * g.in_h * g.in_w, rng);
  const auto w = random_values(g.out_channels * (g.in_channels / g.groups) * g.kernel_h * g.kernel_w, rng);
  const auto bias = random_values(g.out_channels, rng);
  const int64_t ys = g.batch * g.out_channels * g.out_h * g.out_w, plane = g.out_h * g.out_w;
  const auto residual = random_values(ys, rng, 3.0f);
  std::vector<double> base, magnitude;
  reference_conv(g, x, w, base, magnitude);
  const Tail tails[] = {{false, Activation::none, false, Activation::none, "none"},
                        {true, Activation::relu, false, Activation::none, "bias relu"},
                        {true, Activation::relu6, true, Activation::none, "bias relu6 residual"},
                        {true, Activation::none, true, Activation::relu, "bias residual relu"},
                        {false, Activation::sigmoid, true, Activation::tanh, "sigmoid residual tanh"}};
  for (const Path path : paths()) {
    PathSwitch on(path);
    for (int threads : {1, 2}) {
      runtime::ThreadPool pool(threads);
      for (const Tail& t : tails) {
        for (bool prepacked : {false, true}) {
          ConvEpilogue e;
          e.activation = t.activation;
          e.residual = t.residual ? residual.data() : nullptr;
          e.post_activation = t.post;
          std::vector<float> packed;
          if (prepacked) {
            packed.resize(static_cast<size_t>(conv2d_packed_weights_floats(g)));
            conv2d_pack_weights(g, w.data(), packed.data(), &pool);
          }
          std::vector<char> ws(static_cast<size_t>(conv2d_forward_workspace_bytes(g, &pool, prepacked)));
          std::vector<float> y(static_cast<size_t>(ys), std::nanf(""));
          conv2d_forward(g, x.data(), w.data(), t.bias ? bias.data() : nullptr, y.data(),
                         ws.empty() ? nullptr : ws.data(), e, &pool, algorithm, prepacked ? packed.data() : nullptr);
          SCOPED_TRACE(testing::Message() << name << " algorithm=" << static_cast<int>(algorithm)
                                          << " path=" << path_name(path) << " threads=" << threads
                                          << " tail=" << t.name << " prepacked=" << prepacked);
          for (int64_t i = 0; i < ys; ++i) {
            const auto s = static_cast<size_t>(i);
            double want = base[s] + (t.bias ? bias[static_cast<size_t>(i / plane % g.out_channels)] : 0.0);
            want = apply(t.activation, want);
            if (t.residual) want += residual[s];
            want = apply(t.post, want);
            // A few float roundings of the sum of |products|, plus the tail's own roundings.
            const double tol = 1e-6 * (magnitude[s] + 8.0) + 1e-6 * std::abs(want);
            ASSERT_NEAR(y[s], want, tol) << "at " << i;
          }
        }
      }
    }
  }
}

// Every case through both algorithms; where direct tiles do not apply (no AVX-512, pointwise, K < 64)
// the request runs the implicit GEMM, and the packed weights follow the automatic choice.
TEST(ConvForwardPaths, MatchesDefinition) {
  std::mt19937 rng(5);
  struct Case {
    const char* name;
    Conv2dGeometry g;
  };
  Conv2dGeometry cropped = make_conv2d_geometry(2, 5, 11, 11, 7, 3, 3, 2, 2, 1, 1);
  cropped.out_h -= 1;
  cropped.out_w -= 2;
  const Case cases[] = {
      {"3x3 s1 p1, 7x7 planes cut by tiles and images", make_conv2d_geometry(3, 16, 7, 7, 24, 3, 3, 1, 1, 1, 1)},
      {"3x3 s2 p1 (downsampling)", make_conv2d_geometry(2, 8, 15, 14, 20, 3, 3, 2, 2, 1, 1)},
      {"7x7 s2 p3 stem, 3 channels", make_conv2d_geometry(1, 3, 40, 38, 16, 7, 7, 2, 2, 3, 3)},
      {"1x1 s1 (pointwise), plane of 35", make_conv2d_geometry(3, 40, 5, 7, 13, 1, 1)},
      {"1x1 s2", make_conv2d_geometry(2, 12, 9, 9, 30, 1, 1, 2, 2)},
      {"1x1 s1 of 70 channels (direct tiles), 7x5 planes", make_conv2d_geometry(3, 70, 7, 5, 40, 1, 1)},
      {"1x1 s1 of 64 channels, rows of 30", make_conv2d_geometry(1, 64, 3, 30, 33, 1, 1)},
      {"several k blocks and row blocks", make_conv2d_geometry(1, 64, 6, 6, 150, 3, 3, 1, 1, 1, 1)},
      {"several k blocks, tiles across images", make_conv2d_geometry(3, 40, 7, 7, 14, 3, 3, 1, 1, 1, 1)},
      {"columns packed once and shared (few columns, many channels)",
       make_conv2d_geometry(3, 40, 7, 7, 50, 3, 3, 1, 1, 1, 1)},
      {"planes smaller than a tile", make_conv2d_geometry(5, 6, 4, 4, 8, 3, 3, 1, 1, 1, 1)},
      {"many columns (more than one column block)", make_conv2d_geometry(2, 3, 30, 30, 8, 3, 3, 1, 1, 1, 1)},
      {"wide rows (runs of 32 in one row)", make_conv2d_geometry(1, 2, 5, 70, 5, 3, 3, 1, 1, 1, 1)},
      {"stride 2 wide rows", make_conv2d_geometry(1, 2, 6, 90, 5, 3, 3, 2, 2, 1, 1)},
      {"stride 3, dilation 2", make_conv2d_geometry(2, 3, 13, 12, 5, 3, 3, 3, 3, 2, 2, 2, 2)},
      {"direct tiles: 12 + 11 pixels a row, 40 channels (a block of 8)",
       make_conv2d_geometry(2, 16, 23, 23, 40, 3, 3, 1, 1, 1, 1)},
      {"direct tiles: stride 2, 7x7, padding 3", make_conv2d_geometry(1, 3, 30, 29, 33, 7, 7, 2, 2, 3, 3)},
      {"direct tiles: unpadded, stride 3", make_conv2d_geometry(2, 10, 17, 16, 20, 3, 3, 3, 3)},
      {"direct tiles: padding 2 rows and 1 column, rows of 37 (a padded row of three vectors)",
       make_conv2d_geometry(2, 8, 9, 37, 12, 3, 3, 1, 1, 2, 1)},
      {"direct tiles: stride 2, padding 0 rows and 2 columns, rows of 50", make_conv2d_geometry(1, 8, 6, 50, 20, 3, 3, 2, 2, 0, 2)},
      {"grouped (2 channels per group)", make_conv2d_geometry(2, 8, 9, 9, 12, 3, 3, 1, 1, 1, 1, 1, 1, 4)},
      {"asymmetric kernel and padding", make_conv2d_geometry(2, 4, 9, 11, 6, 3, 2, 2, 1, 1, 2)},
      {"cropped output", cropped},
  };
  for (const Case& c : cases) {
    for (ConvAlgorithm algorithm : {ConvAlgorithm::implicit_gemm, ConvAlgorithm::direct_tiles})
      check_case(c.name, c.g, rng, algorithm);
  }
}

// Depthwise convolutions (the automatic choice runs them plane by plane: AVX-512 blocks of four output
// rows inside, single rows at the padding, the portable loop elsewhere): planes large enough for
// interior blocks and leftover rows, odd widths (masked chunks), both strides, a channel multiplier.
TEST(ConvForwardPaths, DepthwiseMatchesDefinition) {
  std::mt19937 rng(21);
  struct Case {
    const char* name;
    Conv2dGeometry g;
  };
  const Case cases[] = {
      {"3x3 s1 on 37x21", make_conv2d_geometry(2, 5, 37, 21, 5, 3, 3, 1, 1, 1, 1, 1, 1, 5)},
      {"3x3 s2 on 35x40", make_conv2d_geometry(2, 4, 35, 40, 4, 3, 3, 2, 2, 1, 1, 1, 1, 4)},
      {"3x3 s2 on 30x33, two outputs per channel", make_conv2d_geometry(1, 3, 30, 33, 6, 3, 3, 2, 2, 1, 1, 1, 1, 3)},
      {"3x3 s1 on 7x7 (a flat plane of 49)", make_conv2d_geometry(3, 8, 7, 7, 8, 3, 3, 1, 1, 1, 1, 1, 1, 8)},
      {"3x3 s1 on 8x8 (a flat plane of 64)", make_conv2d_geometry(2, 5, 8, 8, 5, 3, 3, 1, 1, 1, 1, 1, 1, 5)},
      {"3x3 s1 on 5x9 (flat, rows of 9)", make_conv2d_geometry(2, 3, 5, 9, 3, 3, 3, 1, 1, 1, 1, 1, 1, 3)},
      {"3x3 s1 on 1x1", make_conv2d_geometry(2, 3, 1, 1, 3, 3, 3, 1, 1, 1, 1, 1, 1, 3)},
      {"3x3 s1 on 2x13 (flat, rows of 13)", make_conv2d_geometry(1, 4, 2, 13, 4, 3, 3, 1, 1, 1, 1, 1, 1, 4)},
      {"3x3 s1 on 9x8 (72: rows, not flat)", make_conv2d_geometry(1, 4, 9, 8, 4, 3, 3, 1, 1, 1, 1, 1, 1, 4)},
      {"5x5 s1 unpadded on 19x18", make_conv2d_geometry(1, 4, 19, 18, 4, 5, 5, 1, 1, 0, 0, 1, 1, 4)},
  };
  for (const Case& c : cases) check_case(c.name, c.g, rng, ConvAlgorithm::automatic);
}

// Outputs larger than 16 MiB leave through non-temporal stores (pointwise products and depthwise planes):
// the same values, one configuration each.
TEST(ConvForwardPaths, LargeOutputsMatchDefinition) {
  std::mt19937 rng(33);
  const Conv2dGeometry cases[] = {make_conv2d_geometry(3, 16, 128, 128, 96, 1, 1),
                                  make_conv2d_geometry(2, 64, 200, 200, 64, 3, 3, 1, 1, 1, 1, 1, 1, 64)};
  for (const Conv2dGeometry& g : cases) {
    const auto x = random_values(g.batch * g.in_channels * g.in_h * g.in_w, rng);
    const auto w = random_values(g.out_channels * (g.in_channels / g.groups) * g.kernel_h * g.kernel_w, rng);
    const auto bias = random_values(g.out_channels, rng);
    std::vector<double> want, magnitude;
    reference_conv(g, x, w, want, magnitude);
    ConvEpilogue e;
    e.activation = Activation::relu6;
    std::vector<char> ws(static_cast<size_t>(conv2d_forward_workspace_bytes(g)));
    std::vector<float> y(want.size(), std::nanf(""));
    ASSERT_GT(y.size() * 4, size_t{16} << 20);
    conv2d_forward(g, x.data(), w.data(), bias.data(), y.data(), ws.empty() ? nullptr : ws.data(), e);
    const int64_t plane = g.out_h * g.out_w;
    for (size_t i = 0; i < y.size(); ++i) {
      const double v = apply(Activation::relu6, want[i] + bias[i / static_cast<size_t>(plane) % static_cast<size_t>(g.out_channels)]);
      ASSERT_NEAR(y[i], v, 1e-6 * (magnitude[i] + 8.0)) << "groups=" << g.groups << " at " << i;
    }
  }
}

// Weights packed while AVX-512 was on (for the direct tiles) still give the right result once it is
// off: the forward pass sees a layout it no longer runs and packs the weights itself.
TEST(ConvForwardPaths, WeightsPackedForAnotherTile) {
  if (!use_avx512()) GTEST_SKIP() << "needs a CPU with AVX-512";
  std::mt19937 rng(9);
  const Conv2dGeometry g = make_conv2d_geometry(2, 8, 9, 9, 20, 3, 3, 1, 1, 1, 1);
  const auto x = random_values(2 * 8 * 81, rng), w = random_values(20 * 8 * 9, rng);
  std::vector<float> packed(static_cast<size_t>(conv2d_packed_weights_floats(g)));
  conv2d_pack_weights(g, w.data(), packed.data());
  std::vector<float> want(static_cast<size_t>(2 * 20 * 81)), got(want.size());
  conv2d_forward(g, x.data(), w.data(), nullptr, want.data(), nullptr, {}, nullptr, ConvAlgorithm::automatic);
  {
    PathSwitch avx2(Path::avx2);
    std::vector<char> ws(static_cast<size_t>(conv2d_forward_workspace_bytes(g)));
    conv2d_forward(g, x.data(), w.data(), nullptr, got.data(), ws.data(), {}, nullptr, ConvAlgorithm::automatic,
                   packed.data());
  }
  for (size_t i = 0; i < want.size(); ++i) ASSERT_NEAR(got[i], want[i], 1e-4) << i;
}

}  // namespace
}  // namespace tessera::kernels
