// `tessera train --dataset csv|image-folder --data PATH` on small files the tests write, `tessera eval`
// on what it trained, and the errors for bad data (naming the file, line and column, or the folder and
// image).
#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "tessera/data/image_folder.h"
#include "tessera/train/checkpoint.h"
#include "train_helpers.h"

using namespace tessera;
using namespace tessera::test;

namespace {

// Two well-separated classes in two features: label = x0 + x1 > 0.
std::string separable_csv(int rows) {
  std::string csv = "x0,x1,label\n";
  for (int i = 0; i < rows; ++i) {
    const double a = (i % 7) - 3.0 + 0.25, b = ((i * 3) % 5) - 2.0 + 0.5;
    csv += fmt::format("{},{},{}\n", a, b, a + b > 0 ? 1 : 0);
  }
  return csv;
}

// root/<class>/<n>.png, 6x5 grey images: bright for "light", dark for "dark".
void write_image_folder(const std::filesystem::path& root, int per_class) {
  for (const auto& [name, level] : {std::pair<std::string, float>{"dark", 0.1f}, {"light", 0.9f}}) {
    std::filesystem::create_directories(root / name);
    for (int i = 0; i < per_class; ++i) {
      Array image = Array::full(DType::f32, {1, 5, 6}, level + 0.01 * i);
      data::write_png((root / name / (std::to_string(i) + ".png")).string(), image);
    }
  }
}

}  // namespace

TEST_F(CliTest, TrainOnACsvFileThenEvaluateIt) {
  write_file(path("data.csv"), separable_csv(60));
  const std::string out = path("run").string();
  const CliResult r = run("train --dataset csv --data " + shell_quote(path("data.csv").string()) +
                          " --epochs 3 --batch-size 8 --lr 0.01 --json --quiet --out " + shell_quote(out));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const nlohmann::json j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j.at("dataset").get<std::string>(), "csv");
  EXPECT_GE(j.at("test_accuracy").get<double>(), 0.75);  // 12 held-out rows of an easy problem
  const auto meta = train::read_checkpoint_metadata(out + "/checkpoint.safetensors");
  EXPECT_EQ(meta.at("input_shape"), "2");
  EXPECT_EQ(meta.at("classes"), "[\"0\",\"1\"]");
  EXPECT_EQ(meta.at("dataset"), "csv");

  // eval reads the kind of data from the checkpoint; --data names the file.
  const CliResult e = run("eval --checkpoint " + shell_quote(out + "/checkpoint.safetensors") + " --data " +
                          shell_quote(path("data.csv").string()) + " --json --quiet");
  ASSERT_EQ(e.exit_code, 0) << e.err;
  const nlohmann::json ej = nlohmann::json::parse(e.out);
  EXPECT_EQ(ej.at("examples").get<int64_t>(), 60);
  EXPECT_TRUE(std::filesystem::exists(out + "/confusion.png"));

  // A table with another number of features does not fit the model.
  write_file(path("wide.csv"), "a,b,c,label\n1,2,3,0\n4,5,6,1\n");
  const CliResult wide = run("eval --checkpoint " + shell_quote(out + "/checkpoint.safetensors") + " --data " +
                             shell_quote(path("wide.csv").string()) + " --quiet");
  EXPECT_EQ(wide.exit_code, 1) << wide.err;
  EXPECT_TRUE(contains(wide.err, "wide.csv")) << wide.err;
  EXPECT_TRUE(contains(wide.err, "[2]")) << wide.err;
  EXPECT_TRUE(contains(wide.err, "[3]")) << wide.err;
}

TEST_F(CliTest, BadCsvDataNamesTheFileLineAndColumn) {
  const std::vector<std::tuple<std::string, std::string, std::vector<std::string>>> cases{
      {"word.csv", "x0,x1,label\n1,2,0\n3,abc,1\n", {"word.csv':3", "x1", "'abc'"}},
      {"ragged.csv", "x0,x1,label\n1,2,0\n3,1\n", {"ragged.csv':3", "expected 3 cells"}},
      {"negative.csv", "x0,x1,label\n1,2,0\n3,4,1\n5,6,-1\n", {"negative.csv:4", "label", "-1", "class index"}},
      {"fraction.csv", "x0,x1,label\n1,2,0.5\n", {"fraction.csv:2", "label", "0.5"}},
      {"header.csv", "x0,x1,label\n", {"header.csv", "no rows"}},
  };
  for (const auto& [name, text, parts] : cases) {
    write_file(path(name), text);
    const CliResult r = run("train --dataset csv --quiet --data " + shell_quote(path(name).string()));
    EXPECT_EQ(r.exit_code, 1) << name << ": " << r.err;
    EXPECT_EQ(count_lines(r.err), 1) << name << ": " << r.err;
    for (const std::string& part : parts) EXPECT_TRUE(contains(r.err, part)) << name << ": " << part << " in " << r.err;
  }
  const CliResult missing = run("train --dataset csv --quiet --data " + shell_quote(path("absent.csv").string()));
  EXPECT_EQ(missing.exit_code, 1) << missing.err;
  EXPECT_TRUE(contains(missing.err, "absent.csv")) << missing.err;
  write_file(path("good.csv"), separable_csv(10));
  const CliResult label = run("train --dataset csv --quiet --label-column kind --data " +
                              shell_quote(path("good.csv").string()));
  EXPECT_EQ(label.exit_code, 1) << label.err;
  EXPECT_TRUE(contains(label.err, "no column named 'kind'")) << label.err;
  const CliResult no_data = run("train --dataset csv --quiet");
  EXPECT_EQ(no_data.exit_code, 1) << no_data.err;
  EXPECT_TRUE(contains(no_data.err, "--data")) << no_data.err;
}

