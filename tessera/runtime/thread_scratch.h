#pragma once
// Scratch memory private to one thread: GEMM packing panels, transposed copies, quantized
// activations. A thread's buffer grows on demand, and the largest size any thread has asked for in
// each slot is remembered. reserve_thread_scratch() then grows every pool thread's buffers to those
// sizes: after one measuring run, a compiled executable allocates nothing, whichever thread happens
// to pick up which chunk of work (measure, then reserve).
#include <cstddef>

#include "tessera/runtime/thread_pool.h"

namespace tessera::runtime {

// One slot per buffer that can be live at the same time on one thread.
enum class ScratchSlot : int {
  gemm_pack_a,
  gemm_pack_b,
  gemm_rows,  // op(A)'s rows made contiguous for the small-m GEMM
  quant_activations,
  quant_scales,
  quant_sums,
  quant_q4_pairs,     // the Q4_0 decode kernel's activation layout
  quant_group_sums,   // Q8_K activation code sums per 32 values, for the Q4_K x8 kernels
  quant_x8_rows,      // one x8 group turned back into rows, for CPUs without AVX2
  quant_f16_acts,     // the f16-weight GEMM's activations, packed into row panels
  quant_f16_panel,    // one panel of f16 weight rows widened to f32
  conv_columns,       // the implicit-GEMM convolution's im2col panels (one k block of NC columns)
  winograd_inputs,    // a Winograd convolution's transformed input tiles (one chunk of tile rows)
  winograd_products,  // its products for one group of output channels, before the output transform
  depthwise_band,     // a band of depthwise output rows of every channel, for the pointwise conv after it
  count
};

// At least `bytes` bytes, 64-byte aligned, private to the calling thread; valid until this thread's
// next call for the same slot with a larger size. The contents are unspecified.
void* thread_scratch(ScratchSlot slot, size_t bytes);

template <typename T>
T* thread_scratch_of(ScratchSlot slot, size_t count) {
  return static_cast<T*>(thread_scratch(slot, count * sizeof(T)));
}

// Grows every thread of `pool` (and the caller) to the largest size requested so far in each slot.
// Returns false, doing nothing, when no size has grown since the last reserve on this pool.
bool reserve_thread_scratch(ThreadPool& pool);

// The largest size requested so far in `slot`, by any thread.
size_t thread_scratch_high_water(ScratchSlot slot);

}  // namespace tessera::runtime
