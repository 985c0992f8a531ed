#pragma once
// The lowering rules: one function per op that turns a node into StableHLO ops through the Emitter.
// Each op family registers its rules in its own file (lower_elementwise.cpp, lower_reduce.cpp, ...);
// ops without a rule are exported through their OpDef's decomposition (export.cpp).
#include <functional>
#include <string>
#include <unordered_map>
#include <vector>

#include "tessera/io/stablehlo/emitter.h"
#include "tessera/io/stablehlo/export.h"
#include "tessera/io/op_table.h"
#include "tessera/ir/node.h"

namespace tessera::io::stablehlo {

struct LowerContext {
  Emitter& e;
  const ir::Node& node;
  std::vector<Val> in;  // the node's inputs, already emitted
  const ExportOptions& options;

  const ir::Attrs& attrs() const { return node.attrs(); }
  const ir::TensorType& out(size_t i = 0) const { return node.output_types().at(i); }
  std::string out_elem(size_t i = 0) const { return element_type(out(i).dtype); }
  const Shape& out_shape(size_t i = 0) const { return out(i).shape; }
  bool highest() const { return options.precision == Precision::Highest; }
  // Fails naming the op and its input types.
  [[noreturn]] void fail(const std::string& message) const;
};

using LowerFn = std::function<std::vector<Val>(LowerContext& c)>;

using LoweringTable = OpTable<LowerFn>;

// Every family's rules, registered on first use.
const LoweringTable& lowerings();

void add_elementwise_lowerings(LoweringTable& t);  // lower_elementwise.cpp: unary, binary, where, clamp, cast
void add_creation_lowerings(LoweringTable& t);     // lower_creation.cpp: full, arange, eye
void add_reduce_lowerings(LoweringTable& t);       // lower_reduce.cpp: sum ... argmax, cumsum
void add_shape_lowerings(LoweringTable& t);        // lower_shape.cpp: reshape ... pad
void add_index_lowerings(LoweringTable& t);        // lower_index.cpp: gather, index_select, scatter_add, one_hot
void add_linalg_lowerings(LoweringTable& t);       // lower_linalg.cpp: matmul
void add_conv_lowerings(LoweringTable& t);         // lower_conv.cpp: conv and its gradients
void add_pool_lowerings(LoweringTable& t);         // lower_pool.cpp: pooling, resampling and their gradients
void add_random_lowerings(LoweringTable& t);       // lower_random.cpp: Philox draws
void add_quant_lowerings(LoweringTable& t);        // lower_quant.cpp: dequantize (GGML blocks)

// Shared helpers for the families.
// The normalised axes of a reduction node ("axes" empty = all).
std::vector<int64_t> node_axes(const LowerContext& c);
// Computes in f32 for f16/bf16 values (reductions, averages), else in the value's own type.
std::string widened(const std::string& elem);
std::vector<int64_t> iota_axes(int64_t n, int64_t from = 0);
// The body of an arg-max/arg-min reduction over (value, index) pairs a = {av, ai, bv, bi}: `better`
// orders values (GT for max, LT for min), a NaN beats any number (floating only), ties keep the lower
// index. Shared by argmax/argmin and max-pool's gradient so both pick the same element as Tessera.
std::vector<Val> pick_extreme_with_index(Emitter& b, const std::vector<Val>& a, Cmp better, bool floating);

}  // namespace tessera::io::stablehlo
