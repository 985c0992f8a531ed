// `tessera run` and `tessera inspect` on an ONNX model (the fuzz corpus's Gemm + Relu model: weights
// arange(8) as [2, 4], bias 1, transB): outputs written as .npy with the values the model defines.
#include <iostream>

#include "cli_runner.h"
#include "tessera/backends/backend.h"
#include "tessera/io/npy.h"

namespace tessera::test {
namespace {

const std::string kModel = std::string(TESSERA_SOURCE_DIR) + "/fuzz/corpus/onnx/valid_gemm_relu.onnx";

TEST_F(CliTest, RunWritesEachOnnxOutputAsNpy) {
  // x [3, 4]; z = relu(x @ w^T + 1) with w = [[0, 1, 2, 3], [4, 5, 6, 7]].
  io::save_npy(path("x.npy").string(), Array::from_vector<float>({1, 0, 0, 0, 0, 1, 0, 0, -1, -1, -1, -1}, {3, 4}));
  // Every backend available here: a GPU backend's outputs live in device memory until written.
  for (const std::string& backend : backends::backend_names()) {
    const backends::Backend* b = backends::find_backend(backend);
    if (!b->available()) {
      std::cout << "[ SKIPPED  ] --backend " << backend << ": " << b->status() << "\n";
      continue;
    }
    const CliResult r = run("run " + shell_quote(kModel) + " --inputs x.npy --out outs --backend " + backend);
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_NE(r.out.find("z: f32[3, 2]"), std::string::npos) << r.out;
    const Array z = io::load_npy(path("outs/z.npy").string());
    EXPECT_EQ(z.to_vector<float>(), (std::vector<float>{1, 5, 2, 6, 0, 0})) << backend;
  }
}

TEST_F(CliTest, RunRefusesInputsOfTheWrongShape) {
  io::save_npy(path("x.npy").string(), Array::zeros(DType::f32, {3, 5}));
  const CliResult r = run("run " + shell_quote(kModel) + " --inputs x.npy --out outs");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("input \"x\" dimension 1 is 5, the model declares 4"), std::string::npos) << r.err;
}

TEST_F(CliTest, InspectSummarisesAnOnnxModel) {
  const CliResult r = run("inspect " + shell_quote(kModel));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  for (const char* part : {"opsets: ai.onnx=13", "x", "FLOAT[3, 4]", "initializers: 2", "Gemm", "Relu"}) {
    EXPECT_NE(r.out.find(part), std::string::npos) << part << " not in:\n" << r.out;
  }
  const CliResult printed = run("inspect " + shell_quote(kModel) + " --print");
  ASSERT_EQ(printed.exit_code, 0) << printed.err;
  EXPECT_NE(printed.out.find("matmul"), std::string::npos) << printed.out;
}

}  // namespace
}  // namespace tessera::test
