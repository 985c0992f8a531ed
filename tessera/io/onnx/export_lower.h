#pragma once
// The export's lowering rules: one function per Tessera op that builds ONNX nodes for a node. Each op
// family registers its rules in its own file (export_elementwise.cpp, export_reduce.cpp, ...); ops
// without a rule, or whose rule declines a node (returns no values), export through their OpDef's
// decomposition (onnx_export.cpp).
#include <functional>
#include <string>
#include <unordered_map>
#include <vector>

#include "tessera/io/onnx/export_builder.h"
#include "tessera/io/op_table.h"
#include "tessera/ir/node.h"

namespace tessera::io::onnx {

struct LowerContext {
  GraphBuilder& b;
  const ir::Node& node;
  std::vector<OVal> in;  // the node's inputs, already exported

  const ir::Attrs& attrs() const { return node.attrs(); }
  const ir::TensorType& out(size_t i = 0) const { return node.output_types().at(i); }
  DType out_dtype(size_t i = 0) const { return out(i).dtype; }
  const Shape& out_shape(size_t i = 0) const { return out(i).shape; }
  // One output of the node's output type.
  OVal op(const std::string& op_type, const std::vector<OVal>& inputs, const AttrSetter& attrs = {}) const {
    return b.op(op_type, inputs, out_dtype(), out_shape(), attrs);
  }
  // Fails naming the op and its input types.
  [[noreturn]] void fail(const std::string& message) const;
};

// The values of the node's outputs, or none to export this node through its decomposition.
using LowerFn = std::function<std::vector<OVal>(LowerContext& c)>;

using LoweringTable = OpTable<LowerFn>;

// Every family's rules, registered on first use.
const LoweringTable& onnx_lowerings();

void add_elementwise_exports(LoweringTable& t);  // export_elementwise.cpp: unary, binary, where, clamp, cast
void add_reduce_exports(LoweringTable& t);       // export_reduce.cpp: sum ... argmax, cumsum, softmax
void add_shape_exports(LoweringTable& t);        // export_shape.cpp: reshape ... pad
void add_index_exports(LoweringTable& t);        // export_index.cpp: gather, index_select, scatter_add, one_hot
void add_linalg_exports(LoweringTable& t);       // export_linalg.cpp: matmul
void add_conv_exports(LoweringTable& t);         // export_conv.cpp: conv and its gradients
void add_pool_exports(LoweringTable& t);         // export_pool.cpp: pooling, adaptive pooling, resampling
void add_creation_exports(LoweringTable& t);     // export_creation.cpp: full, arange, eye

// The normalised axes of a reduction node ("axes" empty = all).
std::vector<int64_t> node_axes(const LowerContext& c);
// f32 for f16/bf16 (sums and averages accumulate wider), else the dtype itself.
DType widened(DType dt);

}  // namespace tessera::io::onnx
