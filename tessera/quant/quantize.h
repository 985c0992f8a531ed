#pragma once
// Conversion between f32 and the GGML tensor types, byte-exact with ggml: dequantization reproduces
// ggml's `to_float` bit for bit, and quantization follows ggml's reference ("_ref", no importance
// matrix) algorithms, which is what llama-quantize runs when no imatrix is given. Rows never share a
// block, so an [rows, n] tensor is rows * row_bytes(type, n) bytes.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "tessera/quant/ggml_type.h"

namespace tessera::quant {

// Decodes `n` values (a multiple of the block size) from `src` into `dst`. Throws for types Tessera
// cannot decode (i-quants, ...). Never reads more than row_bytes(type, n) bytes.
void dequantize_row(GgmlType type, const void* src, float* dst, int64_t n);

// Encodes `n` finite values (a multiple of the block size) into row_bytes(type, n) bytes at `dst`.
// F32/F16/BF16 accept inf and nan; block types reject them (tessera::Error naming the position).
void quantize_row(GgmlType type, const float* src, void* dst, int64_t n);

// Whole tensors of `rows` rows of `n_per_row` values.
std::vector<uint8_t> quantize(GgmlType type, const float* src, int64_t rows, int64_t n_per_row);
std::vector<float> dequantize(GgmlType type, const void* src, size_t src_bytes, int64_t rows, int64_t n_per_row);

// Round-trip error of quantizing then dequantizing `src`.
struct RoundTripError {
  GgmlType type = GgmlType::f32;
  double rmse = 0;
  double max_abs = 0;
  double rms_source = 0;  // so that rmse / rms_source is the relative error
  double bits_per_value = 0;
};
RoundTripError round_trip_error(GgmlType type, const float* src, int64_t rows, int64_t n_per_row);
// A table of round_trip_error for every quantizable type (one line each).
std::string round_trip_report(const float* src, int64_t rows, int64_t n_per_row);

// Per-type encoders, exposed for the kernels and tests (n is a multiple of the block size, values finite).
namespace detail {
void quantize_q4_0(const float* x, void* y, int64_t n);
void quantize_q4_1(const float* x, void* y, int64_t n);
void quantize_q5_0(const float* x, void* y, int64_t n);
void quantize_q5_1(const float* x, void* y, int64_t n);
void quantize_q8_0(const float* x, void* y, int64_t n);
void quantize_q8_1(const float* x, void* y, int64_t n);
void quantize_q2_k(const float* x, void* y, int64_t n);
void quantize_q3_k(const float* x, void* y, int64_t n);
void quantize_q4_k(const float* x, void* y, int64_t n);
void quantize_q5_k(const float* x, void* y, int64_t n);
void quantize_q6_k(const float* x, void* y, int64_t n);
void quantize_q8_k(const float* x, void* y, int64_t n);
uint16_t f32_to_bf16_ggml(float value);  // ggml's rounding: nearest even, NaN kept quiet
}  // namespace detail

}  // namespace tessera::quant
