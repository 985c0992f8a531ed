#pragma once
// Reading llama.cpp's reference outputs (../shared/testdata/logits) and comparing logits with them:
// the README's thresholds per weight type, and teacher-forced greedy agreement with near-ties excused.
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "tessera/core/array.h"

namespace tessera::test {

struct Thresholds {
  double max_abs = 0, mean_abs = 0;
};

// The README's "suggested acceptance thresholds" for a model file named tiny-<arch>-<type>.gguf.
inline Thresholds thresholds_for(const std::string& type) {
  if (type == "f32" || type == "f16") return {1e-2, 2e-3};
  if (type == "bf16") return {5e-2, 1e-2};
  if (type == "q8_0" || type == "q4_0" || type == "q4_1" || type == "q5_0" || type == "q5_1") return {0.2, 0.03};
  return {0.25, 0.04};  // the K-quants and Q4_K_M
}

inline nlohmann::json read_json(const std::filesystem::path& path) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error("cannot open " + path.string());
  return nlohmann::json::parse(in);
}

struct Diff {
  double max_abs = 0, mean_abs = 0;
};

// |a - b| over the first rows of a [rows_a, n] that b [rows_b, n] has.
inline Diff compare_rows(const Array& a, const Array& b) {
  const Array ac = a.contiguous(), bc = b.contiguous();
  const int64_t n = b.shape()[1], rows = b.shape()[0];
  const float* pa = ac.data<const float>();
  const float* pb = bc.data<const float>();
  Diff d;
  for (int64_t i = 0; i < rows * n; ++i) {
    const double e = std::abs(static_cast<double>(pa[i]) - pb[i]);
    d.max_abs = std::max(d.max_abs, e);
    d.mean_abs += e;
  }
  d.mean_abs /= static_cast<double>(rows * n);
  return d;
}

struct Top2 {
  int64_t best = 0;
  double margin = 0;  // top-1 minus top-2 logit
};

inline Top2 top2(const float* row, int64_t n) {
  int64_t best = 0;
  for (int64_t j = 1; j < n; ++j)
    if (row[j] > row[best]) best = j;
  double second = -INFINITY;
  for (int64_t j = 0; j < n; ++j)
    if (j != best) second = std::max(second, static_cast<double>(row[j]));
  return {best, row[best] - second};
}

}  // namespace tessera::test
