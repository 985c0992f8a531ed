#pragma once
// A long quantized product on the CUDA backend multiplies 16-bit activations on the tensor cores
// (library_ops_quant.cpp). Stated in the graph, as cast(x, bf16 | f16) into a quantized_matmul whose
// output_dtype is f32, the rounding moves into the kernel that makes x (fusion puts the cast in its
// cluster, which then writes half the bytes) instead of a pass of its own over x before every product.
// The values are the same: x is rounded to nearest even once either way.
#include "tessera/core/dtype.h"
#include "tessera/ir/graph.h"

namespace tessera::backends::cuda {

// The 16-bit type a quantized_matmul node's activations are rounded to for the tensor cores, or f32
// where they are not (products of few rows run as matvecs on f32 activations; f32 weights).
DType tensor_core_activation_type(const ir::Node& quantized_matmul);

// The graph with every such product's rounding made a cast in front of it where x comes out of a
// generated kernel (the graph itself when none).
ir::Graph narrow_product_activations(const ir::Graph& graph);

}  // namespace tessera::backends::cuda
