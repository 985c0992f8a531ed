#pragma once
// Reductions over any set of axes (empty = all axes), with keepdims, plus cumsum.
#include <vector>

#include "tessera/api/tensor.h"

namespace tessera::ops {

using Axes = std::vector<int64_t>;  // axes to reduce; empty: all of them

Tensor sum(const Tensor& x, const Axes& axes = {}, bool keepdims = false);   // sum over `axes`
Tensor mean(const Tensor& x, const Axes& axes = {}, bool keepdims = false);  // mean over `axes`
// max/min are PyTorch's amax/amin: at a tie the gradient is split evenly between the elements equal to
// the result (torch.max(x, dim), which returns indices, would route it all to one of them).
Tensor max(const Tensor& x, const Axes& axes = {}, bool keepdims = false);
Tensor min(const Tensor& x, const Axes& axes = {}, bool keepdims = false);  // see max (PyTorch's amin)
Tensor prod(const Tensor& x, const Axes& axes = {}, bool keepdims = false);  // product over `axes`
// Index of the first maximum/minimum along one axis, as i64.
Tensor argmax(const Tensor& x, int64_t axis, bool keepdims = false);
Tensor argmin(const Tensor& x, int64_t axis, bool keepdims = false);  // index of the first minimum along `axis`
// log(sum(exp(x))) over `axes`, computed stably.
Tensor logsumexp(const Tensor& x, const Axes& axes = {}, bool keepdims = false);
// Variance with `correction` subtracted from the count (1 = unbiased, as torch.var's default).
Tensor var(const Tensor& x, const Axes& axes = {}, int64_t correction = 1, bool keepdims = false);
// sqrt(var(x, axes, correction)).
Tensor std(const Tensor& x, const Axes& axes = {}, int64_t correction = 1, bool keepdims = false);
// Inclusive running sum along `axis`; with `reverse`, sums from the end (out[i] = x[i] + ... + x[n-1]).
Tensor cumsum(const Tensor& x, int64_t axis);
Tensor cumsum(const Tensor& x, int64_t axis, bool reverse);

// Sums a broadcast result back to `shape` (the gradient of broadcasting).
Tensor sum_to_shape(const Tensor& x, const Shape& shape);

}  // namespace tessera::ops
