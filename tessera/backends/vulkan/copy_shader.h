#pragma once
// The strided copy of the shared lowering (common::CopyPlan: merged axes of any strides, 0 for broadcasts and negative for flips) as a compute shader per element size (1, 2, 4 or
// 8 bytes; 1 and 2 need the device's 8- and 16-bit storage). Push constants, in 32-bit words: numel,
// rank, src_offset, dst_offset, shape[6], src_strides[6], dst_strides[6], then the two binding shifts.
#include <cstdint>
#include <string>

#include "tessera/backends/common/program.h"

namespace tessera::backends::vulkan {

/// The most axes a copy may have after CopyPlan merged them.
inline constexpr int kMaxCopyRank = 6;
/// The push-constant word where the binding shifts of a copy begin.
inline constexpr int kCopyShiftWord = 4 + 3 * kMaxCopyRank;

/// The GLSL of the copy for elements of `element_size` bytes. With `axes` (a copy of more than
/// kMaxCopyRank merged axes, as a 3-D convolution's decomposition makes), its shape and strides are
/// compiled in as constants instead of read from the push constants (which have room for six), so a
/// copy has no rank limit.
std::string strided_copy_glsl(uint32_t element_size, const common::CopyPlan* axes = nullptr);

}  // namespace tessera::backends::vulkan
