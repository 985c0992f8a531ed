#pragma once
// Quantized weights re-laid for the AVX2 kernels: eight rows interleaved block by block ("x8"), the
// same number of bytes as the GGUF rows. In a GGUF row each vector of weights belongs to one output, so
// a dot product ends in a horizontal sum and every block's scales must be spread over the lanes with
// shuffles. Interleaved, one 32-byte vector holds four bytes of each of eight rows: one broadcast of
// four activation codes meets all eight rows, the eight rows' scales load as one vector, and the
// eight results come out in the eight lanes. That about halves the instructions per weight byte, which
// decode needs to keep up with memory. llama.cpp re-lays Q4_0 and Q4_K for the same reason (its
// "repack" buffers); these layouts are Tessera's own.
//
// Q4_0, per block of 32 values and 8 rows (144 bytes): the 8 rows' f16 scales, then 4 chunks of 32
// bytes; chunk c holds bytes 4c..4c+3 of each row's 16 code bytes, row r at bytes 4r..4r+3 (low
// nibbles: values 4c..4c+3, high nibbles: values 16+4c..16+4c+3). Q8_0 (272 bytes) alike, with 8
// chunks of the rows' 32 code bytes (chunk c: values 4c..4c+3).
//
// Q4_K, per super-block of 256 values and 8 rows (1152 bytes): the 8 rows' f16 d, their f16 dmin, the
// 64 6-bit scales (48 bytes), the 64 6-bit mins (48 bytes), then per group g (32 values) 4 chunks of
// 32 bytes; chunk c of group g holds, for row r at bytes 4r..4r+3, values 32g+8c..32g+8c+3 (low
// nibbles) and 32g+8c+4..32g+8c+7 (high nibbles). A 6-bit table of 64 values v[g][r] is stored as 32
// bytes of nibbles and 16 bytes of top bits laid so that eleven vector instructions expand it (see
// x8_six_bit_position in interleave_x8.cpp).
#include <cstdint>

#include "tessera/quant/ggml_type.h"

namespace tessera::kernels::quant {

using tessera::quant::GgmlType;

inline constexpr int64_t kX8Rows = 8;

// Whether `type` has an x8 layout and n weight rows can take it (n a multiple of 8).
bool x8_layout_exists(GgmlType type);
bool can_interleave_x8(GgmlType type, int64_t n);

// n rows of k values (GGUF row layout, n * row_bytes(type, k) bytes) to the x8 layout (as many bytes),
// and back.
void interleave_x8(GgmlType type, const uint8_t* rows, int64_t n, int64_t k, uint8_t* x8);
void deinterleave_x8(GgmlType type, const uint8_t* x8, int64_t n, int64_t k, uint8_t* rows);

// The byte of the 64-byte expanded 6-bit table where value v[g][r] lands (see the header comment).
int x8_six_bit_position(int g, int r);

}  // namespace tessera::kernels::quant
