#pragma once
// The convolution and pooling geometries the GPU backends' suites check against the reference
// (tests/cuda/test_cuda_conv_pool.cpp, tests/vulkan/test_vulkan_conv_pool.cpp): strides, padding,
// dilation, non-square kernels, a long reduction into few weights; pooling's dropped edges, ceil mode,
// overlapping windows and planes over any leading axes.
#include <array>
#include <cmath>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "test_util.h"

namespace tessera::test {

struct ConvCase {
  Shape x, w;
  std::array<int64_t, 2> stride, padding, dilation;
};

// `long_batch`: images of the one-channel 28x28 case, whose weight gradient sums over
// long_batch * 676 positions into 8 x 9 weights (K split over the GPU).
inline std::vector<ConvCase> conv_cases(int64_t long_batch) {
  return {
      {{2, 3, 9, 11}, {4, 3, 3, 3}, {1, 1}, {0, 0}, {1, 1}},
      {{3, 5, 12, 10}, {7, 5, 3, 2}, {2, 1}, {1, 0}, {1, 2}},
      {{1, 8, 16, 16}, {16, 8, 5, 5}, {2, 2}, {2, 2}, {1, 1}},
      {{2, 4, 7, 7}, {3, 4, 1, 1}, {1, 1}, {0, 0}, {1, 1}},
      {{4, 2, 13, 13}, {6, 2, 3, 3}, {3, 2}, {1, 1}, {2, 1}},
      {{long_batch, 1, 28, 28}, {8, 1, 3, 3}, {1, 1}, {0, 0}, {1, 1}},
  };
}

inline std::string describe(const ConvCase& c) {
  return fmt::format("x {} w {} stride {}x{} padding {}x{} dilation {}x{}", shape_str(c.x), shape_str(c.w), c.stride[0],
                     c.stride[1], c.padding[0], c.padding[1], c.dilation[0], c.dilation[1]);
}

struct PoolCase {
  Shape x;
  std::array<int64_t, 2> kernel, stride, padding, dilation;
  bool ceil_mode;
};

inline std::vector<PoolCase> pool_cases() {
  return {
      {{2, 3, 26, 26}, {2, 2}, {2, 2}, {0, 0}, {1, 1}, false},
      {{2, 3, 11, 11}, {2, 2}, {2, 2}, {0, 0}, {1, 1}, false},  // the odd last row and column are dropped
      {{1, 2, 7, 9}, {2, 2}, {2, 2}, {0, 0}, {1, 1}, true},     // partial last windows (ceil mode)
      {{1, 4, 9, 12}, {3, 3}, {2, 2}, {1, 1}, {1, 1}, false},   // overlapping windows, padding
      {{1, 2, 10, 9}, {3, 2}, {2, 1}, {1, 0}, {2, 1}, true},    // dilation, ceil mode, non-square
      {{5, 1, 7, 7}, {2, 3}, {1, 2}, {0, 1}, {1, 1}, true},     // overlapping along one axis
      {{3, 7, 7}, {2, 2}, {2, 2}, {0, 0}, {1, 1}, false},       // one leading axis
  };
}

inline std::string describe(const PoolCase& c) {
  return fmt::format("x {} kernel {}x{} stride {}x{} padding {}x{} dilation {}x{} ceil {}", shape_str(c.x), c.kernel[0],
                     c.kernel[1], c.stride[0], c.stride[1], c.padding[0], c.padding[1], c.dilation[0], c.dilation[1],
                     c.ceil_mode);
}

// Values on a coarse grid so that windows hold ties: the first maximum in window order must win.
inline Array coarse(const Shape& shape, uint64_t seed) {
  Array a = random_array(shape, seed, -3, 3, DType::f32);
  float* p = a.data<float>();
  for (int64_t i = 0; i < a.numel(); ++i) p[i] = std::round(p[i]);
  return a;
}

}  // namespace tessera::test
