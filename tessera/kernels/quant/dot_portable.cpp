// Portable dot products of one weight row with up to four activation rows. Each weight block is
// decoded once into small integers (and its scales), then dotted with every activation row's block in
// 32-bit integer arithmetic; only the per-block scale products are float.
#include "tessera/core/half.h"
#include "tessera/kernels/quant/dot.h"
#include "tessera/quant/blocks.h"

namespace tessera::kernels::quant {

namespace {

using namespace tessera::quant;

float h2f(uint16_t bits) {
  return f16_bits_to_f32(bits);
}

template <class Block>
Block block_at(const uint8_t* base, int64_t i) {
  return load_as<Block>(base + i * static_cast<int64_t>(sizeof(Block)));
}

int dot32(const int8_t* a, const int8_t* b, int n) {
  int s = 0;
  for (int j = 0; j < n; ++j) s += a[j] * b[j];
  return s;
}

// The 32 integer values of a legacy weight block, and its scale d (and offset m for Q4_1/Q5_1).
struct Legacy {
  int8_t q[kQK];
  float d = 0, m = 0;
};

Legacy decode_legacy(GgmlType type, const uint8_t* w, int64_t b) {
  Legacy out;
  uint8_t qs[kQK / 2];
  uint32_t qh = 0;
  int offset = 0;
  switch (type) {
    case GgmlType::q4_0: {
      const auto blk = block_at<BlockQ4_0>(w, b);
      out.d = h2f(blk.d);
      std::memcpy(qs, blk.qs, sizeof(qs));
      offset = 8;
      break;
    }
    case GgmlType::q4_1: {
      const auto blk = block_at<BlockQ4_1>(w, b);
      out.d = h2f(blk.d);
      out.m = h2f(blk.m);
      std::memcpy(qs, blk.qs, sizeof(qs));
      break;
    }
    case GgmlType::q5_0: {
      const auto blk = block_at<BlockQ5_0>(w, b);
      out.d = h2f(blk.d);
      std::memcpy(qs, blk.qs, sizeof(qs));
      std::memcpy(&qh, blk.qh, 4);
      offset = 16;
      break;
    }
    case GgmlType::q5_1: {
      const auto blk = block_at<BlockQ5_1>(w, b);
      out.d = h2f(blk.d);
      out.m = h2f(blk.m);
      std::memcpy(qs, blk.qs, sizeof(qs));
      std::memcpy(&qh, blk.qh, 4);
      break;
    }
    default: {  // q8_0
      const auto blk = block_at<BlockQ8_0>(w, b);
      out.d = h2f(blk.d);
      std::memcpy(out.q, blk.qs, sizeof(out.q));
      return out;
    }
  }
  for (int j = 0; j < kQK / 2; ++j) {
    out.q[j] = static_cast<int8_t>((qs[j] & 0xF) + static_cast<int>((qh >> j) & 1) * 16 - offset);
    out.q[j + 16] = static_cast<int8_t>((qs[j] >> 4) + static_cast<int>((qh >> (j + 16)) & 1) * 16 - offset);
  }
  return out;
}

template <GgmlType kType>
void dot_legacy(int64_t nb, const uint8_t* w, const ActRows& act, float* out) {
  const int rows = act.rows;
  const size_t stride = act.stride;
  float sum[kMaxRows] = {};
  for (int64_t b = 0; b < nb; ++b) {
    const Legacy wb = decode_legacy(kType, w, b);
    for (int r = 0; r < rows; ++r) {
      if constexpr (kType == GgmlType::q4_1 || kType == GgmlType::q5_1) {
        const auto ab = block_at<BlockQ8_1>(act.data + r * stride, b);
        sum[r] += static_cast<float>(dot32(wb.q, ab.qs, kQK)) * (wb.d * h2f(ab.d)) + wb.m * h2f(ab.s);
      } else {
        const auto ab = block_at<BlockQ8_0>(act.data + r * stride, b);
        sum[r] += static_cast<float>(dot32(wb.q, ab.qs, kQK)) * (wb.d * h2f(ab.d));
      }
    }
  }
  for (int r = 0; r < rows; ++r) out[r] = sum[r];
}

// A K-quant super-block as 256 small integers with one integer scale (and min, for the asymmetric
// types) per group; value = d * scale * q - dmin * min.
struct KBlock {
  int8_t q[kQKK];
  int scale[16];
  int min[16];
  int group = 16;  // values per group (16 or 32)
  float d = 0, dmin = 0;
};

void decode_k(GgmlType type, const uint8_t* w, int64_t b, KBlock& out) {
  switch (type) {
    case GgmlType::q2_k: {
      const auto blk = block_at<BlockQ2_K>(w, b);
      out.d = h2f(blk.d);
      out.dmin = h2f(blk.dmin);
      out.group = 16;
      for (int g = 0; g < 16; ++g) {
        out.scale[g] = blk.scales[g] & 0xF;
        out.min[g] = blk.scales[g] >> 4;
      }
      for (int j = 0; j < kQKK; ++j) {
        const int chunk = j / 128, shift = 2 * ((j % 128) / 32), l = j % 32;
        out.q[j] = static_cast<int8_t>((blk.qs[32 * chunk + l] >> shift) & 3);
      }
      return;
    }
    case GgmlType::q3_k: {
      const auto blk = block_at<BlockQ3_K>(w, b);
      out.d = h2f(blk.d);
      out.group = 16;
      for (int g = 0; g < 16; ++g) {
        out.scale[g] = q3k_scale(g, blk.scales);
        out.min[g] = 0;
      }
      for (int j = 0; j < kQKK; ++j) {
        const int chunk = j / 128, shift = 2 * ((j % 128) / 32), l = j % 32;
        const int high = (blk.hmask[l] >> (j / 32)) & 1;
        out.q[j] = static_cast<int8_t>(((blk.qs[32 * chunk + l] >> shift) & 3) - (high ? 0 : 4));
      }
      return;
    }
    case GgmlType::q4_k:
    case GgmlType::q5_k: {
      const bool five = type == GgmlType::q5_k;
      uint8_t scales[12], qs[kQKK / 2], qh[kQKK / 8] = {};
      uint16_t d, dmin;
      if (five) {
        const auto blk = block_at<BlockQ5_K>(w, b);
        d = blk.d, dmin = blk.dmin;
        std::memcpy(scales, blk.scales, 12);
        std::memcpy(qs, blk.qs, sizeof(qs));
        std::memcpy(qh, blk.qh, sizeof(qh));
      } else {
        const auto blk = block_at<BlockQ4_K>(w, b);
        d = blk.d, dmin = blk.dmin;
        std::memcpy(scales, blk.scales, 12);
        std::memcpy(qs, blk.qs, sizeof(qs));
      }
      out.d = h2f(d);
      out.dmin = h2f(dmin);
      out.group = 32;
      for (int g = 0; g < 8; ++g) {
        uint8_t sc, m;
        k4_scale_min(g, scales, &sc, &m);
        out.scale[g] = sc;
        out.min[g] = m;
      }
      for (int j = 0; j < kQKK; ++j) {
        const int chunk = j / 64, l = j % 32, high_nibble = (j % 64) / 32;
        const int low = high_nibble ? qs[32 * chunk + l] >> 4 : qs[32 * chunk + l] & 0xF;
        const int bit = five ? (qh[l] >> (2 * chunk + high_nibble)) & 1 : 0;
        out.q[j] = static_cast<int8_t>(low + 16 * bit);
      }
      return;
    }
    default: {  // q6_k
      const auto blk = block_at<BlockQ6_K>(w, b);
      out.d = h2f(blk.d);
      out.group = 16;
      for (int g = 0; g < 16; ++g) {
        out.scale[g] = blk.scales[g];
        out.min[g] = 0;
      }
      for (int j = 0; j < kQKK; ++j) {
        const int half = j / 128, r = (j % 128) / 32, l = j % 32;
        const uint8_t lq = blk.ql[64 * half + l + 32 * (r % 2)];
        const int low = r < 2 ? lq & 0xF : lq >> 4;
        const int high = (blk.qh[32 * half + l] >> (2 * r)) & 3;
        out.q[j] = static_cast<int8_t>((low | (high << 4)) - 32);
      }
      return;
    }
  }
}

template <GgmlType kType>
void dot_k(int64_t nb, const uint8_t* w, const ActRows& act, float* out) {
  const int rows = act.rows;
  float sum[kMaxRows] = {};
  KBlock wb;
  for (int64_t b = 0; b < nb; ++b) {
    decode_k(kType, w, b, wb);
    const int groups = kQKK / wb.group;
    for (int r = 0; r < rows; ++r) {
      const auto ab = block_at<BlockQ8_K>(act.data + r * act.stride, b);
      int isum = 0, msum = 0;
      for (int g = 0; g < groups; ++g) {
        isum += wb.scale[g] * dot32(wb.q + g * wb.group, ab.qs + g * wb.group, wb.group);
        // bsums hold the activation sums of each 16 values.
        int asum = 0;
        for (int s = g * wb.group / 16; s < (g + 1) * wb.group / 16; ++s) asum += ab.bsums[s];
        msum += wb.min[g] * asum;
      }
      sum[r] += ab.d * (wb.d * static_cast<float>(isum) - wb.dmin * static_cast<float>(msum));
    }
  }
  for (int r = 0; r < rows; ++r) out[r] = sum[r];
}

template <class Convert>
void dot_float(int64_t nb, const uint8_t* w, const ActRows& act, float* out, size_t elem_size, Convert convert) {
  double sum[kMaxRows] = {};
  for (int64_t j = 0; j < nb; ++j) {
    const float wj = convert(w + j * static_cast<int64_t>(elem_size));
    for (int r = 0; r < act.rows; ++r) {
      sum[r] += static_cast<double>(wj) * load_as<float>(act.data + r * act.stride + 4 * j);
    }
  }
  for (int r = 0; r < act.rows; ++r) out[r] = static_cast<float>(sum[r]);
}

void dot_f32(int64_t nb, const uint8_t* w, const ActRows& act, float* out) {
  dot_float(nb, w, act, out, 4, [](const uint8_t* p) { return load_as<float>(p); });
}
void dot_f16(int64_t nb, const uint8_t* w, const ActRows& act, float* out) {
  dot_float(nb, w, act, out, 2, [](const uint8_t* p) { return f16_bits_to_f32(load_as<uint16_t>(p)); });
}
void dot_bf16(int64_t nb, const uint8_t* w, const ActRows& act, float* out) {
  dot_float(nb, w, act, out, 2, [](const uint8_t* p) { return bf16_bits_to_f32(load_as<uint16_t>(p)); });
}

using RowFn = void (*)(int64_t, const uint8_t*, const ActRows&, float*);

// One weight row at a time: the portable code gains nothing from interleaving rows.
template <RowFn F>
void each_row(int64_t nb, const uint8_t* const* w, int nw, const ActRows& act, float* out) {
  for (int i = 0; i < nw; ++i) F(nb, w[i], act, out + i * act.rows);
}

}  // namespace

DotFn portable_dot(GgmlType type) {
  switch (type) {
    case GgmlType::f32:
      return each_row<dot_f32>;
    case GgmlType::f16:
      return each_row<dot_f16>;
    case GgmlType::bf16:
      return each_row<dot_bf16>;
    case GgmlType::q4_0:
      return each_row<dot_legacy<GgmlType::q4_0>>;
    case GgmlType::q4_1:
      return each_row<dot_legacy<GgmlType::q4_1>>;
    case GgmlType::q5_0:
      return each_row<dot_legacy<GgmlType::q5_0>>;
    case GgmlType::q5_1:
      return each_row<dot_legacy<GgmlType::q5_1>>;
    case GgmlType::q8_0:
      return each_row<dot_legacy<GgmlType::q8_0>>;
    case GgmlType::q2_k:
      return each_row<dot_k<GgmlType::q2_k>>;
    case GgmlType::q3_k:
      return each_row<dot_k<GgmlType::q3_k>>;
    case GgmlType::q4_k:
      return each_row<dot_k<GgmlType::q4_k>>;
    case GgmlType::q5_k:
      return each_row<dot_k<GgmlType::q5_k>>;
    case GgmlType::q6_k:
      return each_row<dot_k<GgmlType::q6_k>>;
    default:
      return nullptr;
  }
}

}  // namespace tessera::kernels::quant
