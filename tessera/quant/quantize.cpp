// Dispatch from a GgmlType to its encoder, whole-tensor helpers, and the round-trip error report.
#include "tessera/quant/quantize.h"

#include <fmt/format.h>

#include <cmath>
#include <cstring>

#include "tessera/core/error.h"
#include "tessera/core/half.h"

namespace tessera::quant {

namespace {

using Encoder = void (*)(const float*, void*, int64_t);

Encoder block_encoder(GgmlType type) {
  switch (type) {
    case GgmlType::q4_0:
      return detail::quantize_q4_0;
    case GgmlType::q4_1:
      return detail::quantize_q4_1;
    case GgmlType::q5_0:
      return detail::quantize_q5_0;
    case GgmlType::q5_1:
      return detail::quantize_q5_1;
    case GgmlType::q8_0:
      return detail::quantize_q8_0;
    case GgmlType::q8_1:
      return detail::quantize_q8_1;
    case GgmlType::q2_k:
      return detail::quantize_q2_k;
    case GgmlType::q3_k:
      return detail::quantize_q3_k;
    case GgmlType::q4_k:
      return detail::quantize_q4_k;
    case GgmlType::q5_k:
      return detail::quantize_q5_k;
    case GgmlType::q6_k:
      return detail::quantize_q6_k;
    case GgmlType::q8_k:
      return detail::quantize_q8_k;
    default:
      return nullptr;
  }
}

template <class Convert>
void encode_scalar(const float* src, void* dst, int64_t n, Convert convert) {
  auto* out = static_cast<uint8_t*>(dst);
  for (int64_t i = 0; i < n; ++i) {
    const uint16_t bits = convert(src[i]);
    std::memcpy(out + 2 * i, &bits, 2);
  }
}

}  // namespace

void quantize_row(GgmlType type, const float* src, void* dst, int64_t n) {
  row_bytes(type, n, "quantize");
  switch (type) {
    case GgmlType::f32:
      std::memcpy(dst, src, static_cast<size_t>(n) * sizeof(float));
      return;
    case GgmlType::f16:
      encode_scalar(src, dst, n, [](float v) { return f32_to_f16_bits(v); });
      return;
    case GgmlType::bf16:
      encode_scalar(src, dst, n, detail::f32_to_bf16_ggml);
      return;
    default:
      break;
  }
  const Encoder encode = block_encoder(type);
  if (encode == nullptr) fail("quantize: Tessera cannot encode {} tensors", type_name(type));
  // The block searches assume finite values (as ggml's do); reject the rest instead of writing garbage.
  for (int64_t i = 0; i < n; ++i) {
    if (!std::isfinite(src[i])) {
      fail("quantize: value {} of the row is {}; {} blocks can hold finite values only", i, src[i], type_name(type));
    }
  }
  encode(src, dst, n);
}

std::vector<uint8_t> quantize(GgmlType type, const float* src, int64_t rows, int64_t n_per_row) {
  const int64_t rb = row_bytes(type, n_per_row, "quantize");
  TESSERA_CHECK(rows >= 0, "quantize: negative row count {}", rows);
  std::vector<uint8_t> out(static_cast<size_t>(rows * rb));
  for (int64_t r = 0; r < rows; ++r) {
    try {
      quantize_row(type, src + r * n_per_row, out.data() + r * rb, n_per_row);
    } catch (const Error& e) {
      fail("row {}: {}", r, e.what());
    }
  }
  return out;
}

RoundTripError round_trip_error(GgmlType type, const float* src, int64_t rows, int64_t n_per_row) {
  const std::vector<uint8_t> bytes = quantize(type, src, rows, n_per_row);
  const std::vector<float> back = dequantize(type, bytes.data(), bytes.size(), rows, n_per_row);
  RoundTripError e;
  e.type = type;
  double sq = 0, src_sq = 0;
  for (size_t i = 0; i < back.size(); ++i) {
    const double diff = static_cast<double>(back[i]) - static_cast<double>(src[i]);
    sq += diff * diff;
    src_sq += static_cast<double>(src[i]) * src[i];
    e.max_abs = std::max(e.max_abs, std::fabs(diff));
  }
  const double count = back.empty() ? 1.0 : static_cast<double>(back.size());
  e.rmse = std::sqrt(sq / count);
  e.rms_source = std::sqrt(src_sq / count);
  const TypeTraits& t = type_traits(type);
  e.bits_per_value = 8.0 * static_cast<double>(t.type_size) / static_cast<double>(t.block_size);
  return e;
}

std::string round_trip_report(const float* src, int64_t rows, int64_t n_per_row) {
  std::string out =
      fmt::format("{:<6} {:>9} {:>11} {:>11} {:>10}\n", "type", "bits/val", "rmse", "max |err|", "rmse/rms");
  for (GgmlType type : quantizable_types()) {
    if (n_per_row % type_traits(type).block_size != 0) continue;
    const RoundTripError e = round_trip_error(type, src, rows, n_per_row);
    out += fmt::format("{:<6} {:>9.4g} {:>11.3e} {:>11.3e} {:>10.4f}\n", type_name(type), e.bits_per_value, e.rmse,
                       e.max_abs, e.rms_source > 0 ? e.rmse / e.rms_source : 0.0);
  }
  return out;
}

}  // namespace tessera::quant
