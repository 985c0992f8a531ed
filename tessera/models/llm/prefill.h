#pragma once
// Runs a model's whole-sequence forward on a backend: one compiled executable per sequence length,
// reused for every later call of that length.
#include <cstdint>
#include <map>
#include <memory>
#include <vector>

#include "tessera/backends/backend.h"
#include "tessera/models/llm/llm_model.h"

namespace tessera::models::llm {

class Prefill {
 public:
  // `model` must outlive this object.
  Prefill(const LlmModel& model, backends::Backend& backend) : model_(model), backend_(backend) {}

  // Logits f32 [n, n_vocab] of every position of `tokens` (placed at positions 0..n-1).
  Array logits(const std::vector<int64_t>& tokens);

 private:
  const LlmModel& model_;
  backends::Backend& backend_;
  std::map<int64_t, std::unique_ptr<backends::Executable>> by_length_;
};

}  // namespace tessera::models::llm
