#pragma once
// Max pooling planes with AVX-512 (pool_max_avx512.cpp): 16 outputs of a row per vector, each tap a
// masked load (-inf where it falls in the padding; stride 2 keeps the even lanes of two loads). The
// same comparisons in the same order as the scalar row loop, so the same results. Internal to
// tessera/kernels/cpu/pool*.cpp.
#include <cstdint>

#include "tessera/kernels/cpu/pool.h"

namespace tessera::kernels::pool_detail {

constexpr int64_t kMaxAvx512PoolKernelW = 8;
constexpr int64_t kMaxAvx512PoolOutW = 1024;

// Per chunk of 16 outputs and tap column: the input lanes to load (relative to the chunk's first tap).
struct MaxPoolMasks {
  uint64_t load[kMaxAvx512PoolOutW / 16][kMaxAvx512PoolKernelW];
  uint32_t store[kMaxAvx512PoolOutW / 16];
};

// Whether max_plane_avx512 runs g on this CPU (stride 1 or 2 along rows, kernels up to 8 wide).
bool max_pool_avx512_applies(const Pool2dGeometry& g);
MaxPoolMasks max_pool_masks(const Pool2dGeometry& g);
void max_plane_avx512(const Pool2dGeometry& g, const MaxPoolMasks& masks, const float* xp, float* yp);

// 3x3 windows with stride 2 (any padding, ceil mode or not), separably (pool_max_3x3s2_avx512.cpp):
// the same results as max_plane_avx512 and the scalar loop, in about a third of the time.
bool max_pool_3x3s2_avx512_applies(const Pool2dGeometry& g);
void max_plane_3x3s2_avx512(const Pool2dGeometry& g, const float* xp, float* yp);

}  // namespace tessera::kernels::pool_detail
