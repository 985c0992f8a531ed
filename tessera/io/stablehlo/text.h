#pragma once
// Printing MLIR types and attributes the way the StableHLO pretty printer (and jax's `.as_text()`)
// writes them: element types (f32, i1, ui8, ...), tensor types, integer lists, dense constants.
// Element types are strings here because lowerings also need types Tessera has no DType for
// (ui32/ui64 for the Philox generator, ui16 for half-precision bit patterns).
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "tessera/core/array.h"
#include "tessera/ir/node.h"

namespace tessera::io::stablehlo {

// f32, f64, f16, bf16, i8, i32, i64, ui8, i1.
std::string element_type(DType dt);
bool is_float_element(const std::string& elem);     // f16, bf16, f32, f64
bool is_unsigned_element(const std::string& elem);  // ui8 ... ui64 and i1 (compared as unsigned)
int element_bits(const std::string& elem);          // 1, 8, 16, 32 or 64

// tensor<2x3xf32>, tensor<f32> for a scalar.
std::string tensor_type(const std::string& elem, const Shape& shape);
std::string tensor_type(const ir::TensorType& t);

std::string int_list(const std::vector<int64_t>& v);   // [0, 1]
std::string array_i64(const std::vector<int64_t>& v);  // array<i64: 0, 1>
// dense<[[lo0, hi0], [lo1, hi1]]> : tensor<2x2xi64>
std::string padding_attr(const std::vector<std::pair<int64_t, int64_t>>& pads);

// One element literal as MLIR parses it back exactly: floats always carry a '.' or use the hex bit
// pattern (non-finite values), booleans are true/false, unsigned integers print without sign.
std::string float_literal(double value, const std::string& elem);
std::string int_literal(int64_t value, const std::string& elem);
std::string uint_literal(uint64_t value);

// The dense attribute of an array: a splat `dense<v>` when every element is equal, a nested list when
// it has at most `max_list_elements` elements, else the raw little-endian bytes `dense<"0x...">`.
std::string dense_literal(const Array& value, int64_t max_list_elements = 1024);

}  // namespace tessera::io::stablehlo
