// ONNX export: every op case of the StableHLO suite (tests/stablehlo/op_cases.cpp) exports, imports
// back through Tessera's own ONNX importer and matches the reference backend; the ops without an ONNX
// form are listed; the built-in programs (forward and training step) round-trip; errors write nothing.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <set>
#include <unistd.h>

#include "stablehlo/op_cases.h"
#include "tessera/backends/backend.h"
#include "tessera/io/onnx/onnx_export.h"
#include "tessera/io/onnx/onnx_import.h"
#include "tessera/io/onnx/onnx_model.h"
#include "tessera/io/stablehlo/programs.h"
#include "tessera/ir/op_def.h"

using namespace tessera;
namespace onnx = tessera::io::onnx;
namespace shlo = tessera::io::stablehlo;

namespace {

// The registered ops with no ONNX form yet, each with why. A new op lands here only deliberately.
const std::map<std::string, std::string> kNoOnnxForm = {
    {"bernoulli", "Tessera's Philox stream has no ONNX counterpart (RandomUniform draws differ)"},
    {"normal", "Tessera's Philox stream has no ONNX counterpart"},
    {"permutation", "Tessera's Philox stream has no ONNX counterpart"},
    {"randint", "Tessera's Philox stream has no ONNX counterpart"},
    {"uniform", "Tessera's Philox stream has no ONNX counterpart"},
    {"dequantize", "GGML block formats (unpacking bit fields) are not lowered yet"},
};

// Ops that decompose, but into an op of kNoOnnxForm: the export fails naming that op.
const std::map<std::string, std::string> kBlockedDecomposition = {
    {"quantized_matmul", "dequantize"},
};

std::vector<Array> reference(const ir::Graph& g, const std::vector<Array>& inputs) {
  return backends::reference_backend().compile(g)->run(inputs);
}

// Export, parse back with Tessera's importer and run on the reference backend.
std::vector<Array> round_trip(const ir::Graph& g, const std::vector<Array>& inputs, const onnx::ExportOptions& o = {}) {
  const onnx::OnnxExport e = onnx::export_onnx_model(g, o);
  const onnx::OnnxModel model =
      onnx::parse_onnx_model(reinterpret_cast<const uint8_t*>(e.model.data()), e.model.size(), "exported model");
  std::vector<Array> model_inputs;
  for (size_t i = 0; i < g.inputs().size(); ++i) {
    const std::string name = g.inputs()[i].node()->attrs().get_string("name");
    if (!o.initializers.count(name)) model_inputs.push_back(inputs[i]);
  }
  const onnx::ImportedGraph imported = onnx::import_onnx_for(model, model_inputs);
  return reference(imported.graph, onnx::graph_inputs(imported, model_inputs));
}

// Within rtol of the expected value (plus a small atol for values near zero), NaNs where expected.
::testing::AssertionResult close(const Array& got, const Array& want, double rtol, double atol) {
  if (got.dtype() != want.dtype() || got.shape() != want.shape()) {
    return ::testing::AssertionFailure() << "type " << ir::type_str({got.dtype(), got.shape()}) << " vs "
                                         << ir::type_str({want.dtype(), want.shape()});
  }
  const std::vector<double> a = got.astype(DType::f64).contiguous().to_vector<double>();
  const std::vector<double> b = want.astype(DType::f64).contiguous().to_vector<double>();
  for (size_t i = 0; i < a.size(); ++i) {
    if (std::isnan(b[i]) && std::isnan(a[i])) continue;
    if (a[i] == b[i]) continue;
    if (!(std::fabs(a[i] - b[i]) <= atol + rtol * std::fabs(b[i]))) {
      return ::testing::AssertionFailure() << "element " << i << ": " << a[i] << " vs " << b[i];
    }
  }
  return ::testing::AssertionSuccess();
}

// A fresh folder, removed with everything in it at the end of the test.
struct TempDir {
  explicit TempDir(const std::string& stem) {
    dir = std::filesystem::temp_directory_path() / (stem + "_" + std::to_string(::getpid()));
    std::filesystem::remove_all(dir);
    std::filesystem::create_directories(dir);
  }
  ~TempDir() { std::filesystem::remove_all(dir); }
  std::string path() const { return dir.string(); }
  std::filesystem::path dir;
};

double tolerance_of(DType dt) {
  return dt == DType::f16 || dt == DType::bf16 ? 1e-2 : 1e-4;
}

}  // namespace

