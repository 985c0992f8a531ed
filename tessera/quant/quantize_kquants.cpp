// Reference encoders for the K-quants (Q2_K..Q6_K) and Q8_K, following ggml's quantize_row_*_ref
// (the path llama-quantize takes without an importance matrix). The scale searches below are ggml's
// algorithms; every float expression keeps ggml's operand order, because a single differently
// rounded sum can flip a code and the files must match byte for byte.
#include <algorithm>
#include <cmath>
#include <cstring>

#include "tessera/core/half.h"
#include "tessera/quant/blocks.h"
#include "tessera/quant/quant_util.h"
#include "tessera/quant/quantize.h"

namespace tessera::quant::detail {

namespace {

constexpr float kGroupMaxEps = 1e-15f;

float h2f(uint16_t bits) {
  return f16_bits_to_f32(bits);
}
int clampi(int v, int lo, int hi) {
  return std::max(lo, std::min(hi, v));
}

// Symmetric codes in [-nmax, nmax-1] for n values, weighted by x^2, with a search over 18 nearby
// scales (ggml's make_qx_quants with rmse_type 1). Writes L as codes + nmax; returns the scale.
float fit_symmetric_weighted(int n, int nmax, const float* x, int8_t* L) {
  float max = 0, amax = 0;
  for (int i = 0; i < n; ++i) {
    const float ax = std::fabs(x[i]);
    if (ax > amax) {
      amax = ax;
      max = x[i];
    }
  }
  if (amax < kGroupMaxEps) {
    std::fill(L, L + n, int8_t{0});
    return 0.f;
  }
  const auto weight = [&](int i) { return x[i] * x[i]; };
  float iscale = static_cast<float>(-nmax) / max;
  float sumlx = 0, suml2 = 0;
  for (int i = 0; i < n; ++i) {
    const int l = clampi(nearest_int(iscale * x[i]), -nmax, nmax - 1);
    L[i] = static_cast<int8_t>(l + nmax);
    const float w = weight(i);
    sumlx += w * x[i] * static_cast<float>(l);
    suml2 += w * static_cast<float>(l) * static_cast<float>(l);
  }
  float scale = suml2 != 0 ? sumlx / suml2 : 0.0f;
  float best = scale * sumlx;
  for (int is = -9; is <= 9; ++is) {
    if (is == 0) continue;
    iscale = -(static_cast<float>(nmax) + 0.1f * static_cast<float>(is)) / max;
    sumlx = suml2 = 0;
    for (int i = 0; i < n; ++i) {
      const int l = clampi(nearest_int(iscale * x[i]), -nmax, nmax - 1);
      const float w = weight(i);
      sumlx += w * x[i] * static_cast<float>(l);
      suml2 += w * static_cast<float>(l) * static_cast<float>(l);
    }
    if (suml2 > 0 && sumlx * sumlx > best * suml2) {
      for (int i = 0; i < n; ++i) {
        L[i] = static_cast<int8_t>(nmax + clampi(nearest_int(iscale * x[i]), -nmax, nmax - 1));
      }
      scale = sumlx / suml2;
      best = scale * sumlx;
    }
  }
  return scale;
}

// Symmetric 3-bit codes refined one value at a time (ggml's make_q3_quants with do_rmse): each pass
// moves single codes whenever that lowers the x^2-weighted error. Writes L as codes + nmax.
float fit_q3(int n, int nmax, const float* x, int8_t* L) {
  float max = 0, amax = 0;
  for (int i = 0; i < n; ++i) {
    const float ax = std::fabs(x[i]);
    if (ax > amax) {
      amax = ax;
      max = x[i];
    }
  }
  if (amax < kGroupMaxEps) {
    std::fill(L, L + n, int8_t{0});
    return 0.f;
  }
  const float iscale = static_cast<float>(-nmax) / max;
  float sumlx = 0, suml2 = 0;
  for (int i = 0; i < n; ++i) {
    const int l = clampi(nearest_int(iscale * x[i]), -nmax, nmax - 1);
    L[i] = static_cast<int8_t>(l);
    const float w = x[i] * x[i];
    sumlx += w * x[i] * static_cast<float>(l);
    suml2 += w * static_cast<float>(l) * static_cast<float>(l);
  }
  for (int itry = 0; itry < 5; ++itry) {
    int changed = 0;
    for (int i = 0; i < n; ++i) {
      const float w = x[i] * x[i];
      float slx = sumlx - w * x[i] * static_cast<float>(L[i]);
      if (slx > 0) {
        float sl2 = suml2 - w * static_cast<float>(L[i]) * static_cast<float>(L[i]);
        const int new_l = clampi(nearest_int(x[i] * sl2 / slx), -nmax, nmax - 1);
        if (new_l != L[i]) {
          slx += w * x[i] * static_cast<float>(new_l);
          sl2 += w * static_cast<float>(new_l) * static_cast<float>(new_l);
          if (sl2 > 0 && slx * slx * suml2 > sumlx * sumlx * sl2) {
            L[i] = static_cast<int8_t>(new_l);
            sumlx = slx;
            suml2 = sl2;
            ++changed;
          }
        }
      }
    }
    if (changed == 0) break;
  }
  for (int i = 0; i < n; ++i) L[i] = static_cast<int8_t>(L[i] + nmax);
  return suml2 > 0.0f ? sumlx / suml2 : 0.0f;
}

// Asymmetric codes in [0, nmax] with x ~ scale * L - the_min (ggml's make_qkx2_quants): starts from the
// min/max fit, then tries nstep+1 scales around it, solving the weighted least-squares scale and min
// for each candidate code assignment. Error is weighted |diff| (use_mad) or diff^2.
float fit_asymmetric(int n, int nmax, const float* x, const float* weights, uint8_t* L, float* the_min, uint8_t* Laux,
                     float rmin, float rdelta, int nstep, bool use_mad) {
  float min = x[0], max = x[0];
  float sum_w = weights[0];
  float sum_x = sum_w * x[0];
  for (int i = 1; i < n; ++i) {
    if (x[i] < min) min = x[i];
    if (x[i] > max) max = x[i];
    const float w = weights[i];
    sum_w += w;
    sum_x += w * x[i];
  }
  if (min > 0) min = 0;
  if (max == min) {
    std::fill(L, L + n, uint8_t{0});
    *the_min = -min;
    return 0.f;
  }
  const auto error_of = [use_mad](float diff) { return use_mad ? std::fabs(diff) : diff * diff; };
  const float nmax_f = static_cast<float>(nmax);
  float iscale = nmax_f / (max - min);
  float scale = 1 / iscale;
  float best_error = 0;
  for (int i = 0; i < n; ++i) {
    L[i] = static_cast<uint8_t>(clampi(nearest_int(iscale * (x[i] - min)), 0, nmax));
    best_error += weights[i] * error_of(scale * static_cast<float>(L[i]) + min - x[i]);
  }
  for (int is = 0; is <= nstep; ++is) {
    iscale = (rmin + rdelta * static_cast<float>(is) + nmax_f) / (max - min);
    float sum_l = 0, sum_l2 = 0, sum_xl = 0;
    for (int i = 0; i < n; ++i) {
      const int l = clampi(nearest_int(iscale * (x[i] - min)), 0, nmax);
      Laux[i] = static_cast<uint8_t>(l);
      const float w = weights[i];
      const float lf = static_cast<float>(l);
      sum_l += w * lf;
      sum_l2 += w * lf * lf;
      sum_xl += w * lf * x[i];
    }
    const float D = sum_w * sum_l2 - sum_l * sum_l;
    if (D > 0) {
      float this_scale = (sum_w * sum_xl - sum_x * sum_l) / D;
      float this_min = (sum_l2 * sum_x - sum_l * sum_xl) / D;
      if (this_min > 0) {
        this_min = 0;
        this_scale = sum_xl / sum_l2;
      }
      float cur_error = 0;
      for (int i = 0; i < n; ++i) {
        cur_error += weights[i] * error_of(this_scale * static_cast<float>(Laux[i]) + this_min - x[i]);
      }
      if (cur_error < best_error) {
        std::copy(Laux, Laux + n, L);
        best_error = cur_error;
        scale = this_scale;
        min = this_min;
      }
    }
  }
  *the_min = -min;
  return scale;
}

// Packs 2-bit codes: byte l of each 32-byte chunk holds values l, l+32, l+64, l+96 of its 128.
void pack_2bit(const uint8_t* L, uint8_t* qs) {
  for (int j = 0; j < kQKK; j += 128) {
    for (int l = 0; l < 32; ++l) {
      qs[j / 4 + l] =
          static_cast<uint8_t>(L[j + l] | (L[j + l + 32] << 2) | (L[j + l + 64] << 4) | (L[j + l + 96] << 6));
    }
  }
}

// Writes the 6-bit scale ls and min lm of group j (0..7) into the 12 packed bytes of a Q4_K/Q5_K block.
void pack_k4_scale_min(int j, uint8_t ls, uint8_t lm, uint8_t* scales) {
  if (j < 4) {
    scales[j] = ls;
    scales[j + 4] = lm;
  } else {
    scales[j + 4] = static_cast<uint8_t>((ls & 0xF) | ((lm & 0xF) << 4));
    scales[j - 4] = static_cast<uint8_t>(scales[j - 4] | ((ls >> 4) << 6));
    scales[j] = static_cast<uint8_t>(scales[j] | ((lm >> 4) << 6));
  }
}

// The Q4_K/Q5_K encoder: per group of 32 an asymmetric fit, then 6-bit scales/mins relative to the
// block maxima, then the codes recomputed against the rounded scales. Returns the codes in L.
template <class Block>
void encode_k4_scales(const float* x, Block& b, uint8_t* L, int nmax, float rmin, int nstep) {
  uint8_t Laux[32];
  float weights[32], mins[kQKK / 32], scales[kQKK / 32];
  float max_scale = 0, max_min = 0;
  for (int j = 0; j < kQKK / 32; ++j) {
    float sum_x2 = 0;
    for (int l = 0; l < 32; ++l) sum_x2 += x[32 * j + l] * x[32 * j + l];
    const float av_x = std::sqrt(sum_x2 / 32);
    for (int l = 0; l < 32; ++l) weights[l] = av_x + std::fabs(x[32 * j + l]);
    scales[j] = fit_asymmetric(32, nmax, x + 32 * j, weights, L + 32 * j, &mins[j], Laux, rmin, 0.1f, nstep, false);
    max_scale = std::max(max_scale, scales[j]);
    max_min = std::max(max_min, mins[j]);
  }
  const float inv_scale = max_scale > 0 ? 63.f / max_scale : 0.f;
  const float inv_min = max_min > 0 ? 63.f / max_min : 0.f;
  std::memset(b.scales, 0, sizeof(b.scales));
  for (int j = 0; j < kQKK / 32; ++j) {
    const auto ls =
        static_cast<uint8_t>(std::min(63, static_cast<int>(static_cast<uint8_t>(nearest_int(inv_scale * scales[j])))));
    const auto lm =
        static_cast<uint8_t>(std::min(63, static_cast<int>(static_cast<uint8_t>(nearest_int(inv_min * mins[j])))));
    pack_k4_scale_min(j, ls, lm, b.scales);
  }
  b.d = f32_to_f16_bits(max_scale / 63.f);
  b.dmin = f32_to_f16_bits(max_min / 63.f);
  for (int j = 0; j < kQKK / 32; ++j) {
    uint8_t sc, m;
    k4_scale_min(j, b.scales, &sc, &m);
    const float d = h2f(b.d) * static_cast<float>(sc);
    if (d == 0) continue;
    const float dm = h2f(b.dmin) * static_cast<float>(m);
    for (int ii = 0; ii < 32; ++ii) {
      L[32 * j + ii] = static_cast<uint8_t>(clampi(nearest_int((x[32 * j + ii] + dm) / d), 0, nmax));
    }
  }
}

}  // namespace

void quantize_q2_k(const float* x, void* y, int64_t n) {
  const float q4scale = 15.f;
  for (int64_t i = 0; i < n / kQKK; ++i, x += kQKK) {
    BlockQ2_K b{};
    uint8_t L[kQKK], Laux[16];
    float weights[16], mins[kQKK / 16], scales[kQKK / 16];
    float max_scale = 0, max_min = 0;
    for (int j = 0; j < kQKK / 16; ++j) {
      for (int l = 0; l < 16; ++l) weights[l] = std::fabs(x[16 * j + l]);
      scales[j] = fit_asymmetric(16, 3, x + 16 * j, weights, L + 16 * j, &mins[j], Laux, -0.5f, 0.1f, 15, true);
      max_scale = std::max(max_scale, scales[j]);
      max_min = std::max(max_min, mins[j]);
    }
    if (max_scale > 0) {
      const float iscale = q4scale / max_scale;
      for (int j = 0; j < kQKK / 16; ++j) b.scales[j] = static_cast<uint8_t>(nearest_int(iscale * scales[j]));
      b.d = f32_to_f16_bits(max_scale / q4scale);
    } else {
      b.d = f32_to_f16_bits(0.f);
    }
    if (max_min > 0) {
      const float iscale = q4scale / max_min;
      for (int j = 0; j < kQKK / 16; ++j) {
        b.scales[j] = static_cast<uint8_t>(b.scales[j] | (nearest_int(iscale * mins[j]) << 4));
      }
      b.dmin = f32_to_f16_bits(max_min / q4scale);
    } else {
      b.dmin = f32_to_f16_bits(0.f);
    }
    for (int j = 0; j < kQKK / 16; ++j) {
      const float d = h2f(b.d) * static_cast<float>(b.scales[j] & 0xF);
      if (d == 0) continue;
      const float dm = h2f(b.dmin) * static_cast<float>(b.scales[j] >> 4);
      for (int ii = 0; ii < 16; ++ii) {
        L[16 * j + ii] = static_cast<uint8_t>(clampi(nearest_int((x[16 * j + ii] + dm) / d), 0, 3));
      }
    }
    pack_2bit(L, b.qs);
    store(y, i, b);
  }
}

void quantize_q3_k(const float* x, void* y, int64_t n) {
  for (int64_t i = 0; i < n / kQKK; ++i, x += kQKK) {
    BlockQ3_K b{};
    int8_t L[kQKK];
    float scales[kQKK / 16];
    float max_scale = 0, amax = 0;
    for (int j = 0; j < kQKK / 16; ++j) {
      scales[j] = fit_q3(16, 4, x + 16 * j, L + 16 * j);
      const float scale = std::fabs(scales[j]);
      if (scale > amax) {
        amax = scale;
        max_scale = scales[j];
      }
    }
    if (max_scale != 0) {
      const float iscale = -32.f / max_scale;
      for (int j = 0; j < kQKK / 16; ++j) {
        int l = clampi(static_cast<int8_t>(nearest_int(iscale * scales[j])), -32, 31) + 32;
        if (j < 8) {
          b.scales[j] = static_cast<uint8_t>(l & 0xF);
        } else {
          b.scales[j - 8] = static_cast<uint8_t>(b.scales[j - 8] | ((l & 0xF) << 4));
        }
        l >>= 4;
        b.scales[j % 4 + 8] = static_cast<uint8_t>(b.scales[j % 4 + 8] | (l << (2 * (j / 4))));
      }
      b.d = f32_to_f16_bits(1 / iscale);
    } else {
      b.d = f32_to_f16_bits(0.f);
    }
    for (int j = 0; j < kQKK / 16; ++j) {
      const float d = h2f(b.d) * static_cast<float>(q3k_scale(j, b.scales));
      if (d == 0) continue;
      for (int ii = 0; ii < 16; ++ii) {
        L[16 * j + ii] = static_cast<int8_t>(clampi(nearest_int(x[16 * j + ii] / d), -4, 3) + 4);
      }
    }
    // The third bit of value j goes to bit j/32 of hmask[j % 32].
    for (int j = 0; j < kQKK; ++j) {
      if (L[j] > 3) {
        b.hmask[j % 32] = static_cast<uint8_t>(b.hmask[j % 32] | (1 << (j / 32)));
        L[j] = static_cast<int8_t>(L[j] - 4);
      }
    }
    pack_2bit(reinterpret_cast<const uint8_t*>(L), b.qs);
    store(y, i, b);
  }
}

void quantize_q4_k(const float* x, void* y, int64_t n) {
  for (int64_t i = 0; i < n / kQKK; ++i, x += kQKK) {
    BlockQ4_K b{};
    uint8_t L[kQKK];
    encode_k4_scales(x, b, L, 15, -1.f, 20);
    for (int j = 0; j < kQKK; j += 64) {
      for (int l = 0; l < 32; ++l) b.qs[j / 2 + l] = static_cast<uint8_t>(L[j + l] | (L[j + l + 32] << 4));
    }
    store(y, i, b);
  }
}

void quantize_q5_k(const float* x, void* y, int64_t n) {
  for (int64_t i = 0; i < n / kQKK; ++i, x += kQKK) {
    BlockQ5_K b{};
    uint8_t L[kQKK];
    encode_k4_scales(x, b, L, 31, -0.5f, 15);
    uint8_t m1 = 1, m2 = 2;
    for (int chunk = 0; chunk < kQKK; chunk += 64) {
      for (int j = 0; j < 32; ++j) {
        int l1 = L[chunk + j], l2 = L[chunk + j + 32];
        if (l1 > 15) {
          l1 -= 16;
          b.qh[j] = static_cast<uint8_t>(b.qh[j] | m1);
        }
        if (l2 > 15) {
          l2 -= 16;
          b.qh[j] = static_cast<uint8_t>(b.qh[j] | m2);
        }
        b.qs[chunk / 2 + j] = static_cast<uint8_t>(l1 | (l2 << 4));
      }
      m1 = static_cast<uint8_t>(m1 << 2);
      m2 = static_cast<uint8_t>(m2 << 2);
    }
    store(y, i, b);
  }
}

void quantize_q6_k(const float* x, void* y, int64_t n) {
  for (int64_t i = 0; i < n / kQKK; ++i, x += kQKK) {
    BlockQ6_K b{};
    int8_t L[kQKK];
    float scales[kQKK / 16];
    float max_scale = 0, max_abs_scale = 0;
    for (int ib = 0; ib < kQKK / 16; ++ib) {
      scales[ib] = fit_symmetric_weighted(16, 32, x + 16 * ib, L + 16 * ib);
      const float abs_scale = std::fabs(scales[ib]);
      if (abs_scale > max_abs_scale) {
        max_abs_scale = abs_scale;
        max_scale = scales[ib];
      }
    }
    if (max_abs_scale < kGroupMaxEps) {  // an all-zero block: zero bytes, d = 0
      store(y, i, b);
      continue;
    }
    const float iscale = -128.f / max_scale;
    b.d = f32_to_f16_bits(1 / iscale);
    for (int ib = 0; ib < kQKK / 16; ++ib) {
      b.scales[ib] = static_cast<int8_t>(std::min(127, nearest_int(iscale * scales[ib])));
    }
    for (int j = 0; j < kQKK / 16; ++j) {
      const float d = h2f(b.d) * static_cast<float>(b.scales[j]);
      if (d == 0) continue;
      for (int ii = 0; ii < 16; ++ii) {
        L[16 * j + ii] = static_cast<int8_t>(clampi(nearest_int(x[16 * j + ii] / d), -32, 31) + 32);
      }
    }
    for (int half = 0; half < 2; ++half) {
      const int8_t* Lh = L + 128 * half;
      uint8_t* ql = b.ql + 64 * half;
      uint8_t* qh = b.qh + 32 * half;
      for (int l = 0; l < 32; ++l) {
        ql[l] = static_cast<uint8_t>((Lh[l] & 0xF) | ((Lh[l + 64] & 0xF) << 4));
        ql[l + 32] = static_cast<uint8_t>((Lh[l + 32] & 0xF) | ((Lh[l + 96] & 0xF) << 4));
        qh[l] = static_cast<uint8_t>((Lh[l] >> 4) | ((Lh[l + 32] >> 4) << 2) | ((Lh[l + 64] >> 4) << 4) |
                                     ((Lh[l + 96] >> 4) << 6));
      }
    }
    store(y, i, b);
  }
}

void quantize_q8_k(const float* x, void* y, int64_t n) {
  for (int64_t i = 0; i < n / kQKK; ++i, x += kQKK) {
    BlockQ8_K b{};
    float max = 0, amax = 0;
    for (int j = 0; j < kQKK; ++j) {
      const float ax = std::fabs(x[j]);
      if (ax > amax) {
        amax = ax;
        max = x[j];
      }
    }
    if (amax != 0) {
      const float iscale = -127.f / max;
      for (int j = 0; j < kQKK; ++j) b.qs[j] = static_cast<int8_t>(std::min(127, nearest_int(iscale * x[j])));
      for (int j = 0; j < kQKK / 16; ++j) {
        int sum = 0;
        for (int ii = 0; ii < 16; ++ii) sum += b.qs[j * 16 + ii];
        b.bsums[j] = static_cast<int16_t>(sum);
      }
      b.d = 1 / iscale;
    }
    store(y, i, b);
  }
}

}  // namespace tessera::quant::detail
