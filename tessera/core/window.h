#pragma once
// The output length of a sliding window (pooling, convolution) along one axis, written once for the
// ops' shape rules, the CPU kernels and the StableHLO export, so that all of them agree.
#include <cstdint>

namespace tessera {

// A window of `kernel` taps spaced `dilation` apart, moved by `stride` over an axis of `size` elements
// with `padding` on both sides. Floor mode (PyTorch's default) counts only windows that fit inside the
// padded axis. Ceil mode (PyTorch's ceil_mode=True) also keeps a last, partial window, provided it
// starts inside the input or the left padding (not wholly in the right padding), as PyTorch does.
// The result may be < 1 when no window fits; callers report that.
inline int64_t sliding_window_count(int64_t size, int64_t kernel, int64_t stride, int64_t padding, int64_t dilation,
                                    bool ceil_mode) {
  const int64_t span = size + 2 * padding - dilation * (kernel - 1) - 1;  // last start that fits, from -padding
  // Floor division (toward -inf), as PyTorch's div_rtn: span may be negative.
  auto floor_div = [](int64_t a, int64_t b) { return a >= 0 ? a / b : -((-a + b - 1) / b); };
  int64_t count = floor_div(span + (ceil_mode ? stride - 1 : 0), stride) + 1;
  if (ceil_mode && (count - 1) * stride >= size + padding) --count;
  return count;
}

// The padding after the axis that makes floor-mode windows produce exactly `count` outputs: `padding`
// in floor mode, more when ceil mode keeps a partial last window (for lowerings that pad explicitly).
inline int64_t sliding_window_high_padding(int64_t size, int64_t kernel, int64_t stride, int64_t padding,
                                           int64_t dilation, int64_t count) {
  const int64_t needed = (count - 1) * stride + dilation * (kernel - 1) + 1 - size - padding;
  return needed > padding ? needed : padding;
}

}  // namespace tessera
