// Every registered op exports: each op case is traced, exported (both precisions) and read back by
// the structural checker, and the op shows up as lowered the way lowering_kind says. The dump test
// writes all cases with Tessera's outputs as bundles for tools/xla/check_ops.py (run on XLA).
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <set>

#include "op_cases.h"
#include "tessera/io/stablehlo/bundle.h"
#include "tessera/io/stablehlo/checker.h"
#include "tessera/io/stablehlo/export.h"
#include "tessera/io/stablehlo/programs.h"
#include "test_util.h"

using namespace tessera;
namespace shlo = tessera::io::stablehlo;

TEST(StablehloOps, EveryRegisteredOpHasACase) {
  std::set<std::string> covered;
  for (const auto& c : test::op_cases()) covered.insert(c.op);
  for (const std::string& op : ir::OpRegistry::instance().names()) {
    if (op == "input") continue;  // every case's placeholders
    EXPECT_TRUE(covered.count(op)) << "no StableHLO export case for op '" << op << "'";
  }
}

TEST(StablehloOps, EveryRegisteredOpIsExportable) {
  for (const std::string& op : ir::OpRegistry::instance().names()) {
    EXPECT_NE(shlo::lowering_kind(op), "") << "op '" << op << "' has no lowering and no decomposition";
  }
}

TEST(StablehloOps, EveryCaseExportsAndPassesTheChecker) {
  std::set<std::string> labels;
  for (const auto& c : test::op_cases()) {
    SCOPED_TRACE(c.label);
    ASSERT_TRUE(labels.insert(c.label).second) << "duplicate label";
    const ir::Graph g = test::case_graph(c);
    for (shlo::Precision p : {shlo::Precision::Default, shlo::Precision::Highest}) {
      shlo::Module m;
      try {
        m = shlo::export_graph(g, {.precision = p});
        const shlo::CheckedModule checked = shlo::check_exported(m);
        EXPECT_GT(checked.values, 0);
      } catch (const Error& e) {
        ADD_FAILURE() << e.what() << "\n" << m.text;
        continue;
      }
      const std::string kind = shlo::lowering_kind(c.op);
      ASSERT_TRUE(m.lowered_ops.count(c.op)) << "the case does not use op " << c.op;
      EXPECT_EQ(m.lowered_ops.at(c.op), kind);
    }
  }
}

TEST(StablehloOps, HighestPrecisionMarksEveryProduct) {
  for (const auto& c : test::op_cases()) {
    if (c.op != "matmul" && c.op != "conv" && c.op != "conv_input_grad" && c.op != "conv_weight_grad") continue;
    SCOPED_TRACE(c.label);
    const ir::Graph g = test::case_graph(c);
    const std::string plain = shlo::export_graph(g).text;
    const std::string highest = shlo::export_graph(g, {.precision = shlo::Precision::Highest}).text;
    EXPECT_EQ(plain.find("HIGHEST"), std::string::npos);
    size_t products = 0, marked = 0;
    for (size_t at = highest.find("stablehlo.dot_general"); at != std::string::npos;
         at = highest.find("stablehlo.dot_general", at + 1)) {
      ++products;
      marked += highest.find("precision = [HIGHEST, HIGHEST]", at) < highest.find('\n', at);
    }
    for (size_t at = highest.find("stablehlo.convolution"); at != std::string::npos;
         at = highest.find("stablehlo.convolution", at + 1)) {
      ++products;
      marked += highest.find("#stablehlo<precision HIGHEST>", at) < highest.find('\n', at);
    }
    EXPECT_GT(products, 0u);
    EXPECT_EQ(marked, products);
  }
}

// Prints which ops lower directly and which through their decomposition (for the docs).
TEST(StablehloOps, CoverageSummary) {
  std::vector<std::string> direct, decomposed;
  for (const std::string& op : ir::OpRegistry::instance().names()) {
    (shlo::lowering_kind(op) == "decomposed" ? decomposed : direct).push_back(op);
  }
  std::cout << direct.size() << " ops lower directly, " << decomposed.size() << " through decompositions:";
  for (const auto& op : decomposed) std::cout << " " << op;
  std::cout << "\n";
  EXPECT_EQ(direct.size() + decomposed.size(), ir::OpRegistry::instance().names().size());
}

// TESSERA_STABLEHLO_DUMP=DIR writes every op case (and the proof programs, at small sizes) as export
// bundles with Tessera's outputs, for tools/xla/check_ops.py.
TEST(ToolStablehlo, DumpBundlesForXla) {
  const char* dir = std::getenv("TESSERA_STABLEHLO_DUMP");
  if (!dir) GTEST_SKIP() << "set TESSERA_STABLEHLO_DUMP=DIR to write the op bundles";
  for (const auto& c : test::op_cases()) {
    const ir::Graph g = test::case_graph(c);
    const shlo::Module m = shlo::export_graph(g, {.precision = shlo::Precision::Highest});
    const std::vector<Array> expected = backends::reference_backend().compile(g)->run(c.inputs);
    shlo::write_bundle(dir, {.name = c.label,
                             .module = &m,
                             .inputs = c.inputs,
                             .expected = expected,
                             .info = {{"op", shlo::json_string(c.op)}}});
  }
}
