// Row-wise kernels: softmax family, cross-entropy, layer/RMS norm and reductions, each against a
// direct double-precision evaluation of its formula.
#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include "tessera/core/error.h"
#include "tessera/kernels/cpu/cpu_features.h"
#include "tessera/kernels/cpu/norm.h"
#include "tessera/kernels/cpu/reduce.h"
#include "tessera/kernels/cpu/softmax.h"

namespace tessera::kernels {
namespace {

std::vector<float> random_row_values(int64_t n, std::mt19937& rng, float scale = 3.0f) {
  std::uniform_real_distribution<float> d(-scale, scale);
  std::vector<float> v(static_cast<size_t>(n));
  for (auto& x : v) x = d(rng);
  return v;
}

const int64_t kShapes[][2] = {{1, 1}, {3, 7}, {5, 8}, {4, 33}, {64, 10}, {7, 1000}, {2, 4099}};

void softmax_family_checks() {
  std::mt19937 rng(31);
  for (int threads : {1, 2}) {
    runtime::ThreadPool pool(threads);
    for (const auto& s : kShapes) {
      const int64_t rows = s[0], cols = s[1];
      const auto x = random_row_values(rows * cols, rng, 20.0f), dy = random_row_values(rows * cols, rng, 1.0f);
      std::vector<float> y(x.size()), ly(x.size()), dx(x.size()), ldx(x.size());
      softmax_forward(rows, cols, x.data(), y.data(), &pool);
      log_softmax_forward(rows, cols, x.data(), ly.data(), &pool);
      softmax_backward(rows, cols, y.data(), dy.data(), dx.data(), &pool);
      log_softmax_backward(rows, cols, ly.data(), dy.data(), ldx.data(), &pool);
      for (int64_t r = 0; r < rows; ++r) {
        double m = -1e300, sum = 0.0;
        for (int64_t j = 0; j < cols; ++j) m = std::max(m, static_cast<double>(x[static_cast<size_t>(r * cols + j)]));
        for (int64_t j = 0; j < cols; ++j) sum += std::exp(x[static_cast<size_t>(r * cols + j)] - m);
        double dot = 0.0, gsum = 0.0;
        for (int64_t j = 0; j < cols; ++j) {
          const size_t i = static_cast<size_t>(r * cols + j);
          const double p = std::exp(x[i] - m) / sum;
          dot += dy[i] * p;
          gsum += dy[i];
        }
        for (int64_t j = 0; j < cols; ++j) {
          const size_t i = static_cast<size_t>(r * cols + j);
          const double p = std::exp(x[i] - m) / sum;
          ASSERT_NEAR(y[i], p, 1e-6 + 1e-5 * p) << rows << "x" << cols;
          ASSERT_NEAR(ly[i], x[i] - m - std::log(sum), 2e-5 * (1.0 + std::abs(x[i] - m)));
          ASSERT_NEAR(dx[i], p * (dy[i] - dot), 1e-5);
          ASSERT_NEAR(ldx[i], dy[i] - p * gsum, 1e-4 * (1.0 + std::abs(gsum)));
        }
      }
    }
  }
}

TEST(Softmax, ForwardAndBackwardMatchFormulas) {
  softmax_family_checks();
}

TEST(Softmax, PortableFallbackMatches) {
  set_avx2_enabled(false);
  softmax_family_checks();
  set_avx2_enabled(true);
}

TEST(Softmax, InPlaceAndSpecialValues) {
  std::vector<float> x = {1000.0f, 1000.0f, -std::numeric_limits<float>::infinity(), 0.0f};
  softmax_forward(1, 4, x.data(), x.data());
  EXPECT_NEAR(x[0], 0.5f, 1e-6);
  EXPECT_NEAR(x[1], 0.5f, 1e-6);
  EXPECT_NEAR(x[2], 0.0f, 1e-30);
  EXPECT_NEAR(x[3], 0.0f, 1e-30);
  std::vector<float> n = {1.0f, std::nanf(""), 2.0f};
  softmax_forward(1, 3, n.data(), n.data());
  for (float v : n) EXPECT_TRUE(std::isnan(v));
}

TEST(CrossEntropy, LossAndGradient) {
  std::mt19937 rng(32);
  runtime::ThreadPool pool(2);
  const int64_t rows = 37, cols = 10;
  const auto x = random_row_values(rows * cols, rng, 5.0f);
  std::vector<int64_t> t(static_cast<size_t>(rows));
  for (int64_t r = 0; r < rows; ++r) t[static_cast<size_t>(r)] = r % 5 == 3 ? -100 : (r * 7) % cols;
  std::vector<float> loss(static_cast<size_t>(rows)), dlogits(x.size());
  cross_entropy_forward(rows, cols, x.data(), t.data(), loss.data(), -100, &pool);
  const float scale = 1.0f / rows;
  cross_entropy_backward(rows, cols, x.data(), t.data(), &scale, 0, dlogits.data(), -100, &pool);
  for (int64_t r = 0; r < rows; ++r) {
    const int64_t tr = t[static_cast<size_t>(r)];
    double m = -1e300, sum = 0.0;
    for (int64_t j = 0; j < cols; ++j) m = std::max(m, static_cast<double>(x[static_cast<size_t>(r * cols + j)]));
    for (int64_t j = 0; j < cols; ++j) sum += std::exp(x[static_cast<size_t>(r * cols + j)] - m);
    const double lse = m + std::log(sum);
    ASSERT_NEAR(loss[static_cast<size_t>(r)], tr < 0 ? 0.0 : lse - x[static_cast<size_t>(r * cols + tr)], 1e-5);
    for (int64_t j = 0; j < cols; ++j) {
      const double p = std::exp(x[static_cast<size_t>(r * cols + j)] - lse);
      const double want = tr < 0 ? 0.0 : scale * (p - (j == tr ? 1.0 : 0.0));
      ASSERT_NEAR(dlogits[static_cast<size_t>(r * cols + j)], want, 1e-7);
    }
  }
  std::vector<int64_t> bad = {0, 10};
  EXPECT_THROW(cross_entropy_forward(2, 10, x.data(), bad.data(), loss.data()), Error);
}

TEST(LayerNorm, ForwardBackwardAndRms) {
  std::mt19937 rng(33);
  for (int threads : {1, 2}) {
    runtime::ThreadPool pool(threads);
    for (const auto& s : kShapes) {
      const int64_t rows = s[0], cols = s[1];
      if (cols < 2) continue;
      const auto x = random_row_values(rows * cols, rng), w = random_row_values(cols, rng), b = random_row_values(cols, rng);
      const auto dy = random_row_values(rows * cols, rng, 1.0f);
      const float eps = 1e-5f;
      std::vector<float> y(x.size()), mean(static_cast<size_t>(rows)), rstd(static_cast<size_t>(rows));
      std::vector<float> dx(x.size()), dw(static_cast<size_t>(cols)), db(static_cast<size_t>(cols)), ry(x.size());
      layer_norm_forward(rows, cols, x.data(), w.data(), b.data(), eps, y.data(), mean.data(), rstd.data(), &pool);
      layer_norm_backward(rows, cols, x.data(), w.data(), mean.data(), rstd.data(), dy.data(), dx.data(), dw.data(),
                          db.data(), &pool);
      rms_norm_forward(rows, cols, x.data(), w.data(), eps, ry.data(), &pool);
      std::vector<double> want_dw(static_cast<size_t>(cols), 0.0), want_db(static_cast<size_t>(cols), 0.0);
      for (int64_t r = 0; r < rows; ++r) {
        const float* xr = x.data() + r * cols;
        double mu = 0, var = 0, ms = 0;
        for (int64_t j = 0; j < cols; ++j) mu += xr[j];
        mu /= cols;
        for (int64_t j = 0; j < cols; ++j) var += (xr[j] - mu) * (xr[j] - mu);
        var /= cols;
        for (int64_t j = 0; j < cols; ++j) ms += static_cast<double>(xr[j]) * xr[j];
        ms /= cols;
        const double rs = 1.0 / std::sqrt(var + eps);
        // dx by the explicit Jacobian-vector formula of normalisation.
        double sg = 0, sgx = 0;
        for (int64_t j = 0; j < cols; ++j) {
          const double g = dy[static_cast<size_t>(r * cols + j)] * w[static_cast<size_t>(j)];
          sg += g;
          sgx += g * (xr[j] - mu) * rs;
        }
        for (int64_t j = 0; j < cols; ++j) {
          const size_t i = static_cast<size_t>(r * cols + j);
          const double xhat = (xr[j] - mu) * rs;
          ASSERT_NEAR(y[i], xhat * w[static_cast<size_t>(j)] + b[static_cast<size_t>(j)], 1e-4);
          const double g = dy[i] * w[static_cast<size_t>(j)];
          ASSERT_NEAR(dx[i], rs * (g - sg / cols - xhat * sgx / cols), 1e-4 * (1 + rs));
          ASSERT_NEAR(ry[i], xr[j] / std::sqrt(ms + eps) * w[static_cast<size_t>(j)], 1e-5);
          want_dw[static_cast<size_t>(j)] += dy[i] * xhat;
          want_db[static_cast<size_t>(j)] += dy[i];
        }
        ASSERT_NEAR(mean[static_cast<size_t>(r)], mu, 1e-5);
        ASSERT_NEAR(rstd[static_cast<size_t>(r)], rs, 1e-4 * rs);
      }
      for (int64_t j = 0; j < cols; ++j) {
        ASSERT_NEAR(dw[static_cast<size_t>(j)], want_dw[static_cast<size_t>(j)], 1e-4 * rows);
        ASSERT_NEAR(db[static_cast<size_t>(j)], want_db[static_cast<size_t>(j)], 1e-5 * rows);
      }
    }
  }
}

TEST(LayerNorm, WithoutAffine) {
  const std::vector<float> x = {1, 2, 3, 4};
  std::vector<float> y(4);
  layer_norm_forward(1, 4, x.data(), nullptr, nullptr, 0.0f, y.data());
  const double sd = std::sqrt(1.25);
  for (int j = 0; j < 4; ++j) EXPECT_NEAR(y[static_cast<size_t>(j)], (j + 1 - 2.5) / sd, 1e-6);
}

TEST(Reduce, RowsColsAndOuterInner) {
  std::mt19937 rng(34);
  for (int threads : {1, 2}) {
    runtime::ThreadPool pool(threads);
    for (ReduceOp op : {ReduceOp::sum, ReduceOp::mean, ReduceOp::max, ReduceOp::min}) {
      for (const auto& s : {std::array<int64_t, 3>{3, 5, 7}, std::array<int64_t, 3>{64, 32, 169},
                            std::array<int64_t, 3>{1, 1030, 1}, std::array<int64_t, 3>{300, 3, 2}}) {
        const int64_t outer = s[0], mid = s[1], inner = s[2];
        const auto x = random_row_values(outer * mid * inner, rng);
        auto fold = [&](double acc, double v) {
          switch (op) {
            case ReduceOp::sum:
            case ReduceOp::mean:
              return acc + v;
            case ReduceOp::max:
              return std::max(acc, v);
            case ReduceOp::min:
              return std::min(acc, v);
          }
          return acc;
        };
        const double init = op == ReduceOp::max ? -1e300 : op == ReduceOp::min ? 1e300 : 0.0;
        // [outer, mid, inner] -> [mid]
        std::vector<float> out(static_cast<size_t>(mid));
        reduce_outer_inner(op, outer, mid, inner, x.data(), out.data(), &pool);
        for (int64_t m = 0; m < mid; ++m) {
          double acc = init;
          for (int64_t o = 0; o < outer; ++o)
            for (int64_t i = 0; i < inner; ++i) acc = fold(acc, x[static_cast<size_t>((o * mid + m) * inner + i)]);
          if (op == ReduceOp::mean) acc /= static_cast<double>(outer * inner);
          ASSERT_NEAR(out[static_cast<size_t>(m)], acc, 1e-4);
        }
        // As a matrix [outer * mid, inner]: rows and columns.
        const int64_t rows = outer * mid, cols = inner;
        std::vector<float> rout(static_cast<size_t>(rows)), cout(static_cast<size_t>(cols));
        reduce_rows(op, rows, cols, x.data(), rout.data(), &pool);
        reduce_cols(op, rows, cols, x.data(), cout.data(), &pool);
        for (int64_t r = 0; r < rows; ++r) {
          double acc = init;
          for (int64_t c = 0; c < cols; ++c) acc = fold(acc, x[static_cast<size_t>(r * cols + c)]);
          if (op == ReduceOp::mean) acc /= static_cast<double>(cols);
          ASSERT_NEAR(rout[static_cast<size_t>(r)], acc, 1e-4);
        }
        for (int64_t c = 0; c < cols; ++c) {
          double acc = init;
          for (int64_t r = 0; r < rows; ++r) acc = fold(acc, x[static_cast<size_t>(r * cols + c)]);
          if (op == ReduceOp::mean) acc /= static_cast<double>(rows);
          ASSERT_NEAR(cout[static_cast<size_t>(c)], acc, 1e-4);
        }
      }
    }
  }
}

TEST(Reduce, NanPropagatesThroughMaxAndMin) {
  const std::vector<float> x = {1, std::nanf(""), 3, 4, 5, 6};
  std::vector<float> r(2), c(3);
  reduce_rows(ReduceOp::max, 2, 3, x.data(), r.data());
  EXPECT_TRUE(std::isnan(r[0]));
  EXPECT_EQ(r[1], 6.0f);
  reduce_cols(ReduceOp::min, 2, 3, x.data(), c.data());
  EXPECT_EQ(c[0], 1.0f);
  EXPECT_TRUE(std::isnan(c[1]));
  EXPECT_EQ(c[2], 3.0f);
}

}  // namespace
}  // namespace tessera::kernels
