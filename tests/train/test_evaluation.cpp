// Classifier evaluation: the compiled path (one graph per batch shape, on the given backend) agrees with
// eager evaluation, reports progress with a rate and an ETA, and derives per-class figures and the
// confusion matrix correctly.
#include <cstdio>

#include "tessera/backends/backend.h"
#include "tessera/models/vision.h"
#include "tessera/train/evaluation.h"
#include "train_helpers.h"

using namespace tessera;
using namespace tessera::test;

namespace {

data::TensorDataset random_examples(int64_t n, int64_t features, int64_t classes) {
  std::vector<int64_t> labels;
  for (int64_t i = 0; i < n; ++i) labels.push_back((i * 7) % classes);
  return data::TensorDataset(random_array({n, features}, 11, -1, 1, DType::f32), Array::from_vector(labels, {n}));
}

std::string read_all(std::FILE* f) {
  std::rewind(f);
  std::string s;
  for (int c; (c = std::fgetc(f)) != EOF;) s += static_cast<char>(c);
  return s;
}

}  // namespace

TEST(Evaluation, CompiledMatchesEagerWithOneGraphPerBatchShape) {
  ops::Generator gen(5);
  auto model = models::mlp(gen, 6, 3);
  const data::TensorDataset examples = random_examples(10, 6, 3);
  const std::vector<std::string> classes{"a", "b", "c"};
  std::FILE* log = std::tmpfile();
  ASSERT_NE(log, nullptr);
  train::Evaluator evaluator(*model, classes, {.batch_size = 4, .backend = &backends::backend_by_name("cpu"),
                                               .progress = log, .label = "checking"});
  const train::Evaluation compiled = evaluator.run(examples);
  const train::Evaluation again = evaluator.run(examples);  // reuses the graphs it compiled
  const train::Evaluation eager =
      train::evaluate_classifier(*model, examples, classes, {.batch_size = 4, .compiled = false});
  EXPECT_EQ(compiled.compiled_graphs, 2u);  // batches of 4, 4 and 2
  EXPECT_EQ(again.compiled_graphs, 2u);
  EXPECT_EQ(eager.compiled_graphs, 0u);
  EXPECT_EQ(compiled.confusion, eager.confusion);
  EXPECT_EQ(compiled.accuracy, eager.accuracy);
  EXPECT_NEAR(compiled.mean_loss, eager.mean_loss, 1e-5 * std::abs(eager.mean_loss));
  int64_t total = 0;
  for (const auto& row : compiled.confusion) {
    for (int64_t v : row) total += v;
  }
  EXPECT_EQ(total, 10);
  const std::string progress = read_all(log);
  std::fclose(log);
  EXPECT_TRUE(contains(progress, "checking")) << progress;
  EXPECT_TRUE(contains(progress, "10/10")) << progress;
  EXPECT_TRUE(contains(progress, "/s")) << progress;
  EXPECT_TRUE(contains(progress, "eta")) << progress;
  EXPECT_TRUE(contains(progress, "accuracy")) << progress;
}

TEST(Evaluation, PerClassFiguresAndText) {
  train::Evaluation e;
  e.examples = 10;
  e.accuracy = 0.7;
  e.mean_loss = 0.5;
  e.classes = {"cat", "dog"};
  e.confusion = {{4, 1}, {2, 3}};  // rows: true class
  const std::vector<train::ClassFigures> f = e.per_class();
  ASSERT_EQ(f.size(), 2u);
  EXPECT_EQ(f[0].support, 5);
  EXPECT_EQ(f[0].predicted, 6);
  EXPECT_DOUBLE_EQ(f[0].precision, 4.0 / 6);
  EXPECT_DOUBLE_EQ(f[0].recall, 4.0 / 5);
  EXPECT_DOUBLE_EQ(f[0].f1, 2 * (4.0 / 6) * (4.0 / 5) / (4.0 / 6 + 4.0 / 5));
  EXPECT_DOUBLE_EQ(f[1].recall, 3.0 / 5);
  const std::string text = train::evaluation_text(e);
  EXPECT_TRUE(contains(text, "accuracy 70.00%")) << text;
  EXPECT_TRUE(contains(text, "precision")) << text;
  EXPECT_TRUE(contains(text, "confusion matrix")) << text;
  EXPECT_TRUE(contains(text, "cat")) << text;
}

TEST(Evaluation, LabelsOutsideTheModelsClassesAreNamed) {
  ops::Generator gen(5);
  auto model = models::mlp(gen, 6, 3);
  const data::TensorDataset examples = random_examples(10, 6, 5);  // labels up to 4
  EXPECT_TESSERA_ERROR(train::evaluate_classifier(*model, examples, {"a", "b", "c"}), "example 2", "label 4",
                       "3 classes");
}