TEST_F(CliTest, TrainOnAnImageFolderThenEvaluateIt) {
  write_image_folder(path("images"), 10);
  const std::string out = path("run").string();
  const CliResult r = run("train --dataset image-folder --data " + shell_quote(path("images").string()) +
                          " --epochs 2 --batch-size 4 --json --quiet --out " + shell_quote(out));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto meta = train::read_checkpoint_metadata(out + "/checkpoint.safetensors");
  EXPECT_EQ(meta.at("input_shape"), "1,5,6");
  EXPECT_EQ(meta.at("classes"), "[\"dark\",\"light\"]");
  const CliResult e = run("eval --checkpoint " + shell_quote(out + "/checkpoint.safetensors") +
                          " --dataset image-folder --data " + shell_quote(path("images").string()));
  ASSERT_EQ(e.exit_code, 0) << e.err;
  EXPECT_TRUE(contains(e.out, "20 examples")) << e.out;
  EXPECT_TRUE(contains(e.out, "dark")) << e.out;
  EXPECT_TRUE(contains(e.out, "light")) << e.out;
  EXPECT_TRUE(contains(e.out, "confusion matrix")) << e.out;
  // The cnn takes 28x28 images only, and says so.
  const CliResult cnn = run("train --model cnn --dataset image-folder --quiet --data " +
                            shell_quote(path("images").string()));
  EXPECT_EQ(cnn.exit_code, 1) << cnn.err;
  EXPECT_TRUE(contains(cnn.err, "1x28x28")) << cnn.err;
  EXPECT_TRUE(contains(cnn.err, "[1, 5, 6]")) << cnn.err;
}

TEST_F(CliTest, BadImageFoldersNameTheFolderAndImage) {
  write_image_folder(path("broken"), 5);
  write_file(path("broken/light/bad.png"), "not a png");
  const CliResult r = run("train --dataset image-folder --quiet --data " + shell_quote(path("broken").string()));
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_TRUE(contains(r.err, "bad.png")) << r.err;

  write_image_folder(path("mixed"), 5);
  data::write_png(path("mixed/dark/big.png").string(), Array::full(DType::f32, {1, 9, 9}, 0.5));
  const CliResult m = run("train --dataset image-folder --quiet --data " + shell_quote(path("mixed").string()));
  EXPECT_EQ(m.exit_code, 1) << m.err;
  EXPECT_TRUE(contains(m.err, "big.png")) << m.err;

  const CliResult missing = run("train --dataset image-folder --quiet --data " + shell_quote(path("nope").string()));
  EXPECT_EQ(missing.exit_code, 1) << missing.err;
  EXPECT_TRUE(contains(missing.err, "nope")) << missing.err;
  EXPECT_TRUE(contains(missing.err, "folder")) << missing.err;

  write_image_folder(path("train"), 5);
  std::filesystem::create_directories(path("test/other"));
  data::write_png(path("test/other/0.png").string(), Array::full(DType::f32, {1, 5, 6}, 0.5));
  const CliResult classes = run("train --dataset image-folder --quiet --data " + shell_quote(path("train").string()) +
                                " --test-data " + shell_quote(path("test").string()));
  EXPECT_EQ(classes.exit_code, 1) << classes.err;
  EXPECT_TRUE(contains(classes.err, "other")) << classes.err;
  EXPECT_TRUE(contains(classes.err, "dark, light")) << classes.err;
}

TEST_F(CliTest, DatasetFlagsKeepUsageErrors) {
  const CliResult r = run("train --dataset cifar");
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_TRUE(contains(r.err, "--dataset")) << r.err;
  const CliResult typo = run("train --dataset csv --dat x.csv");
  EXPECT_EQ(typo.exit_code, 2) << typo.err;
  EXPECT_TRUE(contains(typo.err, "did you mean '--data'")) << typo.err;
  const CliResult typo2 = run("train --test-dta x.csv");
  EXPECT_TRUE(contains(typo2.err, "did you mean '--test-data'")) << typo2.err;
  write_file(path("x.safetensors"), "x");
  const CliResult eval_typo = run("eval --checkpoint x.safetensors --labl-column y");
  EXPECT_EQ(eval_typo.exit_code, 2) << eval_typo.err;
  EXPECT_TRUE(contains(eval_typo.err, "did you mean '--label-column'")) << eval_typo.err;
  EXPECT_TRUE(contains(eval_typo.err, "tessera eval --help")) << eval_typo.err;
}
