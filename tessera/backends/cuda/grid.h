#pragma once
// The launch shape every grid-stride kernel of the CUDA backend shares.
#include <algorithm>
#include <cstdint>

namespace tessera::backends::cuda {

// Blocks of 256 threads for a grid-stride loop over `threads` items: at least one, at most 16 per
// multiprocessor (the loop covers the rest).
inline unsigned grid_stride_blocks(int64_t threads, int multiprocessors) {
  const int64_t blocks = (threads + 255) / 256;
  return static_cast<unsigned>(std::clamp<int64_t>(blocks, 1, int64_t{16} * std::max(1, multiprocessors)));
}

}  // namespace tessera::backends::cuda
