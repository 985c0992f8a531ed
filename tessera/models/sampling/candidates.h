#pragma once
// The tokens still in the running while a sampler's rules narrow the next-token distribution: each
// with its logit and (after softmax) its probability. Rules keep the list sorted by logit, largest
// first, once one of them has sorted it.
#include <cstdint>
#include <span>
#include <vector>

namespace tessera::models::sampling {

struct Candidate {
  int32_t id = 0;
  float logit = 0;
  float p = 0;
};

struct Candidates {
  std::vector<Candidate> items;
  bool sorted = false;  // by logit, descending

  static Candidates from_logits(std::span<const float> logits);
  void sort();     // by logit, descending; equal logits by id, so results never depend on the sort
  void softmax();  // sets p from the logits (sorts first)
};

}  // namespace tessera::models::sampling
