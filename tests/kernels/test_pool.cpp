#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "tessera/core/error.h"
#include "tessera/kernels/cpu/cpu_features.h"
#include "tessera/kernels/cpu/pool.h"

namespace tessera::kernels {
namespace {

std::vector<float> random_pool_values(int64_t n, std::mt19937& rng, bool with_ties) {
  std::uniform_real_distribution<float> d(-1.0f, 1.0f);
  std::uniform_int_distribution<int> small(-2, 2);
  std::vector<float> v(static_cast<size_t>(n));
  for (auto& x : v) x = with_ties ? static_cast<float>(small(rng)) : d(rng);
  return v;
}

// The first maximum of each window in row-major scan order, written independently of the kernel.
int64_t oracle_argmax(const Pool2dGeometry& g, const float* xp, int64_t oh, int64_t ow) {
  int64_t best = -1;
  for (int64_t kh = 0; kh < g.kernel_h; ++kh)
    for (int64_t kw = 0; kw < g.kernel_w; ++kw) {
      const int64_t ih = oh * g.stride_h - g.pad_h + kh * g.dilation_h;
      const int64_t iw = ow * g.stride_w - g.pad_w + kw * g.dilation_w;
      if (ih < 0 || ih >= g.in_h || iw < 0 || iw >= g.in_w) continue;
      const int64_t at = ih * g.in_w + iw;
      if (best < 0) {
        best = at;
        continue;
      }
      const float v = xp[at], b = xp[best];
      if (std::isnan(b)) continue;
      if (std::isnan(v) || v > b) best = at;
    }
  return best;
}

std::vector<Pool2dGeometry> pool_cases() {
  return {
      make_pool2d_geometry(6, 26, 26, 2, 2),                    // CNN pool 1 (even)
      make_pool2d_geometry(5, 11, 11, 2, 2),                    // CNN pool 2 (odd: last row/column unused)
      make_pool2d_geometry(3, 40, 37, 2, 2),                    // wide rows: several AVX2 steps
      make_pool2d_geometry(4, 9, 8, 3, 3, 2, 2, 1, 1),          // overlapping with padding
      make_pool2d_geometry(2, 10, 11, 3, 2, 1, 3, 1, 1, 2, 1),  // dilation
      make_pool2d_geometry(2, 5, 5, 5, 5),                      // one window
      make_pool2d_geometry(2, 45, 70, 3, 3, 2, 2, 1, 1),        // ResNet's 3x3 / 2: several AVX-512 chunks a row
      make_pool2d_geometry(2, 23, 37, 3, 3, 1, 1, 1, 1),        // stride 1, a partial last chunk
      // ceil mode: partial last windows (the 2x2 one off the vector path), a kernel wider than the input
      make_pool2d_geometry(5, 11, 11, 2, 2, 0, 0, 0, 0, 1, 1, true),
      make_pool2d_geometry(2, 9, 8, 3, 3, 2, 2, 1, 1, 1, 1, true),
      make_pool2d_geometry(2, 10, 11, 3, 2, 2, 3, 1, 0, 2, 1, true),
      make_pool2d_geometry(3, 2, 2, 3, 3, 2, 2, 0, 0, 1, 1, true),
  };
}

void run_max_pool_checks() {
  std::mt19937 rng(21);
  for (int threads : {1, 2}) {
    runtime::ThreadPool pool(threads);
    for (const auto& g : pool_cases()) {
      for (bool ties : {false, true}) {
        const int64_t in = g.planes * g.in_h * g.in_w, out = g.planes * g.out_h * g.out_w;
        auto x = random_pool_values(in, rng, ties);
        if (in > 7) x[7] = std::nanf("");  // NaN wins its window
        const auto dy = random_pool_values(out, rng, false);
        std::vector<float> y(static_cast<size_t>(out)), dx(static_cast<size_t>(in), 123.0f);
        max_pool2d_forward(g, x.data(), y.data(), &pool);
        max_pool2d_backward(g, x.data(), dy.data(), dx.data(), &pool);
        std::vector<double> want_dx(static_cast<size_t>(in), 0.0);
        for (int64_t p = 0; p < g.planes; ++p)
          for (int64_t oh = 0; oh < g.out_h; ++oh)
            for (int64_t ow = 0; ow < g.out_w; ++ow) {
              const float* xp = x.data() + p * g.in_h * g.in_w;
              const int64_t at = oracle_argmax(g, xp, oh, ow);
              const size_t o = static_cast<size_t>((p * g.out_h + oh) * g.out_w + ow);
              ASSERT_GE(at, 0);
              const float want = xp[at];
              if (std::isnan(want)) {
                ASSERT_TRUE(std::isnan(y[o])) << "window " << o;
              } else {
                ASSERT_EQ(y[o], want) << "window " << o << " threads=" << threads;
              }
              want_dx[static_cast<size_t>(p * g.in_h * g.in_w + at)] += dy[o];
            }
        for (size_t i = 0; i < dx.size(); ++i) ASSERT_NEAR(dx[i], want_dx[i], 1e-6) << "dx " << i << " ties=" << ties;
      }
    }
  }
}

TEST(MaxPool2d, ForwardAndBackwardMatchFirstMaximum) {
  run_max_pool_checks();
}

TEST(MaxPool2d, Avx2PathMatches) {
  const bool was = use_avx512();
  set_avx512_enabled(false);
  run_max_pool_checks();
  set_avx512_enabled(was);
}

TEST(MaxPool2d, PortableFallbackMatches) {
  set_avx2_enabled(false);
  run_max_pool_checks();
  set_avx2_enabled(true);
}

// The separable 3x3 stride-2 kernel (pool_max_3x3s2_avx512.cpp) against the scalar loop, bit for bit:
// signed zeros (the first of +0 and -0 in a window wins), -inf, and NaNs of different payloads (the
// last one in a window wins), on planes of odd and even sizes, padding 0 to 1, ceil mode, rows of
// several vectors and a partial last one, one and two threads.
TEST(MaxPool2d, Separable3x3Stride2MatchesScalarBitForBit) {
  const std::vector<Pool2dGeometry> cases = {
      make_pool2d_geometry(3, 112, 112, 3, 3, 2, 2, 1, 1),  // ResNet's
      make_pool2d_geometry(2, 45, 70, 3, 3, 2, 2, 1, 1),
      make_pool2d_geometry(2, 9, 8, 3, 3, 2, 2, 0, 0),
      make_pool2d_geometry(2, 10, 33, 3, 3, 2, 2, 1, 0),
      make_pool2d_geometry(2, 9, 8, 3, 3, 2, 2, 1, 1, 1, 1, true),
      make_pool2d_geometry(3, 2, 2, 3, 3, 2, 2, 0, 0, 1, 1, true),
      make_pool2d_geometry(2, 7, 100, 3, 3, 2, 2, 0, 1, 1, 1, true),
      make_pool2d_geometry(1, 3, 3, 3, 3, 2, 2, 1, 1),
  };
  std::mt19937 rng(22);
  std::uniform_int_distribution<int> pick(0, 11);
  auto value = [&] {
    const int k = pick(rng);
    if (k < 5) return static_cast<float>(k - 2);
    if (k == 5) return 0.0f;
    if (k == 6) return -0.0f;
    if (k == 7) return -std::numeric_limits<float>::infinity();
    if (k == 8) return std::nanf("1");
    if (k == 9) return -std::nanf("2");
    return static_cast<float>(k);
  };
  for (int threads : {1, 2}) {
    runtime::ThreadPool pool(threads);
    for (const auto& g : cases) {
      std::vector<float> x(static_cast<size_t>(g.planes * g.in_h * g.in_w));
      for (auto& v : x) v = value();
      const size_t out = static_cast<size_t>(g.planes * g.out_h * g.out_w);
      std::vector<float> fast(out), scalar(out);
      max_pool2d_forward(g, x.data(), fast.data(), &pool);
      const bool avx512 = use_avx512(), avx2 = use_avx2();
      set_avx512_enabled(false);
      set_avx2_enabled(false);
      max_pool2d_forward(g, x.data(), scalar.data(), &pool);
      set_avx2_enabled(avx2);
      set_avx512_enabled(avx512);
      for (size_t i = 0; i < out; ++i) {
        uint32_t a = 0, b = 0;
        std::memcpy(&a, &fast[i], 4);
        std::memcpy(&b, &scalar[i], 4);
        ASSERT_EQ(a, b) << "output " << i << " of " << g.planes << "x" << g.in_h << "x" << g.in_w << " pad " << g.pad_h
                        << "," << g.pad_w << " ceil " << g.ceil_mode << " threads " << threads;
      }
    }
  }
}

TEST(MaxPool2d, HandComputed) {
  const std::vector<float> x = {1, 5, 2, 0,  //
                                3, 4, 7, 7,  //
                                9, 0, 1, 1,  //
                                0, 9, 1, 2};
  std::vector<float> y(4), dx(16);
  const Pool2dGeometry g = make_pool2d_geometry(1, 4, 4, 2, 2);
  max_pool2d_forward(g, x.data(), y.data());
  EXPECT_EQ(y, (std::vector<float>{5, 7, 9, 2}));
  const std::vector<float> dy = {10, 20, 30, 40};
  max_pool2d_backward(g, x.data(), dy.data(), dx.data());
  // Ties (7, 7) and (9, 9) go to the first in scan order.
  EXPECT_EQ(dx, (std::vector<float>{0, 10, 0, 0, 0, 0, 20, 0, 30, 0, 0, 0, 0, 0, 0, 40}));
}

TEST(AvgPool2d, ForwardAndBackwardMatchDefinition) {
  std::mt19937 rng(22);
  runtime::ThreadPool pool(2);
  const std::vector<Pool2dGeometry> cases = {
      make_pool2d_geometry(3, 8, 8, 2, 2), make_pool2d_geometry(2, 7, 9, 3, 3, 2, 2, 1, 1),
      make_pool2d_geometry(2, 5, 6, 3, 2, 1, 1, 1, 1), make_pool2d_geometry(2, 7, 9, 3, 3, 2, 2, 1, 1, 1, 1, true),
      make_pool2d_geometry(2, 5, 5, 2, 2, 2, 2, 0, 0, 1, 1, true)};
  for (const auto& g : cases)
    for (bool include_pad : {true, false}) {
      const int64_t in = g.planes * g.in_h * g.in_w, out = g.planes * g.out_h * g.out_w;
      const auto x = random_pool_values(in, rng, false), dy = random_pool_values(out, rng, false);
      std::vector<float> y(static_cast<size_t>(out)), dx(static_cast<size_t>(in));
      avg_pool2d_forward(g, include_pad, x.data(), y.data(), &pool);
      avg_pool2d_backward(g, include_pad, dy.data(), dx.data(), &pool);
      std::vector<double> want_dx(static_cast<size_t>(in), 0.0);
      for (int64_t p = 0; p < g.planes; ++p)
        for (int64_t oh = 0; oh < g.out_h; ++oh)
          for (int64_t ow = 0; ow < g.out_w; ++ow) {
            double s = 0;
            int64_t count = 0;
            std::vector<int64_t> cells;
            for (int64_t kh = 0; kh < g.kernel_h; ++kh)
              for (int64_t kw = 0; kw < g.kernel_w; ++kw) {
                const int64_t ih = oh * g.stride_h - g.pad_h + kh, iw = ow * g.stride_w - g.pad_w + kw;
                if (ih < 0 || ih >= g.in_h || iw < 0 || iw >= g.in_w) continue;
                cells.push_back(p * g.in_h * g.in_w + ih * g.in_w + iw);
                s += x[static_cast<size_t>(cells.back())];
                ++count;
              }
            // PyTorch's count_include_pad divisor: the window clipped to the padded input (ceil mode cuts the
            // last one).
            const int64_t h0 = oh * g.stride_h - g.pad_h, w0 = ow * g.stride_w - g.pad_w;
            const int64_t padded =
                (std::min(h0 + g.kernel_h, g.in_h + g.pad_h) - h0) * (std::min(w0 + g.kernel_w, g.in_w + g.pad_w) - w0);
            const double div = include_pad ? static_cast<double>(padded) : static_cast<double>(count);
            const size_t o = static_cast<size_t>((p * g.out_h + oh) * g.out_w + ow);
            ASSERT_NEAR(y[o], s / div, 1e-6);
            for (int64_t c : cells) want_dx[static_cast<size_t>(c)] += dy[o] / div;
          }
      for (size_t i = 0; i < dx.size(); ++i) ASSERT_NEAR(dx[i], want_dx[i], 1e-6);
    }
}

TEST(Pool2d, RejectsBadGeometry) {
  std::vector<float> buf(100);
  Pool2dGeometry g = make_pool2d_geometry(1, 4, 4, 2, 2);
  g.out_h = 3;
  EXPECT_THROW(max_pool2d_forward(g, buf.data(), buf.data()), Error);
  // Ceil mode allows a partial last window, floor mode does not.
  g = make_pool2d_geometry(1, 5, 5, 2, 2, 0, 0, 0, 0, 1, 1, true);
  EXPECT_EQ(g.out_h, 3);
  EXPECT_NO_THROW(max_pool2d_forward(g, buf.data(), buf.data() + 50));
  g.ceil_mode = false;
  EXPECT_THROW(max_pool2d_forward(g, buf.data(), buf.data() + 50), Error);
  g = make_pool2d_geometry(1, 4, 4, 2, 2);
  g.kernel_w = 0;
  EXPECT_THROW(avg_pool2d_forward(g, true, buf.data(), buf.data()), Error);
}

}  // namespace
}  // namespace tessera::kernels
