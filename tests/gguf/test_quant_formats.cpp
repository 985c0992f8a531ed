// The GGML block formats: layouts (blocks packed here from the format description, independently of
// Tessera's encoders, must decode to the values the description gives), round-trip error of every
// encoder, and the errors for bad sizes and non-finite input.
#include <cmath>
#include <cstring>
#include <random>

#include "tessera/core/half.h"
#include "tessera/quant/blocks.h"
#include "tessera/quant/quantize.h"
#include "quant_kernel_test_util.h"
#include "test_util.h"

using namespace tessera;
using namespace tessera::quant;
using tessera::test::gaussian;

namespace {

// Little-endian byte builder.
struct Bytes {
  std::vector<uint8_t> b;
  void u8(int v) { b.push_back(static_cast<uint8_t>(v)); }
  void f16(float v) {
    const uint16_t h = f32_to_f16_bits(v);
    u8(h & 0xFF);
    u8(h >> 8);
  }
};

std::vector<float> decode(GgmlType type, const std::vector<uint8_t>& bytes, int64_t n) {
  std::vector<float> out(static_cast<size_t>(n));
  dequantize_row(type, bytes.data(), out.data(), n);
  return out;
}

void expect_values(const std::vector<float>& got, const std::vector<double>& want) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i)
    EXPECT_NEAR(got[i], want[i], 1e-6 * (1 + std::fabs(want[i]))) << "value " << i;
}

}  // namespace

TEST(QuantTypes, TraitsMatchBlockStructs) {
  EXPECT_EQ(type_traits(GgmlType::q4_0).type_size, static_cast<int64_t>(sizeof(BlockQ4_0)));
  EXPECT_EQ(type_traits(GgmlType::q4_1).type_size, static_cast<int64_t>(sizeof(BlockQ4_1)));
  EXPECT_EQ(type_traits(GgmlType::q5_0).type_size, static_cast<int64_t>(sizeof(BlockQ5_0)));
  EXPECT_EQ(type_traits(GgmlType::q5_1).type_size, static_cast<int64_t>(sizeof(BlockQ5_1)));
  EXPECT_EQ(type_traits(GgmlType::q8_0).type_size, static_cast<int64_t>(sizeof(BlockQ8_0)));
  EXPECT_EQ(type_traits(GgmlType::q8_1).type_size, static_cast<int64_t>(sizeof(BlockQ8_1)));
  EXPECT_EQ(type_traits(GgmlType::q2_k).type_size, static_cast<int64_t>(sizeof(BlockQ2_K)));
  EXPECT_EQ(type_traits(GgmlType::q3_k).type_size, static_cast<int64_t>(sizeof(BlockQ3_K)));
  EXPECT_EQ(type_traits(GgmlType::q4_k).type_size, static_cast<int64_t>(sizeof(BlockQ4_K)));
  EXPECT_EQ(type_traits(GgmlType::q5_k).type_size, static_cast<int64_t>(sizeof(BlockQ5_K)));
  EXPECT_EQ(type_traits(GgmlType::q6_k).type_size, static_cast<int64_t>(sizeof(BlockQ6_K)));
  EXPECT_EQ(type_traits(GgmlType::q8_k).type_size, static_cast<int64_t>(sizeof(BlockQ8_K)));
  // GGUF's numeric ids.
  EXPECT_EQ(static_cast<uint32_t>(GgmlType::q4_k), 12u);
  EXPECT_EQ(static_cast<uint32_t>(GgmlType::bf16), 30u);
  EXPECT_EQ(find_type(4), nullptr);  // retired Q4_2
  EXPECT_EQ(find_type(1000), nullptr);
}

