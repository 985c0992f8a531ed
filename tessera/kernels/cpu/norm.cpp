// Layer norm and RMS norm over rows. Statistics are accumulated in double (rows are short and the
// cost is in the memory passes, not the adds), so results match the reference closely.
#include "tessera/kernels/cpu/norm.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "tessera/core/error.h"

namespace tessera::kernels {

namespace {

template <typename F>
void for_rows(int64_t rows, int64_t cols, runtime::ThreadPool* pool, F&& row_fn) {
  runtime::ThreadPool& tp = pool != nullptr ? *pool : runtime::default_pool();
  tp.parallel_for(rows, std::max<int64_t>(1, 16384 / std::max<int64_t>(cols, 1)), [&](int64_t r0, int64_t r1) {
    for (int64_t r = r0; r < r1; ++r) row_fn(r);
  });
}

}  // namespace

void layer_norm_forward(int64_t rows, int64_t cols, const float* x, const float* weight, const float* bias, float eps,
                        float* y, float* mean_out, float* rstd_out, runtime::ThreadPool* pool) {
  TESSERA_CHECK(rows >= 0 && cols >= 1, "layer_norm_forward: bad size rows={} cols={}", rows, cols);
  for_rows(rows, cols, pool, [&](int64_t r) {
    const float* xr = x + r * cols;
    float* yr = y + r * cols;
    double s = 0.0;
    for (int64_t j = 0; j < cols; ++j) s += xr[j];
    const double mean = s / static_cast<double>(cols);
    double ss = 0.0;
    for (int64_t j = 0; j < cols; ++j) {
      const double d = xr[j] - mean;
      ss += d * d;
    }
    const float rstd = static_cast<float>(1.0 / std::sqrt(ss / static_cast<double>(cols) + eps));
    const float mf = static_cast<float>(mean);
    for (int64_t j = 0; j < cols; ++j) {
      float v = (xr[j] - mf) * rstd;
      if (weight != nullptr) v *= weight[j];
      if (bias != nullptr) v += bias[j];
      yr[j] = v;
    }
    if (mean_out != nullptr) mean_out[r] = mf;
    if (rstd_out != nullptr) rstd_out[r] = rstd;
  });
}

void layer_norm_backward(int64_t rows, int64_t cols, const float* x, const float* weight, const float* mean,
                         const float* rstd, const float* dy, float* dx, float* dweight, float* dbias,
                         runtime::ThreadPool* pool) {
  TESSERA_CHECK(rows >= 0 && cols >= 1, "layer_norm_backward: bad size rows={} cols={}", rows, cols);
  // dx = rstd * (g - mean(g) - xhat * mean(g * xhat)), with g = dy * weight.
  for_rows(rows, cols, pool, [&](int64_t r) {
    const float* xr = x + r * cols;
    const float* gr = dy + r * cols;
    float* dr = dx + r * cols;
    const float mu = mean[r], rs = rstd[r];
    double sg = 0.0, sgx = 0.0;
    for (int64_t j = 0; j < cols; ++j) {
      const double g = weight != nullptr ? gr[j] * weight[j] : gr[j];
      sg += g;
      sgx += g * ((xr[j] - mu) * rs);
    }
    const float mg = static_cast<float>(sg / static_cast<double>(cols));
    const float mgx = static_cast<float>(sgx / static_cast<double>(cols));
    for (int64_t j = 0; j < cols; ++j) {
      const float g = weight != nullptr ? gr[j] * weight[j] : gr[j];
      const float xhat = (xr[j] - mu) * rs;
      dr[j] = rs * (g - mg - xhat * mgx);
    }
  });
  if (dweight == nullptr && dbias == nullptr) return;
  // Parameter gradients: column sums, split over columns so threads never share an output.
  runtime::ThreadPool& tp = pool != nullptr ? *pool : runtime::default_pool();
  tp.parallel_for(cols, std::max<int64_t>(16, 16384 / std::max<int64_t>(rows, 1)), [&](int64_t c0, int64_t c1) {
    for (int64_t j = c0; j < c1; ++j) {
      double sw = 0.0, sb = 0.0;
      for (int64_t r = 0; r < rows; ++r) {
        const float g = dy[r * cols + j];
        sw += g * ((x[r * cols + j] - mean[r]) * rstd[r]);
        sb += g;
      }
      if (dweight != nullptr) dweight[j] = static_cast<float>(sw);
      if (dbias != nullptr) dbias[j] = static_cast<float>(sb);
    }
  });
}

void rms_norm_forward(int64_t rows, int64_t cols, const float* x, const float* weight, float eps, float* y,
                      runtime::ThreadPool* pool) {
  TESSERA_CHECK(rows >= 0 && cols >= 1, "rms_norm_forward: bad size rows={} cols={}", rows, cols);
  for_rows(rows, cols, pool, [&](int64_t r) {
    const float* xr = x + r * cols;
    float* yr = y + r * cols;
    double ss = 0.0;
    for (int64_t j = 0; j < cols; ++j) ss += static_cast<double>(xr[j]) * xr[j];
    const float scale = static_cast<float>(1.0 / std::sqrt(ss / static_cast<double>(cols) + eps));
    for (int64_t j = 0; j < cols; ++j) yr[j] = xr[j] * scale * (weight != nullptr ? weight[j] : 1.0f);
  });
}

}  // namespace tessera::kernels
