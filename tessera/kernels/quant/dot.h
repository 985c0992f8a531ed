#pragma once
// Internal to tessera/kernels/quant: the per-type dot-product kernels behind quantized_matmul.
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "tessera/quant/ggml_type.h"

namespace tessera::kernels::quant {

inline constexpr int kMaxRows = 4;  // activation rows one kernel call handles
// Weight rows a decode call (one activation row) handles: four memory streams per core. Eight measured
// slower (the kernels run out of vector registers).
inline constexpr int kDecodeRows = 4;

// The quantized activation rows a kernel reads: `rows` (1..kMaxRows) rows of nb activation blocks,
// `stride` bytes apart, and each block's scale as f32 (`scales`, nb per row), decoded once so the inner
// loops need not convert f16, and each block's scaled code sum (for weights with an offset, so that
// the offset can be applied once per block). For float weight types a "block" is one value and the
// rows are f32.
struct ActRows {
  const uint8_t* data;
  size_t stride;
  const float* scales;
  const float* sums;  // scale * (sum of the block's codes), nb per row (Q8_0/Q8_1 activations)
  int rows;
  // Optional, one row only: the first nb / 4 * 4 Q8_0 blocks re-laid for the Q4_0 decode kernel (see
  // layout_q4_0_pairs); nullptr where a kernel must use `data`.
  const uint8_t* q4_pairs = nullptr;
};

// quantize_activation_row, also giving each block's scale as f32 (scales) and, for Q8_0/Q8_1, its
// scale times its code sum (sums): nb values each, what ActRows carries. Null scales skip both.
void quantize_activations_with_scales(tessera::quant::GgmlType act_type, const float* x, uint8_t* out, int64_t k,
                                      float* scales, float* sums);

// Bytes per pair of blocks in the Q4_0 decode layout: codes 0-15 of both blocks, codes 16-31 of both,
// then 16 int16: 8 * (codes 2j + 2j+1 + 16+2j + 16+2j+1) of the first block (j < 8), then the second's.
inline constexpr int64_t kQ4PairBytes = 96;

// Writes nb / 4 * 4 blocks of one Q8_0 activation row (34-byte blocks) in that layout.
void layout_q4_0_pairs(const uint8_t* q8_0_row, int64_t nb, uint8_t* pairs);

// out[i * act.rows + r] = dot(weight row w[i] (nb weight blocks), activation row r) for i < nw, r <
// act.rows. Kernels take nw = 1 with 1..kMaxRows activation rows, or nw = kDecodeRows with one.
using DotFn = void (*)(int64_t nb, const uint8_t* const* w, int nw, const ActRows& act, float* out);

// The two dispatch templates below are instantiated with kernel classes of a .cpp file's unnamed
// namespace, and those of the AVX2 and VNNI files share names (Q6_KKernel, Q4_0X8, ...). In a named
// namespace GCC emits such instantiations as weak symbols under one mangled name, and the linker keeps
// one of them for both files: the VNNI kernels silently ran as AVX2's. An unnamed namespace keeps
// each file's instantiations its own.
namespace {

// Runs the instantiation K<nw, rows>::run for (nw, act.rows): (1, 1..4) or (kDecodeRows, 1); a DotFn.
template <template <int, int> class K>
void run_rows(int64_t nb, const uint8_t* const* w, int nw, const ActRows& act, float* out) {
  if (nw == kDecodeRows) return K<kDecodeRows, 1>::run(nb, w, act, out);
  switch (act.rows) {
    case 1:
      return K<1, 1>::run(nb, w, act, out);
    case 2:
      return K<1, 2>::run(nb, w, act, out);
    case 3:
      return K<1, 3>::run(nb, w, act, out);
    default:
      return K<1, 4>::run(nb, w, act, out);
  }
}

}  // namespace

DotFn portable_dot(tessera::quant::GgmlType type);    // nullptr if the type has no kernel at all
DotFn avx2_dot(tessera::quant::GgmlType type);        // nullptr where no AVX2 kernel exists
DotFn avx2_float_dot(tessera::quant::GgmlType type);  // F32/F16/BF16 weight rows (dot_float_avx2.cpp)
// The AVX-512F form of avx2_float_dot (dot_float_avx512.cpp), for CPUs where use_avx512(); nullptr for
// other types.
DotFn avx512_float_dot(tessera::quant::GgmlType type);
// AVX-512 VNNI row kernels (dot_vnni.cpp: Q6_K), for CPUs where use_avx512_vnni(); nullptr for other types.
DotFn vnni_dot(tessera::quant::GgmlType type);

// Groups of x8 weights (interleave_x8.h) a decode call (one activation row) dots at once, from four
// distant stripes: four memory streams per core reached 95-113% of a one-stream read pass where one
// group at a time reached 91-94%, and two 95-104%.
inline constexpr int kX8DecodeGroups = 4;

// Neighbouring groups a prefill call (several activation rows) dots at once: the activation rows'
// per-block preparation (the VNNI kernels' vpermd spreads) is shared by both.
inline constexpr int kX8PrefillGroups = 2;

// out[(g * act.rows + r) * 8 + i] = dot(row i of x8 group w[g] (nb weight blocks), activation row r),
// for `groups` groups: one or kX8PrefillGroups with 1..kMaxRows activation rows, or kX8DecodeGroups
// with one. group_sums
// (Q4_K): per activation row and block, four int32, each the sums of 32 codes of groups 2t and 2t+1 as
// two int16.
using DotX8Fn = void (*)(int64_t nb, const uint8_t* const* w, const ActRows& act, const int32_t* group_sums,
                         float* out);
DotX8Fn avx2_dot_x8(tessera::quant::GgmlType type, int rows, int groups);  // nullptr where none exists
// The AVX-512 VNNI forms (Q4_0, Q8_0 and Q4_K on 512-bit vectors; results bit-identical to AVX2's), for
// CPUs where use_avx512_vnni().
DotX8Fn vnni_dot_x8(tessera::quant::GgmlType type, int rows, int groups);

namespace {  // see run_rows

// The kernel K<rows, groups>::run for a supported combination (see DotX8Fn), else nullptr.
template <template <int, int> class K>
DotX8Fn pick_x8(int rows, int groups) {
  if (groups == kX8DecodeGroups && rows == 1) return K<1, kX8DecodeGroups>::run;
  if (groups == kX8PrefillGroups && rows == kMaxRows) return K<kMaxRows, kX8PrefillGroups>::run;
  if (groups != 1) return nullptr;
  switch (rows) {
    case 1:
      return K<1, 1>::run;
    case 2:
      return K<2, 1>::run;
    case 3:
      return K<3, 1>::run;
    case 4:
      return K<4, 1>::run;
    default:
      return nullptr;
  }
}

}  // namespace

template <class T>
T load_as(const uint8_t* p) {
  T v;
  std::memcpy(&v, p, sizeof(T));
  return v;
}

}  // namespace tessera::kernels::quant
