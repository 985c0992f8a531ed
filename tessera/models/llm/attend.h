#pragma once
// How a block's attention reads its keys and values: over the sequence itself (prefill) or over a
// cache of earlier positions (decode). Both architectures take it as a parameter, so one forward
// definition serves both graphs.
#include <cstdint>
#include <functional>

#include "tessera/api/tensor.h"

namespace tessera::models::llm {

// (layer index, q [n, n_head, d], k and v [n, n_head_kv, d]) -> attention output [n, n_head * d].
using Attend = std::function<Tensor(int64_t layer, const Tensor& q, const Tensor& k, const Tensor& v)>;

// Causal attention within the n positions given (llm_blocks.h's causal_attention).
Tensor causal_attend(int64_t layer, const Tensor& q, const Tensor& k, const Tensor& v);

}  // namespace tessera::models::llm
