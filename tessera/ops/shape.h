#pragma once
// Shape manipulation. reshape, permute, transpose, broadcast_to, squeeze, unsqueeze and slice are
// views on the reference backend whenever the strides allow (no copy).
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "tessera/api/tensor.h"

namespace tessera::ops {

Tensor reshape(const Tensor& x, const Shape& shape);  // one dimension may be -1
// Merges axes start_axis..end_axis into one.
Tensor flatten(const Tensor& x, int64_t start_axis = 0, int64_t end_axis = -1);
Tensor permute(const Tensor& x, const std::vector<int64_t>& axes);  // result axis i is x's axis axes[i]
Tensor transpose(const Tensor& x, int64_t a = -2, int64_t b = -1);  // swaps axes a and b
Tensor broadcast_to(const Tensor& x, const Shape& shape);  // repeats size-1 and missing leading axes up to `shape`
Tensor squeeze(const Tensor& x, const std::vector<int64_t>& axes = {});  // empty: all size-1 axes
Tensor unsqueeze(const Tensor& x, int64_t axis);                         // inserts a size-1 axis at `axis`
// Bounds for slice where Python leaves one out: kEnd is past the last element and kBegin before the
// first, so x[start:] is slice(x, axis, start, kEnd), x[::-1] is slice(x, axis, kEnd, kBegin, -1) and
// x[:stop] is slice(x, axis, kBegin, stop) (0 does as well there). Indices clamp as in Python.
inline constexpr int64_t kEnd = std::numeric_limits<int64_t>::max();
inline constexpr int64_t kBegin = std::numeric_limits<int64_t>::min();  // see kEnd
// Python slice semantics along one axis (negative indices count from the end; step may be negative).
Tensor slice(const Tensor& x, int64_t axis, int64_t start, int64_t stop, int64_t step = 1);
// x[start:] along `axis` (to the end, step 1).
Tensor slice(const Tensor& x, int64_t axis, int64_t start);
// The adjoint of slice: zeros of length `size` along `axis`, with g's elements placed at positions
// start, start + step, ... (g.shape[axis] of them, all inside 0..size-1). Differentiable; its
// gradient is the matching slice.
Tensor slice_backward(const Tensor& g, int64_t axis, int64_t start, int64_t step, int64_t size);
// Joins along an existing axis; the shapes must agree on every other axis; dtypes promote.
Tensor concat(const std::vector<Tensor>& xs, int64_t axis = 0);
// Joins equal-shaped tensors along a new axis.
Tensor stack(const std::vector<Tensor>& xs, int64_t axis = 0);
// Splits along `axis` into pieces of the given sizes (which must add up to the axis length).
std::vector<Tensor> split(const Tensor& x, const std::vector<int64_t>& sizes, int64_t axis = 0);
// Splits into `sections` equal pieces (the axis length must be divisible by `sections`).
std::vector<Tensor> chunk(const Tensor& x, int64_t sections, int64_t axis = 0);
// What pad() fills with: Constant writes `value`, Reflect mirrors the tensor's own elements.
enum class PadMode { Constant, Reflect };
// One (before, after) pair per axis, starting from the first axis; missing trailing axes get (0, 0).
// PyTorch's F.pad orders its flat list the other way, from the last axis backwards:
// F.pad(x, (l, r, t, b)) on [N, C, H, W] is pad(x, {{0, 0}, {0, 0}, {t, b}, {l, r}}).
// Widths are non-negative. Reflect mirrors without repeating the edge (numpy "reflect"), so each
// width must be smaller than its axis.
Tensor pad(const Tensor& x, const std::vector<std::pair<int64_t, int64_t>>& widths, PadMode mode = PadMode::Constant,
           double value = 0.0);
Tensor flip(const Tensor& x, const std::vector<int64_t>& axes);  // empty: no axis is flipped
// Tiles x `repeats[i]` times along axis i (torch.Tensor.repeat). repeats may be longer than x's rank
// (x then gains leading axes) but not shorter.
Tensor repeat(const Tensor& x, const std::vector<int64_t>& repeats);
// Lower/upper triangle of the last two axes, keeping diagonals up to / from offset k.
Tensor tril(const Tensor& x, int64_t k = 0);
Tensor triu(const Tensor& x, int64_t k = 0);  // see tril (torch.triu)

}  // namespace tessera::ops