TEST(QuantTypes, NamesAndRowSizes) {
  EXPECT_EQ(parse_type("Q4_K"), GgmlType::q4_k);
  EXPECT_EQ(parse_type("bf16"), GgmlType::bf16);
  EXPECT_TESSERA_ERROR(parse_type("q4_2"), "unknown tensor type 'q4_2'", "q4_k");
  EXPECT_EQ(row_bytes(GgmlType::q4_0, 64), 36);
  EXPECT_EQ(row_bytes(GgmlType::q6_k, 512), 420);
  EXPECT_EQ(row_bytes(GgmlType::f16, 3), 6);
  EXPECT_TESSERA_ERROR(row_bytes(GgmlType::q4_k, 100, "w"), "w", "100 values", "256");
  EXPECT_EQ(row_values(GgmlType::q8_0, 68), 64);
  EXPECT_TESSERA_ERROR(row_values(GgmlType::q8_0, 35), "35 bytes", "34 bytes per block");
}

TEST(QuantLayouts, Q4_0AndQ4_1) {
  Bytes q40;
  q40.f16(0.5f);
  for (int j = 0; j < 16; ++j) q40.u8(j | ((15 - j) << 4));  // value j = j, value j+16 = 15-j
  std::vector<double> want(32);
  for (int j = 0; j < 16; ++j) {
    want[j] = 0.5 * (j - 8);
    want[j + 16] = 0.5 * (15 - j - 8);
  }
  expect_values(decode(GgmlType::q4_0, q40.b, 32), want);

  Bytes q41;
  q41.f16(0.25f);
  q41.f16(-1.0f);
  for (int j = 0; j < 16; ++j) q41.u8(j | (3 << 4));
  for (int j = 0; j < 16; ++j) {
    want[j] = 0.25 * j - 1.0;
    want[j + 16] = 0.25 * 3 - 1.0;
  }
  expect_values(decode(GgmlType::q4_1, q41.b, 32), want);
}

TEST(QuantLayouts, Q5_0AndQ5_1UseTheHighBitMask) {
  // qh bit j is the fifth bit of value j; set it for the odd values.
  const uint32_t qh = 0xAAAAAAAAu;
  for (GgmlType type : {GgmlType::q5_0, GgmlType::q5_1}) {
    Bytes b;
    b.f16(2.0f);
    if (type == GgmlType::q5_1) b.f16(0.5f);
    for (int i = 0; i < 4; ++i) b.u8(static_cast<int>((qh >> (8 * i)) & 0xFF));
    for (int j = 0; j < 16; ++j) b.u8((j % 16) | ((j / 2) << 4));
    std::vector<double> want(32);
    for (int v = 0; v < 32; ++v) {
      const int low = v < 16 ? v : (v - 16) / 2;
      const int q = low + (((qh >> v) & 1) ? 16 : 0);
      want[v] = type == GgmlType::q5_0 ? 2.0 * (q - 16) : 2.0 * q + 0.5;
    }
    expect_values(decode(type, b.b, 32), want);
  }
}

TEST(QuantLayouts, Q8_0) {
  Bytes b;
  b.f16(0.125f);
  for (int j = 0; j < 32; ++j) b.u8(static_cast<uint8_t>(static_cast<int8_t>(j * 8 - 127)));
  std::vector<double> want(32);
  for (int j = 0; j < 32; ++j) want[j] = 0.125 * static_cast<int8_t>(j * 8 - 127);
  expect_values(decode(GgmlType::q8_0, b.b, 32), want);
}

TEST(QuantLayouts, Q2_K) {
  // Logical content: 2-bit q[i] = i % 4, group g (16 values) scale g % 16 and min (g + 3) % 16.
  Bytes b;
  for (int g = 0; g < 16; ++g) b.u8((g % 16) | (((g + 3) % 16) << 4));
  // Byte l of each 32-byte half holds values l, l+32, l+64, l+96 of that half's 128 (2 bits each).
  for (int half = 0; half < 2; ++half) {
    for (int l = 0; l < 32; ++l) {
      int byte = 0;
      for (int s = 0; s < 4; ++s) byte |= ((128 * half + l + 32 * s) % 4) << (2 * s);
      b.u8(byte);
    }
  }
  b.f16(0.5f);
  b.f16(0.25f);
  std::vector<double> want(256);
  for (int i = 0; i < 256; ++i) {
    const int g = i / 16;
    want[i] = 0.5 * (g % 16) * (i % 4) - 0.25 * ((g + 3) % 16);
  }
  expect_values(decode(GgmlType::q2_k, b.b, 256), want);
}

