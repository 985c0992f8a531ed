// ToolOnnxOpCases.Dump (run on request, not by ctest): writes every exportable op case as a
// `tessera export onnx`-style bundle (model, inputs, reference outputs, manifest) into
// $TESSERA_ONNX_DUMP, for tools/onnx_export/run_ort.js to run in ONNX Runtime:
//   TESSERA_ONNX_DUMP=/tmp/cases build/test_onnx_export --gtest_filter='Tool*'
//   for m in /tmp/cases/*.json; do NODE_PATH=build/ort/node_modules node tools/onnx_export/run_ort.js $m; done
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "stablehlo/op_cases.h"
#include "tessera/backends/backend.h"
#include "tessera/io/npy.h"
#include "tessera/io/onnx/onnx_export.h"

using namespace tessera;

TEST(ToolOnnxOpCases, Dump) {
  const char* dir = std::getenv("TESSERA_ONNX_DUMP");
  if (!dir) GTEST_SKIP() << "set TESSERA_ONNX_DUMP to a folder";
  std::filesystem::create_directories(dir);
  backends::set_default_backend(backends::reference_backend());
  int written = 0;
  for (const test::OpCase& c : test::op_cases()) {
    const ir::Graph g = test::case_graph(c);
    io::onnx::OnnxExport e;
    try {
      e = io::onnx::export_onnx_model(g);
    } catch (const Error&) {
      continue;  // the ops without an ONNX form (test_onnx_export.cpp lists them)
    }
    const std::string stem = std::string(dir) + "/" + c.label;
    io::onnx::write_onnx(e, stem + ".onnx");
    const std::vector<Array> want = backends::reference_backend().compile(g)->run(c.inputs);
    auto entry = [](const std::string& name, const std::string& file) {
      return "{\"name\": \"" + name + "\", \"file\": \"" + file + "\"}";
    };
    std::string inputs, outputs;
    for (size_t i = 0; i < c.inputs.size(); ++i) {
      const std::string file = c.label + ".input_" + std::to_string(i) + ".npy";
      io::save_npy(std::string(dir) + "/" + file, c.inputs[i]);
      inputs += (i ? ", " : "") + entry(e.input_names[i], file);
    }
    for (size_t i = 0; i < want.size(); ++i) {
      const std::string file = c.label + ".expected_" + std::to_string(i) + ".npy";
      io::save_npy(std::string(dir) + "/" + file, want[i]);
      outputs += (i ? ", " : "") + entry(e.output_names[i], file);
    }
    std::ofstream(stem + ".json") << "{\"model\": \"" << c.label << ".onnx\", \"inputs\": [" << inputs
                                  << "], \"outputs\": [" << outputs << "]}\n";
    ++written;
  }
  std::cout << written << " op cases written to " << dir << "\n";
}
