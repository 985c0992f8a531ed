#pragma once
// Building blocks for reference kernels: map a function over one strided array, or over several
// broadcast arrays, writing a fresh contiguous result. Kernels never write into their inputs.
#include <array>

#include "tessera/core/array.h"
#include "tessera/core/strided.h"

namespace tessera::ops {

// out[i] = f(x[i]) with x read as In (its own element type) and f's result stored as Out.
template <class In, class Out, class F>
Array map_array(const Array& x, F&& f) {
  Array out = Array::empty(dtype_of<Out>(), x.shape());
  const Strides out_strides = contiguous_strides(x.shape());
  const In* src = x.data<const In>();
  Out* dst = out.data<Out>();
  for_each_offset<2>(x.shape(), {&x.strides(), &out_strides}, {0, 0},
                     [&](const std::array<int64_t, 2>& o) { dst[o[1]] = convert_element<Out>(f(src[o[0]])); });
  return out;
}

// out[i] = f(a[i], b[i]) over the broadcast of a and b to `shape` (both already of element type In).
template <class In, class Out, class F>
Array map_array2(const Array& a, const Array& b, const Shape& shape, F&& f) {
  const Array av = a.broadcast_to(shape), bv = b.broadcast_to(shape);
  Array out = Array::empty(dtype_of<Out>(), shape);
  const Strides out_strides = contiguous_strides(shape);
  const In* pa = av.data<const In>();
  const In* pb = bv.data<const In>();
  Out* dst = out.data<Out>();
  for_each_offset<3>(shape, {&av.strides(), &bv.strides(), &out_strides}, {0, 0, 0},
                     [&](const std::array<int64_t, 3>& o) { dst[o[2]] = convert_element<Out>(f(pa[o[0]], pb[o[1]])); });
  return out;
}

}  // namespace tessera::ops