TEST(QuantLayouts, Q3_K) {
  // q[i] in -4..3 = (i % 8) - 4; group scale s_g in -32..31 = 2g - 16.
  Bytes b;
  for (int l = 0; l < 32; ++l) {  // hmask: bit k of byte l = high bit of value 32k + l
    int byte = 0;
    for (int k = 0; k < 8; ++k) byte |= ((((32 * k + l) % 8) >> 2) & 1) << k;
    b.u8(byte);
  }
  for (int half = 0; half < 2; ++half) {
    for (int l = 0; l < 32; ++l) {
      int byte = 0;
      for (int s = 0; s < 4; ++s) byte |= (((128 * half + l + 32 * s) % 8) & 3) << (2 * s);
      b.u8(byte);
    }
  }
  uint8_t sc[12] = {};
  for (int g = 0; g < 16; ++g) {
    const int v = (2 * g - 16) + 32;  // stored biased by 32, 6 bits
    if (g < 8)
      sc[g] |= v & 0xF;
    else
      sc[g - 8] |= (v & 0xF) << 4;
    sc[8 + g % 4] |= (v >> 4) << (2 * (g / 4));
  }
  for (uint8_t x : sc) b.u8(x);
  b.f16(0.5f);
  std::vector<double> want(256);
  for (int i = 0; i < 256; ++i) want[i] = 0.5 * (2 * (i / 16) - 16) * ((i % 8) - 4);
  expect_values(decode(GgmlType::q3_k, b.b, 256), want);
}

// Packs 8 six-bit scales and mins the Q4_K/Q5_K way.
std::vector<uint8_t> pack_k4_scales(const int sc[8], const int mn[8]) {
  std::vector<uint8_t> p(12, 0);
  for (int g = 0; g < 4; ++g) {
    p[g] = static_cast<uint8_t>((sc[g] & 63) | ((sc[g + 4] >> 4) << 6));
    p[g + 4] = static_cast<uint8_t>((mn[g] & 63) | ((mn[g + 4] >> 4) << 6));
    p[g + 8] = static_cast<uint8_t>((sc[g + 4] & 15) | ((mn[g + 4] & 15) << 4));
  }
  return p;
}

TEST(QuantLayouts, Q4_KAndQ5_K) {
  const int sc[8] = {1, 63, 17, 32, 48, 5, 60, 33};
  const int mn[8] = {0, 7, 63, 20, 36, 49, 2, 31};
  for (GgmlType type : {GgmlType::q4_k, GgmlType::q5_k}) {
    const bool five = type == GgmlType::q5_k;
    auto q = [&](int i) { return five ? (i * 7) % 32 : (i * 7) % 16; };
    Bytes b;
    b.f16(0.5f);
    b.f16(0.125f);
    for (uint8_t x : pack_k4_scales(sc, mn)) b.u8(x);
    if (five) {  // qh: bit 2c (+1 for the high nibble's group) of byte l = fifth bit of value 64c + l (+32)
      for (int l = 0; l < 32; ++l) {
        int byte = 0;
        for (int c = 0; c < 4; ++c) {
          byte |= ((q(64 * c + l) >> 4) & 1) << (2 * c);
          byte |= ((q(64 * c + 32 + l) >> 4) & 1) << (2 * c + 1);
        }
        b.u8(byte);
      }
    }
    for (int c = 0; c < 4; ++c) {
      for (int l = 0; l < 32; ++l) b.u8((q(64 * c + l) & 15) | ((q(64 * c + 32 + l) & 15) << 4));
    }
    std::vector<double> want(256);
    for (int i = 0; i < 256; ++i) want[i] = 0.5 * sc[i / 32] * q(i) - 0.125 * mn[i / 32];
    SCOPED_TRACE(type_name(type));
    expect_values(decode(type, b.b, 256), want);
  }
}

