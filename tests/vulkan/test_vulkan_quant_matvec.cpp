// The wide quantized matvec (quant_matvec_wide.h) against the reference backend: every format it takes,
// rows of one superblock (one lane a row), of a count that leaves lanes idle, and of more superblocks
// than lanes; odd weight-row counts (row groups cut short), one to eight activation rows, one, two and
// four weight rows an invocation, shuffled and shared-memory sums (the same bits), operands that start
// off a 16-byte boundary (the word-load paths), the fused bias and residual, and the old shader still
// taking what the wide one does not (and everything with TESSERA_VULKAN_MATVEC=old).
#include <gtest/gtest.h>

#include "tessera/backends/vulkan/context.h"
#include "tessera/ops/ops.h"
#include "vulkan/quant_test_util.h"
#include "vulkan/vulkan_test_util.h"

namespace tessera::test {
namespace {


constexpr const char* kWideTypes[] = {"q4_0", "q4_1", "q8_0", "q4_k", "q5_k"};

TEST(VulkanQuantMatvec, WideMatvecMatchesTheReferenceForEveryFormatItTakes) {
  // 256 values: one superblock, one lane a row; 768: three, four lanes (one idle); 10240: forty,
  // more than the 32 lanes, so some lanes take two.
  for (const char* type : kWideTypes) {
    for (int64_t k : {256, 768, 10240}) {
      SCOPED_TRACE(std::string(type) + " k " + std::to_string(k));
      const int64_t n = k > 1000 ? 19 : 37;  // not whole row groups
      const Array w = quantized_weights(n, k, type, 11);
      for (int64_t m : {1, 3, 8}) {
        SCOPED_TRACE("rows " + std::to_string(m));
        const ir::Graph g = product_graph(m, k, w, type);
        EXPECT_NE(vulkan_step_descriptions(g).find("wide matvec"), std::string::npos) << vulkan_step_descriptions(g);
        expect_vulkan_matches(g, {random_array({m, k}, 5 + m, -1, 1, DType::f32), w}, 2e-5);
      }
    }
  }
}

TEST(VulkanQuantMatvec, EveryWeightRowBlockGivesTheReferenceValues) {
  // TESSERA_VULKAN_MATVEC_ROWS forces 1, 2 or 4 weight rows an invocation; 1, 5 and 67 weight rows
  // leave the last row block short (its rows past n read row n - 1 and are not stored).
  for (const char* type : {"q4_0", "q8_0", "q4_k"}) {
    for (const char* rows : {"1", "2", "4"}) {
      SCOPED_TRACE(std::string(type) + ", " + rows + " weight rows an invocation");
      const ScopedEnv forced("TESSERA_VULKAN_MATVEC_ROWS", rows);
      for (int64_t n : {1, 5, 67}) {
        SCOPED_TRACE("n " + std::to_string(n));
        const Array w = quantized_weights(n, 512, type, 12);
        for (int64_t m : {1, 2}) {
          expect_vulkan_matches(product_graph(m, 512, w, type), {random_array({m, 512}, 6, -1, 1, DType::f32), w},
                                2e-5);
        }
      }
    }
  }
}

TEST(VulkanQuantMatvec, ShuffledAndSharedMemorySumsGiveTheSameBits) {
  // 2048 values (8 lanes a row: shuffles on a device with subgroups of 8 or more) and 8192 (32 lanes).
  for (int64_t k : {2048, 8192}) {
    SCOPED_TRACE("k " + std::to_string(k));
    const Array w = quantized_weights(45, k, "q4_0", 13);
    const std::vector<Array> in = {random_array({1, k}, 7, -1, 1, DType::f32), w};
    const ir::Graph g = product_graph(1, k, w, "q4_0");
    std::vector<float> sums[2];
    for (int shared = 0; shared < 2; ++shared) {
      const ScopedEnv sw("TESSERA_VULKAN_SUBGROUPS", shared ? "0" : "1");
      sums[shared] = expect_vulkan_matches(g, in, 2e-5)[0].to_vector<float>();
    }
    EXPECT_EQ(sums[0], sums[1]);
  }
}

TEST(VulkanQuantMatvec, OperandsOffA16ByteBoundaryTakeTheWordLoads) {
  // x a slice one float into its row, w one word into a flat byte buffer: their binding shifts are not
  // multiples of 4 words, so the shader reads them a word at a time.
  const int64_t n = 9, k = 512;
  const Array w = quantized_weights(n, k, "q4_0", 14);
  const int64_t row_bytes = w.shape()[1];
  auto f = [n, row_bytes](const std::vector<Tensor>& a) {
    const Tensor x = ops::slice(a[0], 1, 1, 1 + k);
    const Tensor wv = ops::reshape(ops::slice(a[1], 0, 4, 4 + n * row_bytes), {n, row_bytes});
    return std::vector<Tensor>{ops::quantized_matmul(x, wv, "q4_0")};
  };
  const ir::Graph g = trace(f, {{DType::f32, {1, k + 1}}, {DType::u8, {4 + n * row_bytes}}});
  std::vector<uint8_t> bytes(4, 0);
  const std::vector<uint8_t> rows = w.to_vector<uint8_t>();
  bytes.insert(bytes.end(), rows.begin(), rows.end());
  expect_vulkan_matches(g, {random_array({1, k + 1}, 8, -1, 1, DType::f32), Array::from_vector<uint8_t>(bytes, {4 + n * row_bytes})},
                        2e-5);
}

TEST(VulkanQuantMatvec, WideMatvecAddsItsBiasAndResidualAsItStores) {
  const Array w = quantized_weights(21, 512, "q4_0", 15);
  auto f = [](const std::vector<Tensor>& a) {
    return std::vector<Tensor>{ops::quantized_matmul(a[0], a[1], "q4_0") + a[2] + a[3]};
  };
  for (int64_t m : {1, 3}) {
    SCOPED_TRACE("rows " + std::to_string(m));
    const ir::Graph g = trace(f, {{DType::f32, {m, 512}}, {DType::u8, w.shape()}, {DType::f32, {21}}, {DType::f32, {m, 21}}});
    const std::string steps = vulkan_step_descriptions(g);
    EXPECT_NE(steps.find("+bias +residual (wide matvec"), std::string::npos) << steps;
    expect_vulkan_matches(g,
                          {random_array({m, 512}, 1, -1, 1, DType::f32), w, random_array({21}, 2, -1, 1, DType::f32),
                           random_array({m, 21}, 3, -1, 1, DType::f32)},
                          2e-5);
  }
}

TEST(VulkanQuantMatvec, TheOldShaderTakesWhatTheWideOneDoesNot) {
  // Rows that are not whole superblocks, formats without a wide reader, and every product with
  // TESSERA_VULKAN_MATVEC=old.
  struct Case {
    const char* type;
    int64_t k;
    bool wide;
  };
  for (const Case& c : {Case{"q4_0", 96, false}, Case{"q8_0", 288, false}, Case{"q6_k", 512, false},
                        Case{"q5_0", 256, false}, Case{"q4_0", 512, true}}) {
    for (bool old : {false, true}) {
      SCOPED_TRACE(std::string(c.type) + " k " + std::to_string(c.k) + (old ? ", TESSERA_VULKAN_MATVEC=old" : ""));
      const ScopedEnv which("TESSERA_VULKAN_MATVEC", old ? "old" : "wide");
      const Array w = quantized_weights(13, c.k, c.type, 16);
      const ir::Graph g = product_graph(1, c.k, w, c.type);
      const bool wide = vulkan_step_descriptions(g).find("wide matvec") != std::string::npos;
      EXPECT_EQ(wide, c.wide && !old) << vulkan_step_descriptions(g);
      expect_vulkan_matches(g, {random_array({1, c.k}, 4, -1, 1, DType::f32), w}, 2e-5);
    }
  }
}

}  // namespace
}  // namespace tessera::test
