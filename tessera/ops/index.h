#pragma once
// Indexing by integer tensors (i32 or i64). Indices must lie in 0..size-1: negative indices are NOT
// counted from the end; they, like any out-of-range index, raise tessera::Error when the op is
// evaluated, naming the op, the index, the axis and its size.
#include "tessera/api/tensor.h"

namespace tessera::ops {

// out[i][j] = x[index[i][j]][j] for axis 0, etc. (torch.gather / numpy.take_along_axis): index has the
// rank of x, and its other dimensions must not exceed x's.
Tensor gather(const Tensor& x, int64_t axis, const Tensor& index);
Tensor take_along_axis(const Tensor& x, const Tensor& index, int64_t axis);  // gather, NumPy's argument order
// Picks whole slices along `axis`: out.shape = x.shape with shape[axis] = index.numel(); index is 1-D.
Tensor index_select(const Tensor& x, int64_t axis, const Tensor& index);
// x with src added at the positions index names along `axis` (torch.scatter_add): for each position p
// of index, out[p with p[axis] = index[p]] += src[p]. x and src have the same dtype (not bool); index
// has their rank, does not exceed src anywhere nor x outside `axis`. Repeated indices accumulate.
Tensor scatter_add(const Tensor& x, int64_t axis, const Tensor& index, const Tensor& src);
// x with whole slices along `axis` replaced (torch.index_copy): out = x, then out's slice index[i]
// along `axis` = src's slice i. index is 1-D and its entries distinct; src has x's shape with
// shape[axis] = index.numel(). Written in place when the result replaces x (a KV cache's new rows).
Tensor index_copy(const Tensor& x, int64_t axis, const Tensor& index, const Tensor& src);
// As index_copy with a floating src of any dtype, rounded to x's (floating) dtype as it is written
// (attribute convert): an f16 KV cache's rows from f32 keys without a cast pass of their own.
Tensor index_copy_converted(const Tensor& x, int64_t axis, const Tensor& index, const Tensor& src);
// indices [...] -> [..., num_classes] with a 1 at each index; dtype of the result as given.
Tensor one_hot(const Tensor& indices, int64_t num_classes, DType dtype = DType::f32);

}  // namespace tessera::ops
