// `tessera export stablehlo`: writes the module, its inputs, Tessera's outputs and a manifest; the
// module passes the checker and the files agree with each other; usage errors exit with code 2.
#include <filesystem>

#include "cli/cli_runner.h"
#include "tessera/io/npy.h"
#include "tessera/io/stablehlo/checker.h"

using namespace tessera;
using tessera::test::CliTest;
using tessera::test::read_file;
using tessera::test::shell_quote;

TEST_F(CliTest, ExportStablehloWritesABundle) {
  const std::string out = path("exports").string();
  const test::CliResult r =
      run("export stablehlo --model mlp --batch-size 2 --precision highest --out " + shell_quote(out));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("wrote"), std::string::npos) << r.err;
  const std::string text = read_file(path("exports/mlp.mlir"));
  const io::stablehlo::CheckedModule m = io::stablehlo::check_module(text);
  ASSERT_EQ(m.argument_types.size(), 9u);  // four layers' weight and bias, then x
  EXPECT_EQ(m.argument_types.back(), "tensor<2x784xf32>");
  EXPECT_EQ(m.result_types, std::vector<std::string>{"tensor<2x10xf32>"});
  EXPECT_NE(text.find("precision = [HIGHEST, HIGHEST]"), std::string::npos);
  for (int i = 0; i < 9; ++i) {
    const Array a = io::load_npy(path("exports/mlp.input_" + std::to_string(i) + ".npy").string());
    EXPECT_EQ(
        "tensor<" +
            [&] {
              std::string s;
              for (int64_t d : a.shape()) s += std::to_string(d) + "x";
              return s;
            }() +
            "f32>",
        m.argument_types[static_cast<size_t>(i)]);
  }
  const Array logits = io::load_npy(path("exports/mlp.expected_0.npy").string());
  EXPECT_EQ(logits.shape(), (Shape{2, 10}));
  const std::string manifest = read_file(path("exports/mlp.json"));
  EXPECT_NE(manifest.find("\"batch_size\": 2"), std::string::npos) << manifest;
  EXPECT_NE(manifest.find("\"name\": \"1.weight\""), std::string::npos) << manifest;
  EXPECT_NE(manifest.find("\"name\": \"logits\""), std::string::npos) << manifest;
}

TEST_F(CliTest, ExportStablehloTrainStepNamesItsFiles) {
  const std::string out = path("step").string();
  const test::CliResult r =
      run("export stablehlo --model cnn --batch-size 2 --train-step --quiet --out " + shell_quote(out));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(r.err.empty()) << r.err;
  const io::stablehlo::CheckedModule m = io::stablehlo::check_module(read_file(path("step/cnn_train_step.mlir")));
  EXPECT_EQ(m.result_types.front(), "tensor<f32>");  // the loss
  EXPECT_TRUE(std::filesystem::exists(path("step/cnn_train_step.expected_0.npy")));
  EXPECT_TRUE(std::filesystem::exists(path("step/cnn_train_step.json")));
}

TEST_F(CliTest, ExportStablehloOfAnIrFile) {
  test::write_file(path("g.ir"), "");
  const test::CliResult bad = run("export stablehlo --graph " + shell_quote(path("g.ir").string()) + " --out out");
  EXPECT_EQ(bad.exit_code, 1) << bad.err;
  EXPECT_NE(bad.err.find("tessera: error:"), std::string::npos) << bad.err;
}

TEST_F(CliTest, ExportStablehloUsageErrors) {
  EXPECT_EQ(run("export stablehlo --model resnet --out x").exit_code, 2);
  EXPECT_EQ(run("export stablehlo --model mlp").exit_code, 2);  // --out is required
  EXPECT_EQ(run("export stablehlo --model mlp --batch-size 0 --out x").exit_code, 2);
  EXPECT_EQ(run("export stablehlo --model mlp --precision float --out x").exit_code, 2);
  EXPECT_EQ(run("export").exit_code, 2);
  const test::CliResult help = run("export stablehlo --help");
  EXPECT_EQ(help.exit_code, 0);
  EXPECT_NE(help.out.find("--train-step"), std::string::npos) << help.out;
}
