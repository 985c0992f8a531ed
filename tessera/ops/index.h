#pragma once
// Indexing by integer tensors (i32 or i64). Out-of-range indices raise tessera::Error when evaluated.
#include "tessera/api/tensor.h"

namespace tessera::ops {

// out[i][j] = x[index[i][j]][j] for axis 0, etc. (torch.gather / numpy.take_along_axis): index has the
// rank of x, and its other dimensions must not exceed x's.
Tensor gather(const Tensor& x, int64_t axis, const Tensor& index);
Tensor take_along_axis(const Tensor& x, const Tensor& index, int64_t axis);
// Picks whole slices along `axis`: out.shape = x.shape with shape[axis] = index.numel(); index is 1-D.
Tensor index_select(const Tensor& x, int64_t axis, const Tensor& index);
// x with src added at the positions index names along `axis` (torch.scatter_add).
Tensor scatter_add(const Tensor& x, int64_t axis, const Tensor& index, const Tensor& src);
// indices [...] -> [..., num_classes]; dtype of the result as given.
Tensor one_hot(const Tensor& indices, int64_t num_classes, DType dtype = DType::f32);

}  // namespace tessera::ops
