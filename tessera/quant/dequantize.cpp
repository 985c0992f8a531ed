// Decoding of every GGML type Tessera reads. The float operations are written in ggml's order (scale
// products first, then the per-group offset) so that results match ggml's `to_float` bit for bit;
// that matters because reference values and llama.cpp outputs are compared exactly.
#include <cstring>

#include "tessera/core/error.h"
#include "tessera/core/half.h"
#include "tessera/quant/blocks.h"
#include "tessera/quant/quantize.h"

namespace tessera::quant {

namespace {

float h2f(uint16_t bits) {
  return f16_bits_to_f32(bits);
}

// Blocks are copied out with memcpy: a file's tensor data need only be aligned to the file's
// alignment, which may be 1, so a block may sit at any address.
template <class Block>
Block load(const void* src, int64_t i) {
  Block b;
  std::memcpy(&b, static_cast<const uint8_t*>(src) + i * static_cast<int64_t>(sizeof(Block)), sizeof(Block));
  return b;
}

void dequant_q4_0(const void* src, float* y, int64_t nb) {
  for (int64_t i = 0; i < nb; ++i, y += kQK) {
    const BlockQ4_0 b = load<BlockQ4_0>(src, i);
    const float d = h2f(b.d);
    for (int j = 0; j < kQK / 2; ++j) {
      y[j] = static_cast<float>((b.qs[j] & 0xF) - 8) * d;
      y[j + kQK / 2] = static_cast<float>((b.qs[j] >> 4) - 8) * d;
    }
  }
}

void dequant_q4_1(const void* src, float* y, int64_t nb) {
  for (int64_t i = 0; i < nb; ++i, y += kQK) {
    const BlockQ4_1 b = load<BlockQ4_1>(src, i);
    const float d = h2f(b.d), m = h2f(b.m);
    for (int j = 0; j < kQK / 2; ++j) {
      y[j] = static_cast<float>(b.qs[j] & 0xF) * d + m;
      y[j + kQK / 2] = static_cast<float>(b.qs[j] >> 4) * d + m;
    }
  }
}

// The 5-bit values of a Q5 block: low nibbles from qs, bit 4 of value j from bit j of qh.
void q5_values(const uint8_t* qs, const uint8_t* qh_bytes, int values[kQK]) {
  uint32_t qh;
  std::memcpy(&qh, qh_bytes, sizeof(qh));
  for (int j = 0; j < kQK / 2; ++j) {
    values[j] = (qs[j] & 0xF) | static_cast<int>(((qh >> j) << 4) & 0x10);
    values[j + kQK / 2] = (qs[j] >> 4) | static_cast<int>((qh >> (j + 12)) & 0x10);
  }
}

void dequant_q5_0(const void* src, float* y, int64_t nb) {
  int q[kQK];
  for (int64_t i = 0; i < nb; ++i, y += kQK) {
    const BlockQ5_0 b = load<BlockQ5_0>(src, i);
    const float d = h2f(b.d);
    q5_values(b.qs, b.qh, q);
    for (int j = 0; j < kQK; ++j) y[j] = static_cast<float>(q[j] - 16) * d;
  }
}

void dequant_q5_1(const void* src, float* y, int64_t nb) {
  int q[kQK];
  for (int64_t i = 0; i < nb; ++i, y += kQK) {
    const BlockQ5_1 b = load<BlockQ5_1>(src, i);
    const float d = h2f(b.d), m = h2f(b.m);
    q5_values(b.qs, b.qh, q);
    for (int j = 0; j < kQK; ++j) y[j] = static_cast<float>(q[j]) * d + m;
  }
}

void dequant_q8_0(const void* src, float* y, int64_t nb) {
  for (int64_t i = 0; i < nb; ++i, y += kQK) {
    const BlockQ8_0 b = load<BlockQ8_0>(src, i);
    const float d = h2f(b.d);
    for (int j = 0; j < kQK; ++j) y[j] = static_cast<float>(b.qs[j]) * d;
  }
}

void dequant_q8_1(const void* src, float* y, int64_t nb) {
  for (int64_t i = 0; i < nb; ++i, y += kQK) {
    const BlockQ8_1 b = load<BlockQ8_1>(src, i);
    const float d = h2f(b.d);
    for (int j = 0; j < kQK; ++j) y[j] = static_cast<float>(b.qs[j]) * d;
  }
}

// Q2_K and Q3_K lay out each 128 values as 4 shifts of 32 bytes; within a shift, bytes 0-15 and
// 16-31 are two groups of 16 with their own scales.
void dequant_q2_k(const void* src, float* y, int64_t nb) {
  for (int64_t i = 0; i < nb; ++i) {
    const BlockQ2_K b = load<BlockQ2_K>(src, i);
    const float d = h2f(b.d), dmin = h2f(b.dmin);
    int group = 0;
    for (int half = 0; half < 2; ++half) {
      const uint8_t* q = b.qs + 32 * half;
      for (int shift = 0; shift < 8; shift += 2) {
        for (int part = 0; part < 2; ++part, ++group) {
          const uint8_t sc = b.scales[group];
          const float dl = d * static_cast<float>(sc & 0xF);
          const float ml = dmin * static_cast<float>(sc >> 4);
          for (int l = 0; l < 16; ++l) *y++ = dl * static_cast<float>((q[l + 16 * part] >> shift) & 3) - ml;
        }
      }
    }
  }
}

void dequant_q3_k(const void* src, float* y, int64_t nb) {
  for (int64_t i = 0; i < nb; ++i) {
    const BlockQ3_K b = load<BlockQ3_K>(src, i);
    const float d_all = h2f(b.d);
    int group = 0;
    uint8_t mask = 1;
    for (int half = 0; half < 2; ++half) {
      const uint8_t* q = b.qs + 32 * half;
      for (int shift = 0; shift < 8; shift += 2, mask = static_cast<uint8_t>(mask << 1)) {
        for (int part = 0; part < 2; ++part, ++group) {
          const float dl = d_all * static_cast<float>(q3k_scale(group, b.scales));
          for (int l = 0; l < 16; ++l) {
            const int idx = l + 16 * part;
            const int v = ((q[idx] >> shift) & 3) - ((b.hmask[idx] & mask) ? 0 : 4);
            *y++ = dl * static_cast<float>(v);
          }
        }
      }
    }
  }
}

// Q4_K/Q5_K: each 64 values are two groups of 32 sharing 32 bytes (low nibble, high nibble).
void dequant_q4_k(const void* src, float* y, int64_t nb) {
  for (int64_t i = 0; i < nb; ++i) {
    const BlockQ4_K b = load<BlockQ4_K>(src, i);
    const float d = h2f(b.d), dmin = h2f(b.dmin);
    for (int chunk = 0; chunk < 4; ++chunk) {
      const uint8_t* q = b.qs + 32 * chunk;
      uint8_t sc, m;
      k4_scale_min(2 * chunk, b.scales, &sc, &m);
      const float d1 = d * static_cast<float>(sc), m1 = dmin * static_cast<float>(m);
      k4_scale_min(2 * chunk + 1, b.scales, &sc, &m);
      const float d2 = d * static_cast<float>(sc), m2 = dmin * static_cast<float>(m);
      for (int l = 0; l < 32; ++l) *y++ = d1 * static_cast<float>(q[l] & 0xF) - m1;
      for (int l = 0; l < 32; ++l) *y++ = d2 * static_cast<float>(q[l] >> 4) - m2;
    }
  }
}

void dequant_q5_k(const void* src, float* y, int64_t nb) {
  for (int64_t i = 0; i < nb; ++i) {
    const BlockQ5_K b = load<BlockQ5_K>(src, i);
    const float d = h2f(b.d), dmin = h2f(b.dmin);
    for (int chunk = 0; chunk < 4; ++chunk) {
      const uint8_t* ql = b.qs + 32 * chunk;
      const uint8_t u1 = static_cast<uint8_t>(1u << (2 * chunk)), u2 = static_cast<uint8_t>(2u << (2 * chunk));
      uint8_t sc, m;
      k4_scale_min(2 * chunk, b.scales, &sc, &m);
      const float d1 = d * static_cast<float>(sc), m1 = dmin * static_cast<float>(m);
      k4_scale_min(2 * chunk + 1, b.scales, &sc, &m);
      const float d2 = d * static_cast<float>(sc), m2 = dmin * static_cast<float>(m);
      for (int l = 0; l < 32; ++l) *y++ = d1 * static_cast<float>((ql[l] & 0xF) + (b.qh[l] & u1 ? 16 : 0)) - m1;
      for (int l = 0; l < 32; ++l) *y++ = d2 * static_cast<float>((ql[l] >> 4) + (b.qh[l] & u2 ? 16 : 0)) - m2;
    }
  }
}

// Q6_K: each 128 values use 64 bytes of ql and 32 of qh; value l + 32*r takes nibble r/2 of
// ql[l + 32*(r%2)] and bits 2r..2r+1 of qh[l].
void dequant_q6_k(const void* src, float* y, int64_t nb) {
  for (int64_t i = 0; i < nb; ++i) {
    const BlockQ6_K b = load<BlockQ6_K>(src, i);
    const float d = h2f(b.d);
    for (int half = 0; half < 2; ++half, y += 128) {
      const uint8_t* ql = b.ql + 64 * half;
      const uint8_t* qh = b.qh + 32 * half;
      const int8_t* sc = b.scales + 8 * half;
      for (int l = 0; l < 32; ++l) {
        const int is = l / 16;
        const int q1 = ((ql[l] & 0xF) | (((qh[l] >> 0) & 3) << 4)) - 32;
        const int q2 = ((ql[l + 32] & 0xF) | (((qh[l] >> 2) & 3) << 4)) - 32;
        const int q3 = ((ql[l] >> 4) | (((qh[l] >> 4) & 3) << 4)) - 32;
        const int q4 = ((ql[l + 32] >> 4) | (((qh[l] >> 6) & 3) << 4)) - 32;
        y[l] = d * static_cast<float>(sc[is]) * static_cast<float>(q1);
        y[l + 32] = d * static_cast<float>(sc[is + 2]) * static_cast<float>(q2);
        y[l + 64] = d * static_cast<float>(sc[is + 4]) * static_cast<float>(q3);
        y[l + 96] = d * static_cast<float>(sc[is + 6]) * static_cast<float>(q4);
      }
    }
  }
}

void dequant_q8_k(const void* src, float* y, int64_t nb) {
  for (int64_t i = 0; i < nb; ++i, y += kQKK) {
    const BlockQ8_K b = load<BlockQ8_K>(src, i);
    for (int j = 0; j < kQKK; ++j) y[j] = b.d * static_cast<float>(b.qs[j]);
  }
}

// Scalars are read with memcpy: tensor data in a file need not be aligned for the element type.
template <class T, class Convert>
void dequant_scalar(const void* src, float* y, int64_t n, Convert convert) {
  const auto* p = static_cast<const uint8_t*>(src);
  for (int64_t i = 0; i < n; ++i) {
    T v;
    std::memcpy(&v, p + i * static_cast<int64_t>(sizeof(T)), sizeof(T));
    y[i] = convert(v);
  }
}

}  // namespace

void dequantize_row(GgmlType type, const void* src, float* dst, int64_t n) {
  const TypeTraits& t = type_traits(type);
  row_bytes(type, n, "dequantize");  // checks that n is a whole number of blocks
  const int64_t nb = n / t.block_size;
  const auto as_float = [](auto v) { return static_cast<float>(v); };
  switch (type) {
    case GgmlType::f32:
      dequant_scalar<float>(src, dst, n, as_float);
      return;
    case GgmlType::f16:
      dequant_scalar<uint16_t>(src, dst, n, [](uint16_t v) { return f16_bits_to_f32(v); });
      return;
    case GgmlType::bf16:
      dequant_scalar<uint16_t>(src, dst, n, [](uint16_t v) { return bf16_bits_to_f32(v); });
      return;
    case GgmlType::f64:
      dequant_scalar<double>(src, dst, n, as_float);
      return;
    case GgmlType::i8:
      dequant_scalar<int8_t>(src, dst, n, as_float);
      return;
    case GgmlType::i16:
      dequant_scalar<int16_t>(src, dst, n, as_float);
      return;
    case GgmlType::i32:
      dequant_scalar<int32_t>(src, dst, n, as_float);
      return;
    case GgmlType::i64:
      dequant_scalar<int64_t>(src, dst, n, as_float);
      return;
    case GgmlType::q4_0:
      dequant_q4_0(src, dst, nb);
      return;
    case GgmlType::q4_1:
      dequant_q4_1(src, dst, nb);
      return;
    case GgmlType::q5_0:
      dequant_q5_0(src, dst, nb);
      return;
    case GgmlType::q5_1:
      dequant_q5_1(src, dst, nb);
      return;
    case GgmlType::q8_0:
      dequant_q8_0(src, dst, nb);
      return;
    case GgmlType::q8_1:
      dequant_q8_1(src, dst, nb);
      return;
    case GgmlType::q2_k:
      dequant_q2_k(src, dst, nb);
      return;
    case GgmlType::q3_k:
      dequant_q3_k(src, dst, nb);
      return;
    case GgmlType::q4_k:
      dequant_q4_k(src, dst, nb);
      return;
    case GgmlType::q5_k:
      dequant_q5_k(src, dst, nb);
      return;
    case GgmlType::q6_k:
      dequant_q6_k(src, dst, nb);
      return;
    case GgmlType::q8_k:
      dequant_q8_k(src, dst, nb);
      return;
    default:
      break;
  }
  fail(
      "dequantize: Tessera cannot decode {} tensors (supported: f32, f16, bf16, f64, i8-i64, q4_0, q4_1, q5_0, "
      "q5_1, q8_0, q8_1, q2_k, q3_k, q4_k, q5_k, q6_k, q8_k)",
      t.name);
}

std::vector<float> dequantize(GgmlType type, const void* src, size_t src_bytes, int64_t rows, int64_t n_per_row) {
  const int64_t rb = row_bytes(type, n_per_row, "dequantize");
  TESSERA_CHECK(rows >= 0, "dequantize: negative row count {}", rows);
  if (rb > 0 && static_cast<uint64_t>(rows) > src_bytes / static_cast<uint64_t>(rb)) {
    fail("dequantize: {} rows of {} {} values need {} bytes per row, but only {} bytes were given", rows, n_per_row,
         type_name(type), rb, src_bytes);
  }
  std::vector<float> out(static_cast<size_t>(rows * n_per_row));
  for (int64_t r = 0; r < rows; ++r) {
    dequantize_row(type, static_cast<const uint8_t*>(src) + r * rb, out.data() + r * n_per_row, n_per_row);
  }
  return out;
}

}  // namespace tessera::quant