TEST(QuantLayouts, Q6_K) {
  auto q = [](int i) { return (i * 5) % 64; };  // stored value, decoded as q - 32
  Bytes b;
  for (int half = 0; half < 2; ++half) {  // ql: byte l (+32) holds values l (+32) low and l+64 (+96) high
    for (int l = 0; l < 64; ++l) b.u8((q(128 * half + l) & 15) | ((q(128 * half + l + 64) & 15) << 4));
  }
  for (int half = 0; half < 2; ++half) {  // qh: bits 2r..2r+1 of byte l = high bits of value 32r + l
    for (int l = 0; l < 32; ++l) {
      int byte = 0;
      for (int r = 0; r < 4; ++r) byte |= (q(128 * half + 32 * r + l) >> 4) << (2 * r);
      b.u8(byte);
    }
  }
  for (int g = 0; g < 16; ++g) b.u8(static_cast<uint8_t>(static_cast<int8_t>(g * 15 - 120)));
  b.f16(0.25f);
  std::vector<double> want(256);
  for (int i = 0; i < 256; ++i) want[i] = 0.25 * (i / 16 * 15 - 120) * (q(i) - 32);
  expect_values(decode(GgmlType::q6_k, b.b, 256), want);
}

TEST(QuantLayouts, ScalarTypes) {
  const std::vector<float> src = {1.5f, -2.25f, 65504.0f, 1e-8f};
  std::vector<uint8_t> bytes(8);
  quantize_row(GgmlType::f16, src.data(), bytes.data(), 4);
  std::vector<float> back = decode(GgmlType::f16, bytes, 4);
  EXPECT_EQ(back[0], 1.5f);
  EXPECT_EQ(back[1], -2.25f);
  EXPECT_EQ(back[2], 65504.0f);
  EXPECT_EQ(back[3], f16_bits_to_f32(f32_to_f16_bits(1e-8f)));
  quantize_row(GgmlType::bf16, src.data(), bytes.data(), 4);
  back = decode(GgmlType::bf16, bytes, 4);
  EXPECT_EQ(back[0], 1.5f);
  EXPECT_EQ(back[2], 65536.0f);  // bf16 rounds 65504 up
  // ggml keeps NaN quiet and rounds to nearest even.
  EXPECT_EQ(detail::f32_to_bf16_ggml(std::bit_cast<float>(0x7f800001u)), 0x7fc0u);
  EXPECT_EQ(detail::f32_to_bf16_ggml(std::bit_cast<float>(0x3f808000u)), 0x3f80u);  // tie -> even
  EXPECT_EQ(detail::f32_to_bf16_ggml(std::bit_cast<float>(0x3f818000u)), 0x3f82u);
}

TEST(QuantRoundTrip, ErrorPerTypeIsWithinItsBudget) {
  // Gaussian rows of 512 values; budgets are relative RMSE (rmse / rms of the source), ~1.2x what
  // llama.cpp's encoders reach on such data.
  const std::vector<float> src = gaussian(64 * 512, 7, 0.0625f);
  const std::vector<std::pair<GgmlType, double>> budgets = {
      {GgmlType::f16, 3e-4},   {GgmlType::bf16, 3e-3},  {GgmlType::q8_0, 0.008}, {GgmlType::q4_0, 0.1},
      {GgmlType::q4_1, 0.095}, {GgmlType::q5_0, 0.05},  {GgmlType::q5_1, 0.047}, {GgmlType::q2_k, 0.36},
      {GgmlType::q3_k, 0.18},  {GgmlType::q4_k, 0.085}, {GgmlType::q5_k, 0.044}, {GgmlType::q6_k, 0.022},
      {GgmlType::q8_k, 0.008}, {GgmlType::f32, 0.0}};
  for (const auto& [type, budget] : budgets) {
    const RoundTripError e = round_trip_error(type, src.data(), 64, 512);
    EXPECT_LE(e.rmse / e.rms_source, budget) << type_name(type);
    EXPECT_GT(e.rms_source, 0.06);
    if (type != GgmlType::f32) {
      EXPECT_GT(e.max_abs, 0.0) << type_name(type);
    }
  }
  std::cout << round_trip_report(src.data(), 64, 512);
}

