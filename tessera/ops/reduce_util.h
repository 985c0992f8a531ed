#pragma once
// Shared machinery for reductions: the shape rule (axes + keepdims) and a reference kernel that
// folds every reduced slice with an accumulator.
#include <cmath>
#include <string>
#include <type_traits>
#include <vector>

#include "tessera/core/array.h"
#include "tessera/core/strided.h"
#include "tessera/ir/op_def.h"

namespace tessera::ops {

// Output shape of reducing `in` over the node's "axes" attribute (empty = all) with "keepdims".
ir::TensorType reduce_type(const std::string& op, const std::vector<ir::TensorType>& in, const ir::Attrs& attrs,
                           DType out_dtype);
// The normalised, sorted axes a reduction node reduces over.
std::vector<int64_t> reduce_axes(const std::string& op, const std::vector<ir::TensorType>& in, const ir::Attrs& attrs);
void register_more_reductions(ir::OpRegistry& registry);  // reduce_more.cpp

// Shape of the reduced result with kept (size-1) axes, for broadcasting gradients back.
Shape keepdims_shape(const Shape& shape, const std::vector<int64_t>& axes);

// NaN test that also compiles for integer and bool element types (always false there).
template <class C>
bool is_nan_value(C v) {
  if constexpr (std::is_floating_point_v<C>) {
    return std::isnan(v);
  } else {
    (void)v;
    return false;
  }
}

// Reference reduction: for each output element, acc = init(); acc = step(acc, x, index_in_slice) over
// the reduced elements in row-major order; out = finish(acc, count). `x` is read as In.
template <class In, class Acc, class Out, class Init, class Step, class Finish>
Array reduce_array(const Array& x, const std::vector<int64_t>& axes, const Shape& out_shape, Init init, Step step,
                   Finish finish) {
  const int64_t rank = x.rank();
  std::vector<bool> reduced(static_cast<size_t>(rank), false);
  for (int64_t a : axes) reduced[static_cast<size_t>(a)] = true;
  Shape outer_shape, inner_shape;
  Strides outer_strides, inner_strides;
  for (int64_t d = 0; d < rank; ++d) {
    if (reduced[static_cast<size_t>(d)]) {
      inner_shape.push_back(x.shape()[d]);
      inner_strides.push_back(x.strides()[d]);
    } else {
      outer_shape.push_back(x.shape()[d]);
      outer_strides.push_back(x.strides()[d]);
    }
  }
  const int64_t count = shape_numel(inner_shape);
  Array out = Array::empty(dtype_of<Out>(), out_shape);
  Out* dst = out.data<Out>();
  const In* src = x.data<const In>();
  int64_t o = 0;
  for_each_offset<1>(outer_shape, {&outer_strides}, {0}, [&](const std::array<int64_t, 1>& base) {
    Acc acc = init();
    int64_t i = 0;
    for_each_offset<1>(inner_shape, {&inner_strides}, {base[0]}, [&](const std::array<int64_t, 1>& off) {
      acc = step(acc, src[off[0]], i++);
    });
    dst[o++] = convert_element<Out>(finish(acc, count));
  });
  return out;
}

}  // namespace tessera::ops
