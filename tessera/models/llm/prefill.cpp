#include "tessera/models/llm/prefill.h"

#include <numeric>

namespace tessera::models::llm {

Array Prefill::logits(const std::vector<int64_t>& tokens) {
  model_.check_tokens(tokens);
  const auto n = static_cast<int64_t>(tokens.size());
  auto& exe = by_length_[n];
  if (!exe) exe = backend_.compile(model_.prefill_graph(n));
  std::vector<int64_t> positions(tokens.size());
  std::iota(positions.begin(), positions.end(), int64_t{0});
  const std::vector<Array> out =
      exe->run({Array::from_vector(tokens, {n}), Array::from_vector(positions, {n})});
  return out.at(0);
}

}  // namespace tessera::models::llm