TEST(QuantRoundTrip, ExactlyRepresentableValuesSurvive) {
  // Multiples of a power-of-two step within each format's range decode exactly.
  std::vector<float> v4(32), v8(32);
  for (int i = 0; i < 32; ++i) {
    v4[i] = static_cast<float>((i % 15) - 7) * 0.25f;  // Q4_0: d = 0.25 once -8 * d is present
    v8[i] = static_cast<float>(i * 8 - 127) / 16;      // Q8_0: d = 1/16 when 127 * d is the absmax
  }
  v4[0] = -8 * 0.25f;
  v8[31] = 127.0f / 16;
  for (GgmlType type : {GgmlType::q4_0, GgmlType::q8_0, GgmlType::f16, GgmlType::bf16}) {
    const std::vector<float>& v = type == GgmlType::q8_0 ? v8 : v4;
    std::vector<uint8_t> bytes(static_cast<size_t>(row_bytes(type, 32)));
    quantize_row(type, v.data(), bytes.data(), 32);
    const std::vector<float> back = decode(type, bytes, 32);
    for (int i = 0; i < 32; ++i) EXPECT_EQ(back[i], v[i]) << type_name(type) << " value " << i;
  }
}

TEST(QuantRoundTrip, ZeroAndConstantBlocks) {
  const std::vector<float> zeros(512, 0.0f), fives(512, 5.0f);
  for (GgmlType type : quantizable_types()) {
    const std::vector<uint8_t> z = quantize(type, zeros.data(), 2, 256);
    for (float x : dequantize(type, z.data(), z.size(), 2, 256)) EXPECT_EQ(x, 0.0f) << type_name(type);
    const std::vector<uint8_t> c = quantize(type, fives.data(), 2, 256);
    for (float x : dequantize(type, c.data(), c.size(), 2, 256)) EXPECT_NEAR(x, 5.0f, 0.05) << type_name(type);
  }
}

TEST(QuantErrors, RejectBadSizesAndNonFiniteValues) {
  std::vector<float> v(256, 1.0f);
  std::vector<uint8_t> out(1024);
  EXPECT_TESSERA_ERROR(quantize_row(GgmlType::q4_k, v.data(), out.data(), 100), "quantize", "100 values", "q4_k");
  v[37] = std::nanf("");
  EXPECT_TESSERA_ERROR(quantize_row(GgmlType::q8_0, v.data(), out.data(), 64), "value 37", "nan", "finite");
  EXPECT_TESSERA_ERROR(quantize(GgmlType::q4_k, v.data(), 1, 256), "row 0", "value 37");
  v[37] = INFINITY;  // float types keep inf
  quantize_row(GgmlType::f16, v.data(), out.data(), 64);
  EXPECT_TRUE(std::isinf(decode(GgmlType::f16, out, 64)[37]));
  EXPECT_TESSERA_ERROR(dequantize_row(GgmlType::iq2_xxs, out.data(), v.data(), 256), "cannot decode iq2_xxs");
  EXPECT_TESSERA_ERROR(quantize_row(GgmlType::iq4_nl, v.data(), out.data(), 32), "cannot encode iq4_nl");
  EXPECT_TESSERA_ERROR(dequantize(GgmlType::q8_0, out.data(), 60, 2, 32), "2 rows", "34 bytes per row", "only 60");
}
