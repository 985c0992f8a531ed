// Structural checks on small random models: tied lm_heads (float and quantized) give the logits of the
// same model with an explicit output.weight equal to token_embd, causality, the reference and CPU
// backends agree, and RoPE rotates consecutive pairs of the leading n_rot values only.
#include <gtest/gtest.h>

#include <cmath>

#include "llm/parity_util.h"
#include "llm/tiny_models.h"
#include "tessera/backends/backend.h"
#include "tessera/backends/cpu/cpu_backend.h"
#include "tessera/models/llm/llm_blocks.h"
#include "tessera/models/llm/prefill.h"
#include "tessera/ops/quant.h"

using namespace tessera;
using namespace tessera::models::llm;
using test::parse_tiny;

namespace {

Array run(const io::gguf::Writer& w, const std::vector<int64_t>& ids, const std::string& backend = "cpu") {
  const LlmModel model(parse_tiny(w));
  Prefill prefill(model, backends::backend_by_name(backend));
  return prefill.logits(ids);
}

const std::vector<int64_t> kStructureIds{3, 1, 4, 1, 5, 9, 2, 6, 5, 3};

// A copy of token_embd written as output.weight: the untied twin of a tied model.
io::gguf::Writer untied_twin(bool gpt2, const test::TinyShape& s) {
  Array embd;
  const auto keep = [&](const std::string& n, Array& a) {
    if (n == "token_embd.weight") embd = a;
    return true;
  };
  io::gguf::Writer w = gpt2 ? test::tiny_gpt2(s, keep) : test::tiny_llama(s, keep);
  w.add_array("output.weight", embd);
  return w;
}

TEST(LlmStructure, TiedEmbeddingsServeAsTheLmHead) {
  for (bool gpt2 : {false, true}) {
    test::TinyShape s;
    s.tied = true;
    const io::gguf::Writer tied = gpt2 ? test::tiny_gpt2(s) : test::tiny_llama(s);
    const test::Diff d = test::compare_rows(run(tied, kStructureIds), run(untied_twin(gpt2, s), kStructureIds));
    EXPECT_EQ(d.max_abs, 0.0) << (gpt2 ? "gpt2" : "llama");
  }
}

// Row bytes of `a` encoded as `type`, ready for Writer::add_tensor.
std::vector<uint8_t> encoded(const Array& a, const std::string& type) {
  const Array blocks = ops::quantize_array(a, type);
  const auto* p = static_cast<const uint8_t*>(blocks.raw_data());
  return {p, p + blocks.nbytes()};
}

double max_abs(const Array& a) {
  double m = 0;
  for (float v : a.to_vector<float>()) m = std::max(m, static_cast<double>(std::abs(v)));
  return m;
}

TEST(LlmStructure, QuantizedTiedEmbeddings) {
  // Q8_0 needs rows of whole 32-value blocks; the vocabulary (37) is not a multiple of anything.
  test::TinyShape s;
  s.dim = 64;
  s.heads = 4;
  s.kv_heads = 1;
  s.vocab = 37;
  s.tied = true;
  Array embd;
  const auto take_embd = [&](const std::string& n, Array& a) {
    if (n != "token_embd.weight") return true;
    embd = a;
    return false;  // added as Q8_0 blocks below
  };
  io::gguf::Writer tied = test::tiny_llama(s, take_embd);
  tied.add_tensor("token_embd.weight", quant::GgmlType::q8_0, {s.dim, s.vocab}, encoded(embd, "q8_0"));
  s.tied = false;
  io::gguf::Writer untied = test::tiny_llama(s, [&](const std::string& n, Array& a) {
    return n != "output.weight" && take_embd(n, a);
  });
  untied.add_tensor("token_embd.weight", quant::GgmlType::q8_0, {s.dim, s.vocab}, encoded(embd, "q8_0"));
  untied.add_tensor("output.weight", quant::GgmlType::q8_0, {s.dim, s.vocab}, encoded(embd, "q8_0"));

  const Array cpu = run(tied, kStructureIds, "cpu"), ref = run(tied, kStructureIds, "reference");
  ASSERT_EQ(cpu.shape(), (Shape{10, 37}));
  EXPECT_EQ(test::compare_rows(cpu, run(untied, kStructureIds, "cpu")).max_abs, 0.0);
  // The CPU kernels round activations to Q8_0 as llama.cpp does; the reference multiplies exactly.
  EXPECT_LT(test::compare_rows(cpu, ref).max_abs, 0.02 * max_abs(ref));
}

TEST(LlmStructure, CausalAndBackendsAgree) {
  for (bool gpt2 : {false, true}) {
    const io::gguf::Writer w = gpt2 ? test::tiny_gpt2() : test::tiny_llama();
    const Array full = run(w, kStructureIds, "reference");
    const Array prefix = run(w, {kStructureIds.begin(), kStructureIds.begin() + 4}, "reference");
    EXPECT_LT(test::compare_rows(full, prefix).max_abs, 1e-5) << "later tokens changed earlier logits";
    EXPECT_LT(test::compare_rows(run(w, kStructureIds, "cpu"), full).max_abs, 1e-4) << (gpt2 ? "gpt2" : "llama");
  }
}

TEST(LlmStructure, RopeRotatesConsecutivePairsOfTheLeadingValues) {
  const int64_t n = 3, heads = 2, d = 6, n_rot = 4;
  std::vector<float> xs(static_cast<size_t>(n * heads * d));
  for (size_t i = 0; i < xs.size(); ++i) xs[i] = std::sin(0.7f * static_cast<float>(i)) + 0.1f;
  const Tensor x = Tensor::from_vector(xs, {n, heads, d});
  const Tensor pos = Tensor::from_vector(std::vector<int64_t>{0, 5, 17}, {n});
  const std::vector<float> y = rope_pairs(x, pos, n_rot, 500.0).to_vector<float>();
  const int64_t p[] = {0, 5, 17};
  for (int64_t t = 0; t < n; ++t) {
    for (int64_t h = 0; h < heads; ++h) {
      const size_t base = static_cast<size_t>((t * heads + h) * d);
      for (int64_t i = 0; i < n_rot / 2; ++i) {
        const double theta = static_cast<double>(p[t]) * std::pow(500.0, -2.0 * static_cast<double>(i) / n_rot);
        const double a = xs[base + 2 * i], b = xs[base + 2 * i + 1];
        EXPECT_NEAR(y[base + 2 * i], a * std::cos(theta) - b * std::sin(theta), 1e-5);
        EXPECT_NEAR(y[base + 2 * i + 1], a * std::sin(theta) + b * std::cos(theta), 1e-5);
      }
      for (int64_t i = n_rot; i < d; ++i) EXPECT_EQ(y[base + i], xs[base + i]);  // past n_rot: unchanged
    }
  }
}

}  // namespace
