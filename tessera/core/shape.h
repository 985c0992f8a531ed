#pragma once
// Shapes of any rank (no cap), strides in elements, and the helpers every op's shape rule needs.
#include <cstdint>
#include <string>
#include <vector>

namespace tessera {

using Shape = std::vector<int64_t>;    // dimension sizes, outermost first; {} is a scalar
using Strides = std::vector<int64_t>;  // per axis, the step between neighbouring elements, in elements

// The product of the dimensions (1 for a scalar); throws tessera::Error when it overflows 64 bits.
int64_t shape_numel(const Shape& shape);
std::string shape_str(const Shape& shape);  // "[2, 3]"
// Row-major strides of a packed array of `shape` ({3, 4} gives {4, 1}); throws tessera::Error on overflow.
Strides contiguous_strides(const Shape& shape);

// Maps a possibly negative axis into [0, rank); throws naming `what` when out of range.
int64_t normalize_axis(int64_t axis, int64_t rank, const char* what);
// Normalises, sorts and de-duplicates a set of axes; an empty list means "all axes" when `empty_is_all`.
std::vector<int64_t> normalize_axes(const std::vector<int64_t>& axes, int64_t rank, const char* what,
                                    bool empty_is_all = true);

// NumPy broadcasting of two shapes; throws naming `what` and both shapes when incompatible.
Shape broadcast_shapes(const Shape& a, const Shape& b, const char* what);

}  // namespace tessera