TEST(OnnxExportCoverage, OpsWithoutAnOnnxFormAreListed) {
  const std::vector<std::string> missing = onnx::ops_without_onnx_form();
  std::string listed;
  for (const std::string& op : missing) listed += " " + op;
  std::cout << "ops with no ONNX form yet (" << missing.size() << "):" << listed << "\n";
  std::vector<std::string> expected;
  for (const auto& [op, why] : kNoOnnxForm) expected.push_back(op);
  EXPECT_EQ(missing, expected) << "update kNoOnnxForm (with a reason) when an op gains or lacks an ONNX form";
  for (const std::string& op : ir::OpRegistry::instance().names()) {
    EXPECT_EQ(onnx::onnx_lowering_kind(op).empty(), kNoOnnxForm.count(op) == 1) << op;
  }
}

TEST(OnnxExportOps, EveryOpCaseRoundTripsThroughTheImporter) {
  backends::set_default_backend(backends::reference_backend());
  int passed = 0;
  for (const test::OpCase& c : test::op_cases()) {
    SCOPED_TRACE(c.label);
    const ir::Graph g = test::case_graph(c);
    if (kNoOnnxForm.count(c.op) || kBlockedDecomposition.count(c.op)) {
      const std::string blocker = kNoOnnxForm.count(c.op) ? c.op : kBlockedDecomposition.at(c.op);
      try {
        onnx::export_onnx_model(g);
        ADD_FAILURE() << "exported an op listed without an ONNX form";
      } catch (const Error& e) {
        EXPECT_NE(std::string(e.what()).find("'" + blocker + "'"), std::string::npos) << e.what();
        EXPECT_NE(std::string(e.what()).find("no ONNX form"), std::string::npos) << e.what();
      }
      continue;
    }
    const std::vector<Array> want = reference(g, c.inputs);
    std::vector<Array> got;
    try {
      got = round_trip(g, c.inputs);
    } catch (const Error& e) {
      ADD_FAILURE() << e.what();
      continue;
    }
    ASSERT_EQ(got.size(), want.size());
    bool ok = true;
    for (size_t i = 0; i < got.size(); ++i) {
      const double tol = tolerance_of(want[i].dtype());
      const ::testing::AssertionResult r = close(got[i], want[i], tol, tol * 0.1);
      EXPECT_TRUE(r) << "output " << i;
      ok = ok && r;
    }
    passed += ok;
  }
  std::cout << passed << " op cases round-trip\n";
}

TEST(OnnxExportPrograms, ForwardAndTrainingStepsRoundTrip) {
  backends::set_default_backend(backends::reference_backend());
  for (const std::string model : {"mlp", "cnn", "transformer"}) {
    for (bool train : {false, true}) {
      SCOPED_TRACE(model + std::string(train ? " train step" : " forward"));
      const shlo::Program p = shlo::build_program({.model = model, .batch_size = 2, .train_step = train, .seed = 3});
      onnx::ExportOptions o;
      for (const std::string& n : p.output_names) o.output_names.push_back(n == "step" ? "new.step" : n);
      if (!train) {
        for (size_t i = 0; i + 1 < p.inputs.size(); ++i) o.initializers.emplace(p.input_names[i], p.inputs[i]);
      }
      const onnx::OnnxExport e = onnx::export_onnx_model(p.graph, o);
      EXPECT_EQ(e.output_names, o.output_names);
      EXPECT_EQ(e.input_names.size(), train ? p.inputs.size() : size_t{1});
      const std::vector<Array> want = shlo::reference_outputs(p);
      const std::vector<Array> got = round_trip(p.graph, p.inputs, o);
      ASSERT_EQ(got.size(), want.size());
      for (size_t i = 0; i < got.size(); ++i) EXPECT_TRUE(close(got[i], want[i], 1e-4, 1e-6)) << p.output_names[i];
    }
  }
}

