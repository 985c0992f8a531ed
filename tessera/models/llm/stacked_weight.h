#pragma once
// Projections of one input computed as one product. q, k and v (and gate and up) all read the same
// normalised activations; with their rows stacked into one matrix a decode step launches one matrix-vector
// product instead of three, each large enough to fill a GPU (k and v alone are 512 rows in a 1B Llama).
// GGUF rows are independent blocks, so stacking is a byte copy, possible when the parts share a type.
#include <cstdint>
#include <vector>

#include "tessera/models/llm/gguf_weights.h"

namespace tessera::models::llm {

// One matrix whose rows are those of `rows.size()` projections, in order.
struct StackedWeight {
  QuantWeight weight;
  std::vector<int64_t> rows;  // rows of each part
};

// The parts as products: with `stack`, each run of consecutive parts of one type becomes one matrix (a
// copy of their rows, in memory of its own); without, each part stays alone, viewing the file.
std::vector<StackedWeight> stack_weights(const std::vector<const QuantWeight*>& parts, bool stack);

// x [..., cols] times every part of the stacks: one product per stack, split back into the parts.
std::vector<Tensor> linear_parts(const Tensor& x, const std::vector<StackedWeight>& stacks);

}  // namespace tessera::models::llm
