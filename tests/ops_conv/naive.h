#pragma once
// Independent direct-loop versions of PyTorch's definitions, written straight from the formulas (one
// nested loop per index), that the conv/pool/upsample tests compare the ops against.
#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "test_util.h"

namespace conv_test {

using tessera::Shape;

struct Conv2dArgs {
  int64_t sh = 1, sw = 1, ph = 0, pw = 0, dh = 1, dw = 1, groups = 1;
};

inline int64_t idx4(const Shape& s, int64_t a, int64_t b, int64_t c, int64_t d) {
  return ((a * s[1] + b) * s[2] + c) * s[3] + d;
}

// y[n, co, oh, ow] = bias[co] + sum_{c, kh, kw} w[co, c, kh, kw] x[n, g Cg + c, oh sh - ph + kh dh, ow sw - pw + kw dw]
inline std::vector<double> naive_conv2d(const std::vector<double>& x, const Shape& xs, const std::vector<double>& w,
                                        const Shape& ws, const std::vector<double>& bias, const Conv2dArgs& a,
                                        Shape* out_shape) {
  const int64_t N = xs[0], H = xs[2], W = xs[3];
  const int64_t CO = ws[0], CG = ws[1], KH = ws[2], KW = ws[3];
  const int64_t OH = (H + 2 * a.ph - a.dh * (KH - 1) - 1) / a.sh + 1;
  const int64_t OW = (W + 2 * a.pw - a.dw * (KW - 1) - 1) / a.sw + 1;
  const int64_t out_per_group = CO / a.groups;
  *out_shape = {N, CO, OH, OW};
  std::vector<double> y(static_cast<size_t>(N * CO * OH * OW));
  for (int64_t n = 0; n < N; ++n)
    for (int64_t co = 0; co < CO; ++co)
      for (int64_t oh = 0; oh < OH; ++oh)
        for (int64_t ow = 0; ow < OW; ++ow) {
          double acc = bias.empty() ? 0.0 : bias[static_cast<size_t>(co)];
          const int64_t g = co / out_per_group;
          for (int64_t c = 0; c < CG; ++c)
            for (int64_t kh = 0; kh < KH; ++kh)
              for (int64_t kw = 0; kw < KW; ++kw) {
                const int64_t ih = oh * a.sh - a.ph + kh * a.dh, iw = ow * a.sw - a.pw + kw * a.dw;
                if (ih < 0 || ih >= H || iw < 0 || iw >= W) continue;
                acc += w[static_cast<size_t>(idx4(ws, co, c, kh, kw))] *
                       x[static_cast<size_t>(idx4(xs, n, g * CG + c, ih, iw))];
              }
          y[static_cast<size_t>(idx4(*out_shape, n, co, oh, ow))] = acc;
        }
  return y;
}

// PyTorch's transposed convolution as a scatter: every input element adds x * w into the output at
// ih sh - ph + kh dh (weight [Cin, Cout/groups, kH, kW]).
inline std::vector<double> naive_conv_transpose2d(const std::vector<double>& x, const Shape& xs,
                                                  const std::vector<double>& w, const Shape& ws,
                                                  const std::vector<double>& bias, const Conv2dArgs& a, int64_t oph,
                                                  int64_t opw, Shape* out_shape) {
  const int64_t N = xs[0], CI = xs[1], H = xs[2], W = xs[3];
  const int64_t COG = ws[1], KH = ws[2], KW = ws[3];
  const int64_t CO = COG * a.groups, in_per_group = CI / a.groups;
  const int64_t OH = (H - 1) * a.sh - 2 * a.ph + a.dh * (KH - 1) + oph + 1;
  const int64_t OW = (W - 1) * a.sw - 2 * a.pw + a.dw * (KW - 1) + opw + 1;
  *out_shape = {N, CO, OH, OW};
  std::vector<double> y(static_cast<size_t>(N * CO * OH * OW), 0.0);
  for (int64_t n = 0; n < N; ++n)
    for (int64_t co = 0; co < CO; ++co)
      for (int64_t oh = 0; oh < OH; ++oh)
        for (int64_t ow = 0; ow < OW; ++ow)
          y[static_cast<size_t>(idx4(*out_shape, n, co, oh, ow))] = bias.empty() ? 0.0 : bias[static_cast<size_t>(co)];
  for (int64_t n = 0; n < N; ++n)
    for (int64_t ci = 0; ci < CI; ++ci)
      for (int64_t ih = 0; ih < H; ++ih)
        for (int64_t iw = 0; iw < W; ++iw)
          for (int64_t c = 0; c < COG; ++c)
            for (int64_t kh = 0; kh < KH; ++kh)
              for (int64_t kw = 0; kw < KW; ++kw) {
                const int64_t oh = ih * a.sh - a.ph + kh * a.dh, ow = iw * a.sw - a.pw + kw * a.dw;
                if (oh < 0 || oh >= OH || ow < 0 || ow >= OW) continue;
                const int64_t co = (ci / in_per_group) * COG + c;
                y[static_cast<size_t>(idx4(*out_shape, n, co, oh, ow))] +=
                    x[static_cast<size_t>(idx4(xs, n, ci, ih, iw))] * w[static_cast<size_t>(idx4(ws, ci, c, kh, kw))];
              }
  return y;
}

struct Pool2dArgs {
  int64_t kh = 2, kw = 2, sh = 2, sw = 2, ph = 0, pw = 0, dh = 1, dw = 1;
};

// Max over each (dilated) window of a [B, H, W] volume; positions outside the input are skipped (-inf).
inline std::vector<double> naive_max_pool2d(const std::vector<double>& x, int64_t B, int64_t H, int64_t W,
                                            const Pool2dArgs& a, int64_t* OH, int64_t* OW) {
  *OH = (H + 2 * a.ph - a.dh * (a.kh - 1) - 1) / a.sh + 1;
  *OW = (W + 2 * a.pw - a.dw * (a.kw - 1) - 1) / a.sw + 1;
  std::vector<double> y;
  for (int64_t b = 0; b < B; ++b)
    for (int64_t oh = 0; oh < *OH; ++oh)
      for (int64_t ow = 0; ow < *OW; ++ow) {
        double best = -std::numeric_limits<double>::infinity();
        for (int64_t i = 0; i < a.kh; ++i)
          for (int64_t j = 0; j < a.kw; ++j) {
            const int64_t ih = oh * a.sh - a.ph + i * a.dh, iw = ow * a.sw - a.pw + j * a.dw;
            if (ih >= 0 && ih < H && iw >= 0 && iw < W)
              best = std::max(best, x[static_cast<size_t>((b * H + ih) * W + iw)]);
          }
        y.push_back(best);
      }
  return y;
}

inline std::vector<double> naive_avg_pool2d(const std::vector<double>& x, int64_t B, int64_t H, int64_t W,
                                            const Pool2dArgs& a, bool count_include_pad) {
  const int64_t OH = (H + 2 * a.ph - a.kh) / a.sh + 1, OW = (W + 2 * a.pw - a.kw) / a.sw + 1;
  std::vector<double> y;
  for (int64_t b = 0; b < B; ++b)
    for (int64_t oh = 0; oh < OH; ++oh)
      for (int64_t ow = 0; ow < OW; ++ow) {
        double total = 0.0;
        int64_t count = 0;
        for (int64_t i = 0; i < a.kh; ++i)
          for (int64_t j = 0; j < a.kw; ++j) {
            const int64_t ih = oh * a.sh - a.ph + i, iw = ow * a.sw - a.pw + j;
            if (ih >= 0 && ih < H && iw >= 0 && iw < W) {
              total += x[static_cast<size_t>((b * H + ih) * W + iw)];
              ++count;
            }
          }
        y.push_back(total / static_cast<double>(count_include_pad ? a.kh * a.kw : count));
      }
  return y;
}

inline std::vector<double> naive_adaptive_avg_pool2d(const std::vector<double>& x, int64_t B, int64_t H, int64_t W,
                                                     int64_t OH, int64_t OW) {
  std::vector<double> y;
  for (int64_t b = 0; b < B; ++b)
    for (int64_t oh = 0; oh < OH; ++oh)
      for (int64_t ow = 0; ow < OW; ++ow) {
        const int64_t h0 = static_cast<int64_t>(std::floor(double(oh) * H / OH));
        const int64_t h1 = static_cast<int64_t>(std::ceil(double(oh + 1) * H / OH));
        const int64_t w0 = static_cast<int64_t>(std::floor(double(ow) * W / OW));
        const int64_t w1 = static_cast<int64_t>(std::ceil(double(ow + 1) * W / OW));
        double total = 0.0;
        for (int64_t i = h0; i < h1; ++i)
          for (int64_t j = w0; j < w1; ++j) total += x[static_cast<size_t>((b * H + i) * W + j)];
        y.push_back(total / static_cast<double>((h1 - h0) * (w1 - w0)));
      }
  return y;
}

inline std::vector<double> naive_upsample_nearest(const std::vector<double>& x, int64_t B, int64_t H, int64_t W,
                                                  int64_t OH, int64_t OW) {
  std::vector<double> y;
  for (int64_t b = 0; b < B; ++b)
    for (int64_t oh = 0; oh < OH; ++oh)
      for (int64_t ow = 0; ow < OW; ++ow) {
        const int64_t ih =
            std::min(static_cast<int64_t>(std::floor(double(oh) * double(H) / double(OH) + 1e-9)), H - 1);
        const int64_t iw =
            std::min(static_cast<int64_t>(std::floor(double(ow) * double(W) / double(OW) + 1e-9)), W - 1);
        y.push_back(x[static_cast<size_t>((b * H + ih) * W + iw)]);
      }
  return y;
}

// PyTorch's bilinear source coordinate along one axis and the two neighbours' weights.
inline void bilinear_source(int64_t dst, int64_t in, int64_t out, bool align_corners, int64_t* i0, int64_t* i1,
                            double* l1) {
  double src;
  if (align_corners) {
    src = out > 1 ? double(dst) * double(in - 1) / double(out - 1) : 0.0;
  } else {
    src = (double(dst) + 0.5) * double(in) / double(out) - 0.5;
    if (src < 0) src = 0;
  }
  *i0 = static_cast<int64_t>(std::floor(src));
  *i1 = *i0 + (*i0 < in - 1 ? 1 : 0);
  *l1 = src - double(*i0);
}

inline std::vector<double> naive_upsample_bilinear(const std::vector<double>& x, int64_t B, int64_t H, int64_t W,
                                                   int64_t OH, int64_t OW, bool align_corners) {
  std::vector<double> y;
  for (int64_t b = 0; b < B; ++b)
    for (int64_t oh = 0; oh < OH; ++oh)
      for (int64_t ow = 0; ow < OW; ++ow) {
        int64_t h0, h1, w0, w1;
        double lh, lw;
        bilinear_source(oh, H, OH, align_corners, &h0, &h1, &lh);
        bilinear_source(ow, W, OW, align_corners, &w0, &w1, &lw);
        auto at = [&](int64_t i, int64_t j) { return x[static_cast<size_t>((b * H + i) * W + j)]; };
        y.push_back((1 - lh) * ((1 - lw) * at(h0, w0) + lw * at(h0, w1)) +
                    lh * ((1 - lw) * at(h1, w0) + lw * at(h1, w1)));
      }
  return y;
}

}  // namespace conv_test
