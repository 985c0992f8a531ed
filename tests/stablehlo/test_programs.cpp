// Whole programs: the built-in models' forward passes and training steps export, pass the checker,
// and the training step's Adam update is the library's (compared against optim::Adam).
#include <map>

#include "tessera/io/stablehlo/checker.h"
#include "tessera/io/stablehlo/export.h"
#include "tessera/io/stablehlo/programs.h"
#include "test_util.h"

using namespace tessera;
namespace shlo = tessera::io::stablehlo;

namespace {

shlo::Program program(const std::string& model, bool train_step, int64_t batch = 2) {
  return shlo::build_program({.model = model, .batch_size = batch, .train_step = train_step, .seed = 3});
}

}  // namespace

TEST(StablehloPrograms, ForwardPassesExportAndCheck) {
  for (const std::string& model : shlo::program_models()) {
    SCOPED_TRACE(model);
    const shlo::Program p = program(model, false);
    const shlo::Module m = shlo::export_graph(p.graph, {.precision = shlo::Precision::Highest});
    const shlo::CheckedModule checked = shlo::check_exported(m);
    ASSERT_EQ(m.arguments.size(), p.inputs.size()) << "parameters are arguments, nothing is lifted";
    for (size_t i = 0; i < p.inputs.size(); ++i) EXPECT_EQ(m.arguments[i].name, p.input_names[i]);
    EXPECT_EQ(m.arguments.back().name, "x");
    EXPECT_EQ(m.results.size(), 1u);
    EXPECT_GT(checked.op_counts.count("stablehlo.dot_general"), 0u);
    if (model == "cnn") {
      EXPECT_GT(checked.op_counts.count("stablehlo.convolution"), 0u);
      EXPECT_GT(checked.op_counts.count("stablehlo.reduce_window"), 0u);
    }
    if (model == "transformer") {
      EXPECT_GT(checked.op_counts.count("chlo.erf"), 0u);
    }
  }
}

TEST(StablehloPrograms, TrainingStepsExportAndCheck) {
  for (const std::string& model : shlo::program_models()) {
    SCOPED_TRACE(model);
    const shlo::Program p = program(model, true);
    const shlo::Module m = shlo::export_graph(p.graph, {.precision = shlo::Precision::Highest});
    const shlo::CheckedModule checked = shlo::check_exported(m);
    const size_t np = (p.inputs.size() - 3) / 3;  // parameters, exp_avg, exp_avg_sq, step, x, y
    EXPECT_EQ(m.results.size(), 3 * np + 2);      // loss, three per parameter, step
    EXPECT_EQ(p.output_names.size(), m.results.size());
    for (size_t i = 0; i < np; ++i) EXPECT_EQ(m.results[1 + i], m.arguments[i].type) << "new parameter " << i;
    if (model == "cnn") {
      // The backward pass of conv and max_pool lowers too.
      EXPECT_GT(checked.op_counts.count("stablehlo.scatter"), 0u);
      EXPECT_GE(checked.op_counts.at("stablehlo.convolution"), 4);
    }
  }
}

TEST(StablehloPrograms, TrainingStepMatchesTheAdamOptimizer) {
  // One traced step, evaluated on the reference backend, against optim::Adam stepping the same model.
  const shlo::Program p = program("mlp", true, 4);
  const std::vector<Array> out = shlo::reference_outputs(p);
  const size_t np = (p.inputs.size() - 3) / 3;

  ops::Generator gen(3);
  auto model = models::mlp(gen);
  auto params = model->named_parameters();
  ASSERT_EQ(params.size(), np);
  for (size_t i = 0; i < np; ++i) {
    EXPECT_EQ(params[i].second->to_vector<float>(), p.inputs[i].to_vector<float>()) << "same initial parameters";
  }
  const Tensor x = Tensor::from_array(p.inputs[3 * np + 1]), y = Tensor::from_array(p.inputs[3 * np + 2]);
  // The example's optimiser state (moments and step count) loaded into a real Adam.
  optim::Adam adam(*model, optim::AdamOptions{});
  std::map<std::string, Array> state;
  for (size_t i = 0; i < np; ++i) {
    state[params[i].first + ".exp_avg"] = p.inputs[np + i];
    state[params[i].first + ".exp_avg_sq"] = p.inputs[2 * np + i];
  }
  const double steps_done = p.inputs[3 * np].item();
  adam.load_state_dict(state, {{"optimizer", "adam"}, {"step", std::to_string(static_cast<int64_t>(steps_done))}});
  const Tensor loss = ops::cross_entropy((*model)(x), y);
  EXPECT_NEAR(loss.item(), out[0].item(), 1e-6 * std::abs(loss.item()));
  loss.backward();
  adam.step();
  for (size_t i = 0; i < np; ++i) {
    const std::vector<double> want = params[i].second->to_vector<double>(), got = out[1 + i].to_vector<double>();
    ASSERT_EQ(want.size(), got.size());
    double worst = 0;
    for (size_t k = 0; k < want.size(); ++k) worst = std::max(worst, std::abs(want[k] - got[k]));
    EXPECT_LT(worst, 1e-6) << "parameter " << params[i].first;
  }
  EXPECT_EQ(out.back().item(), steps_done + 1.0) << "the step count advances";
  for (size_t i = 0; i < np; ++i) {
    EXPECT_GT(p.inputs[2 * np + i].to_vector<double>()[0], 0.0) << "the example state is warm";
  }
}

TEST(StablehloPrograms, UnknownModelAndBadBatchAreErrors) {
  EXPECT_TESSERA_ERROR(shlo::build_program({.model = "resnet"}), "unknown model 'resnet'", "mlp, cnn, transformer");
  EXPECT_TESSERA_ERROR(shlo::build_program({.model = "mlp", .batch_size = 0}), "batch size");
}
