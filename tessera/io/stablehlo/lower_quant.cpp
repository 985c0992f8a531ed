// dequantize: GGML blocks (u8 [..., row_bytes]) decoded to f32 with integer ops, so that XLA can fuse
// the decoding into the product that consumes it (quantized_matmul goes through its decomposition,
// dequantize + matmul). Each block format is described once as a table over the values of one block:
// every integer field of value j (its quant, group scale or group min) is
//   ((byte[a] >> sa) & ma) | (((byte[b] >> sb) & mb) << tb) - bias     (or byte[a] read as int8),
// built by loops that follow tessera/quant/dequantize.cpp, and the value is
//   float(q) * d,  float(q) * d + m,  or  (d * float(scale)) * float(q) - (dmin * float(min))
// in ggml's order of float operations. The tables become constant index/shift/mask vectors applied
// to all blocks at once (gather along the block's bytes, shift, mask, or).
#include <fmt/format.h>

#include "tessera/io/stablehlo/lower.h"
#include "tessera/quant/ggml_type.h"

namespace tessera::io::stablehlo {

namespace {

using quant::GgmlType;

struct Field {
  int64_t a = 0, sa = 0, ma = 0xFF;
  int64_t b = 0, sb = 0, mb = 0, tb = 0;  // mb = 0: no second part
  int64_t bias = 0;
  bool signed8 = false;
};

enum class Combine { Scaled, ScaledPlusMin, GroupScaled };

struct Layout {
  int64_t block_size = 0, type_size = 0;
  int64_t d_at = 0;
  bool d_f32 = false;  // the scale is an f32 (Q8_K) rather than an f16
  int64_t m_at = -1;   // f16 min (Q4_1, Q5_1) or dmin (K-quants), if any
  Combine combine = Combine::Scaled;
  std::vector<Field> q, scale, min;  // per value; scale/min only for GroupScaled
};

Field nibble(int64_t at, int64_t shift) {
  return {.a = at, .sa = shift, .ma = 0xF};
}

Layout legacy(GgmlType t) {
  Layout l;
  l.block_size = 32;
  for (int64_t j = 0; j < 32; ++j) {
    const int64_t half = j / 16, k = j % 16;
    switch (t) {
      case GgmlType::q4_0:
        l.q.push_back({.a = 2 + k, .sa = 4 * half, .ma = 0xF, .bias = 8});
        break;
      case GgmlType::q4_1:
        l.q.push_back(nibble(4 + k, 4 * half));
        break;
      case GgmlType::q5_0:  // bit j of qh (bytes 2..5) is bit 4 of value j
        l.q.push_back(
            {.a = 6 + k, .sa = 4 * half, .ma = 0xF, .b = 2 + j / 8, .sb = j % 8, .mb = 1, .tb = 4, .bias = 16});
        break;
      case GgmlType::q5_1:
        l.q.push_back({.a = 8 + k, .sa = 4 * half, .ma = 0xF, .b = 4 + j / 8, .sb = j % 8, .mb = 1, .tb = 4});
        break;
      case GgmlType::q8_0:
        l.q.push_back({.a = 2 + j, .signed8 = true});
        break;
      default:
        l.q.push_back({.a = 4 + j, .signed8 = true});
        break;  // q8_1
    }
  }
  l.m_at = t == GgmlType::q4_1 || t == GgmlType::q5_1 ? 2 : -1;
  l.combine = l.m_at >= 0 ? Combine::ScaledPlusMin : Combine::Scaled;
  return l;
}

// The 6-bit scale (or min) of group g of a Q4_K/Q5_K block whose 12 scale bytes start at `at`.
Field k4_field(int64_t at, int64_t g, bool min) {
  if (g < 4) return {.a = at + g + (min ? 4 : 0), .ma = 63};
  return {.a = at + g + 4, .sa = min ? 4 : 0, .ma = 0xF, .b = at + g - (min ? 0 : 4), .sb = 6, .mb = 3, .tb = 4};
}

Layout k_quant(GgmlType t) {
  Layout l;
  l.block_size = 256;
  l.combine = Combine::GroupScaled;
  if (t == GgmlType::q2_k) {  // scales[16] @0, qs[64] @16, d @80, dmin @82
    l.d_at = 80;
    l.m_at = 82;
    for (int64_t half = 0; half < 2; ++half) {
      for (int64_t shift = 0; shift < 8; shift += 2) {
        for (int64_t part = 0; part < 2; ++part) {
          const int64_t group = half * 8 + shift + part;  // shift/2 * 2 + part
          for (int64_t i = 0; i < 16; ++i) {
            l.q.push_back({.a = 16 + 32 * half + i + 16 * part, .sa = shift, .ma = 3});
            l.scale.push_back({.a = group, .ma = 0xF});
            l.min.push_back({.a = group, .sa = 4, .ma = 0xF});
          }
        }
      }
    }
  } else if (t == GgmlType::q3_k) {  // hmask[32] @0, qs[64] @32, scales[12] @96, d @108
    l.d_at = 108;
    for (int64_t half = 0; half < 2; ++half) {
      for (int64_t shift = 0; shift < 8; shift += 2) {
        const int64_t bit = half * 4 + shift / 2;
        for (int64_t part = 0; part < 2; ++part) {
          const int64_t g = half * 8 + shift + part;
          for (int64_t i = 0; i < 16; ++i) {
            const int64_t idx = i + 16 * part;
            // v = low | (hmask bit << 2) - 4: 4 is subtracted unless the bit is set.
            l.q.push_back(
                {.a = 32 + 32 * half + idx, .sa = shift, .ma = 3, .b = idx, .sb = bit, .mb = 1, .tb = 2, .bias = 4});
            l.scale.push_back({.a = 96 + (g < 8 ? g : g - 8),
                               .sa = g < 8 ? 0 : 4,
                               .ma = 0xF,
                               .b = 104 + g % 4,
                               .sb = 2 * (g / 4),
                               .mb = 3,
                               .tb = 4,
                               .bias = 32});
          }
        }
      }
    }
  } else if (t == GgmlType::q4_k || t == GgmlType::q5_k) {  // d @0, dmin @2, scales[12] @4, [qh[32] @16,] qs
    l.d_at = 0;
    l.m_at = 2;
    const bool five = t == GgmlType::q5_k;
    const int64_t qs = five ? 48 : 16;
    for (int64_t chunk = 0; chunk < 4; ++chunk) {
      for (int64_t half = 0; half < 2; ++half) {
        const int64_t g = 2 * chunk + half;
        for (int64_t i = 0; i < 32; ++i) {
          Field q = nibble(qs + 32 * chunk + i, 4 * half);
          if (five) {
            q.b = 16 + i;
            q.sb = g;
            q.mb = 1;
            q.tb = 4;
          }
          l.q.push_back(q);
          l.scale.push_back(k4_field(4, g, false));
          l.min.push_back(k4_field(4, g, true));
        }
      }
    }
  } else if (t == GgmlType::q6_k) {  // ql[128] @0, qh[64] @128, scales[16] (int8) @192, d @208
    l.d_at = 208;
    l.q.resize(256);
    l.scale.resize(256);
    for (int64_t half = 0; half < 2; ++half) {
      for (int64_t i = 0; i < 32; ++i) {
        for (int64_t r = 0; r < 4; ++r) {
          const size_t j = static_cast<size_t>(half * 128 + r * 32 + i);
          l.q[j] = {.a = 64 * half + i + 32 * (r % 2),
                    .sa = 4 * (r / 2),
                    .ma = 0xF,
                    .b = 128 + 32 * half + i,
                    .sb = 2 * r,
                    .mb = 3,
                    .tb = 4,
                    .bias = 32};
          l.scale[j] = {.a = 192 + 8 * half + i / 16 + 2 * r, .signed8 = true};
        }
      }
    }
  } else {  // q8_k: d (f32) @0, qs[256] (int8) @4
    l.d_f32 = true;
    l.combine = Combine::Scaled;
    for (int64_t j = 0; j < 256; ++j) l.q.push_back({.a = 4 + j, .signed8 = true});
  }
  return l;
}

// Field values of every value of every block: [rows, blocks, block_size] i32.
Val field_values(Emitter& e, const Val& blocks, const std::vector<Field>& f) {
  std::vector<int64_t> a, sa, ma, b, sb, mb, tb, bias;
  bool signed8 = false, two_parts = false, biased = false;
  for (const Field& x : f) {
    a.push_back(x.a);
    sa.push_back(x.sa);
    ma.push_back(x.ma);
    b.push_back(x.b);
    sb.push_back(x.sb);
    mb.push_back(x.mb);
    tb.push_back(x.tb);
    bias.push_back(x.bias);
    signed8 = signed8 || x.signed8;
    two_parts = two_parts || x.mb != 0;
    biased = biased || x.bias != 0;
  }
  const int64_t n = static_cast<int64_t>(f.size());
  Shape shape = blocks.shape;
  shape.back() = n;
  auto vec = [&](const std::vector<int64_t>& v) {
    std::vector<int32_t> v32(v.begin(), v.end());
    return e.broadcast_in_dim(e.constant(Array::from_vector(v32, {n})), shape, {2});
  };
  auto pick = [&](const std::vector<int64_t>& at) {
    return e.take_along(blocks, e.constant(Array::from_vector(at, {n})), 2);
  };
  if (signed8) return e.raw_convert(e.bitcast(pick(a), "i8"), "i32");
  auto part = [&](const std::vector<int64_t>& at, const std::vector<int64_t>& shift, const std::vector<int64_t>& mask) {
    return e.logical_and(e.shift_right(e.raw_convert(pick(at), "i32"), vec(shift)), vec(mask));
  };
  Val v = part(a, sa, ma);
  if (two_parts) v = e.logical_or(v, e.shift_left(part(b, sb, mb), vec(tb)));
  if (biased) v = e.sub(v, vec(bias));
  return v;
}

// The f16 (or f32) at byte `at` of every block, as f32 [rows, blocks, 1].
Val block_float(Emitter& e, const Val& blocks, int64_t at, bool f32) {
  const int64_t width = f32 ? 4 : 2;
  const std::string u = f32 ? "ui32" : "ui16";
  Val bits;
  for (int64_t k = 0; k < width; ++k) {
    Val byte = e.raw_convert(e.slice_axis(blocks, 2, at + k, at + k + 1), u);
    if (k > 0) byte = e.shift_left(byte, e.splat_bits(static_cast<uint64_t>(8 * k), u, byte.shape));
    bits = k == 0 ? byte : e.logical_or(bits, byte);
  }
  return e.convert(e.bitcast(bits, f32 ? "f32" : "f16"), "f32");
}

// Plain scalar types (f32, f16, bf16, f64, i8..i64): little-endian bytes reassembled and converted.
Val decode_scalars(Emitter& e, const Val& bytes, const std::string& elem, int64_t width) {
  Shape s = bytes.shape;
  const int64_t n = s.back() / width;
  s.back() = n;
  s.push_back(width);
  const Val grouped = e.reshape(bytes, s);
  const std::string u = "ui" + std::to_string(8 * width);
  Val bits;
  for (int64_t k = 0; k < width; ++k) {
    Val byte =
        e.raw_convert(e.reshape(e.slice_axis(grouped, grouped.rank() - 1, k, k + 1), Shape(s.begin(), s.end() - 1)), u);
    if (k > 0) byte = e.shift_left(byte, e.splat_bits(static_cast<uint64_t>(8 * k), u, byte.shape));
    bits = k == 0 ? byte : e.logical_or(bits, byte);
  }
  const Val typed = width == 1 ? e.bitcast(bits, "i8") : e.bitcast(bits, elem);
  return e.raw_convert(typed, "f32");
}

std::vector<Val> lower_dequantize(LowerContext& c) {
  Emitter& e = c.e;
  const GgmlType type = quant::parse_type(c.attrs().get_string("type"));
  const quant::TypeTraits& traits = quant::type_traits(type);
  const Val& x = c.in[0];
  switch (type) {
    case GgmlType::f32:
      return {decode_scalars(e, x, "f32", 4)};
    case GgmlType::f16:
      return {decode_scalars(e, x, "f16", 2)};
    case GgmlType::bf16:
      return {decode_scalars(e, x, "bf16", 2)};
    case GgmlType::f64:
      return {decode_scalars(e, x, "f64", 8)};
    case GgmlType::i8:
      return {decode_scalars(e, x, "i8", 1)};
    case GgmlType::i16:
      return {decode_scalars(e, x, "i16", 2)};
    case GgmlType::i32:
      return {decode_scalars(e, x, "i32", 4)};
    case GgmlType::i64:
      return {decode_scalars(e, x, "i64", 8)};
    case GgmlType::q4_0:
    case GgmlType::q4_1:
    case GgmlType::q5_0:
    case GgmlType::q5_1:
    case GgmlType::q8_0:
    case GgmlType::q8_1:
      break;
    case GgmlType::q2_k:
    case GgmlType::q3_k:
    case GgmlType::q4_k:
    case GgmlType::q5_k:
    case GgmlType::q6_k:
    case GgmlType::q8_k:
      break;
    default:
      c.fail(fmt::format("no StableHLO decoding of {} blocks", traits.name));
  }
  Layout l = traits.block_size == 32 ? legacy(type) : k_quant(type);
  l.type_size = traits.type_size;
  const int64_t row_bytes = x.shape.back();
  const int64_t blocks_per_row = row_bytes / l.type_size;
  const int64_t rows = row_bytes == 0 ? 0 : x.numel() / row_bytes;
  const Val blocks = e.reshape(x, {rows, blocks_per_row, l.type_size});
  const Shape values_shape = {rows, blocks_per_row, l.block_size};
  const Val q = e.raw_convert(field_values(e, blocks, l.q), "f32");
  const Val d = e.broadcast_in_dim(block_float(e, blocks, l.d_at, l.d_f32), values_shape, {0, 1, 2});
  Val y;
  if (l.combine == Combine::Scaled) {
    y = e.mul(q, d);
  } else if (l.combine == Combine::ScaledPlusMin) {
    y = e.add(e.mul(q, d), e.broadcast_in_dim(block_float(e, blocks, l.m_at, false), values_shape, {0, 1, 2}));
  } else {
    y = e.mul(e.mul(d, e.raw_convert(field_values(e, blocks, l.scale), "f32")), q);
    if (!l.min.empty()) {
      const Val dmin = e.broadcast_in_dim(block_float(e, blocks, l.m_at, false), values_shape, {0, 1, 2});
      y = e.sub(y, e.mul(dmin, e.raw_convert(field_values(e, blocks, l.min), "f32")));
    }
  }
  return {e.reshape(y, c.out_shape())};
}

}  // namespace

void add_quant_lowerings(LoweringTable& t) {
  t.add("dequantize", lower_dequantize);
}

}  // namespace tessera::io::stablehlo
