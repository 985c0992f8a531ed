// Einsum by alignment: every operand is brought to one common order of all labels (a repeated label
// in one operand first reduced to its diagonal), the aligned operands are multiplied with broadcasting,
// the labels not in the output are summed out and the rest permuted into the output's order. Simple and
// exact; a contraction that matmul could do costs the full product's memory.
#include <algorithm>
#include <map>

#include "tessera/io/onnx/translate_util.h"
#include "tessera/io/onnx/translation_table.h"
#include "tessera/ops/binary.h"
#include "tessera/ops/creation.h"
#include "tessera/ops/reduce.h"
#include "tessera/ops/shape.h"

namespace tessera::io::onnx {

namespace {

// Labels of one term, "..." replaced by one label per broadcast axis ('A', 'B', ... by position from
// the last axis of the ellipsis, so that ellipses of different ranks line up from the right).
std::string expand_term(const NodeContext& c, const std::string& term, int64_t rank, int64_t& ellipsis_rank) {
  const size_t dots = term.find("...");
  std::string out;
  if (dots == std::string::npos) {
    out = term;
  } else {
    if (std::any_of(term.begin(), term.end(), [](char ch) { return ch >= 'A' && ch <= 'Z'; })) {
      c.fail("term {} mixes an ellipsis with upper-case labels, which this translation uses for the ellipsis", term);
    }
    const int64_t named = static_cast<int64_t>(term.size()) - 3;
    const int64_t n = rank < 0 ? ellipsis_rank : rank - named;
    if (n < 0) c.fail("term {} has more labels than its operand's rank {}", term, rank);
    ellipsis_rank = std::max(ellipsis_rank, n);
    std::string broadcast;
    for (int64_t i = n; i > 0; --i) broadcast += static_cast<char>('A' + i - 1);
    out = term.substr(0, dots) + broadcast + term.substr(dots + 3);
  }
  for (char ch : out) {
    if (!((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z'))) c.fail("equation has an invalid label '{}'", ch);
  }
  if (rank >= 0 && static_cast<int64_t>(out.size()) != rank) {
    c.fail("term {} has {} labels for an operand of rank {}", term, out.size(), rank);
  }
  return out;
}

// x with a label repeated in `labels` reduced to its diagonal, until every label appears once.
Tensor take_diagonals(const NodeContext& c, Tensor x, std::string& labels) {
  for (size_t i = 0; i < labels.size(); ++i) {
    for (size_t j = i + 1; j < labels.size(); ++j) {
      if (labels[i] != labels[j]) continue;
      const int64_t n = x.shape()[i];
      if (x.shape()[j] != n) c.fail("label '{}' has sizes {} and {}", labels[i], n, x.shape()[j]);
      Shape eye_shape(labels.size(), 1);
      eye_shape[i] = eye_shape[j] = n;
      x = ops::sum(x * ops::reshape(ops::eye(n, n, 0, x.dtype()), eye_shape), {static_cast<int64_t>(j)});
      labels.erase(j, 1);
      --j;
    }
  }
  return x;
}

std::vector<Tensor> einsum(NodeContext& c) {
  std::string equation;
  for (char ch : c.attr_string("equation", "")) {
    if (ch != ' ') equation += ch;
  }
  const std::vector<Tensor> xs = c.inputs();
  const size_t arrow = equation.find("->");
  std::vector<std::string> terms;
  for (size_t start = 0, end;; start = end + 1) {
    end = equation.find(',', start);
    terms.push_back(equation.substr(start, std::min(end, arrow) - start));
    if (end == std::string::npos || end > arrow) break;
  }
  if (terms.size() != xs.size()) c.fail("equation has {} terms for {} inputs", terms.size(), xs.size());
  int64_t ellipsis_rank = 0;
  std::vector<std::string> labels;
  std::vector<Tensor> operands;
  std::map<char, int64_t> count;
  for (size_t i = 0; i < xs.size(); ++i) {
    labels.push_back(expand_term(c, terms[i], xs[i].rank(), ellipsis_rank));
    operands.push_back(take_diagonals(c, xs[i], labels.back()));
    for (char ch : labels.back()) ++count[ch];
  }
  std::string output;
  if (arrow != std::string::npos) {
    output = expand_term(c, equation.substr(arrow + 2), -1, ellipsis_rank);
  } else {
    // Implicit output: the broadcast labels, then the labels used once, alphabetically.
    for (int64_t i = ellipsis_rank; i > 0; --i) output += static_cast<char>('A' + i - 1);
    for (const auto& [ch, n] : count) {
      if (n == 1 && output.find(ch) == std::string::npos) output += ch;
    }
  }
  for (char ch : output) {
    if (count.count(ch) == 0) c.fail("output label '{}' appears in no input", ch);
  }
  // The common order: output labels first, then the summed ones.
  std::string order = output;
  for (const auto& [ch, n] : count) {
    if (order.find(ch) == std::string::npos) order += ch;
  }
  Tensor product;
  for (size_t i = 0; i < operands.size(); ++i) {
    std::vector<int64_t> perm;
    Shape aligned;
    for (char ch : order) {
      const size_t at = labels[i].find(ch);
      if (at != std::string::npos) perm.push_back(static_cast<int64_t>(at));
    }
    const Tensor permuted = ops::permute(operands[i], perm);
    size_t next = 0;
    for (char ch : order) aligned.push_back(labels[i].find(ch) != std::string::npos ? permuted.shape()[next++] : 1);
    const Tensor a = ops::reshape(permuted, aligned);
    product = product.defined() ? product * a : a;
  }
  ops::Axes summed;
  for (size_t i = output.size(); i < order.size(); ++i) summed.push_back(static_cast<int64_t>(i));
  return {summed.empty() ? product : ops::sum(product, summed)};
}

}  // namespace

void add_einsum_translations(TranslationTable& t) { t.add("Einsum", {12}, einsum); }

}  // namespace tessera::io::onnx