TEST(OnnxExportFiles, ExternalDataIsWrittenBesideTheModelAndReadBack) {
  backends::set_default_backend(backends::reference_backend());
  const shlo::Program p = shlo::build_program({.model = "mlp", .batch_size = 2, .seed = 1});
  const TempDir dir("onnx_export");
  const std::string path = dir.path() + "/mlp.onnx";
  onnx::ExportOptions o;
  o.output_names = p.output_names;
  o.external_data_bytes = 1024;
  for (size_t i = 0; i + 1 < p.inputs.size(); ++i) o.initializers.emplace(p.input_names[i], p.inputs[i]);
  const onnx::OnnxExport e = onnx::export_onnx(p.graph, path, o);
  EXPECT_EQ(e.external_data_file, "mlp.onnx.data");
  ASSERT_TRUE(std::filesystem::exists(dir.path() + "/mlp.onnx.data"));
  EXPECT_GT(std::filesystem::file_size(dir.path() + "/mlp.onnx.data"), std::filesystem::file_size(path));
  const onnx::OnnxModel model = onnx::load_onnx_model(path);
  const onnx::ImportedGraph g = onnx::import_onnx_for(model, {p.inputs.back()});
  EXPECT_TRUE(close(reference(g.graph, {p.inputs.back()})[0], shlo::reference_outputs(p)[0], 1e-5, 1e-7));
}

TEST(OnnxExportErrors, AnOpWithoutAnOnnxFormFailsNamingItAndWritesNothing) {
  const ir::Value x = ir::make_input("x", {DType::f32, {4}});
  const ir::Value r = ir::make_node1("uniform", {}, ir::Attrs{{"shape", std::vector<int64_t>{4}}, {"seed", int64_t{1}}, {"offset", int64_t{0}},
                                                             {"low", 0.0}, {"high", 1.0}, {"dtype", DType::f32}});
  const ir::Graph g = ir::Graph::build({x}, {ir::make_node1("add", {x, r}, {})}, "noisy");
  const TempDir dir("onnx_export_err");
  const std::string path = dir.path() + "/noisy.onnx";
  try {
    onnx::export_onnx(g, path);
    FAIL() << "exported";
  } catch (const Error& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("op 'uniform'"), std::string::npos) << m;
    EXPECT_NE(m.find("node "), std::string::npos) << m;
  }
  EXPECT_FALSE(std::filesystem::exists(path));
  EXPECT_TRUE(std::filesystem::is_empty(dir.path()));
}

TEST(OnnxExportErrors, BadOptionsAreRefused) {
  const ir::Value x = ir::make_input("x", {DType::f32, {2}});
  const ir::Graph g = ir::Graph::build({x}, {ir::make_node1("exp", {x}, {})}, "g");
  onnx::ExportOptions o;
  o.initializers.emplace("w", Array::full(DType::f32, {2}, 1.0));
  EXPECT_THROW(onnx::export_onnx_model(g, o), Error);  // names no input
  o.initializers.clear();
  o.initializers.emplace("x", Array::full(DType::f32, {3}, 1.0));
  EXPECT_THROW(onnx::export_onnx_model(g, o), Error);  // wrong shape
  o.initializers.clear();
  o.output_names = {"x"};
  EXPECT_THROW(onnx::export_onnx_model(g, o), Error);  // output named like an input
  o.output_names = {};
  o.external_data_bytes = 0;
  o.external_data_file = "../elsewhere.data";
  EXPECT_THROW(onnx::export_onnx_model(g, o), Error);
}
