// tessera export onnx: the same programs as `export stablehlo` (io/stablehlo/programs.h) as an ONNX
// model (io/onnx/onnx_export.h). A forward model keeps its weights inside (initializers) and takes x;
// a training step takes everything (parameters, Adam's moments, step, x, y) since each step feeds the
// next. Beside the model go its example inputs, Tessera's outputs on the reference backend and a JSON
// manifest, which tools/onnx_export/run_ort.mjs reads to run the model in ONNX Runtime and compare.
#include "export_onnx.h"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <iostream>
#include <memory>

#include "export_checkpoint.h"
#include "file_io.h"
#include "tessera/backends/backend.h"
#include "tessera/io/atomic_file.h"
#include "tessera/io/npy.h"
#include "tessera/io/onnx/onnx_export.h"
#include "tessera/io/stablehlo/bundle.h"
#include "tessera/io/stablehlo/programs.h"
#include "usage_errors.h"

namespace tessera::cli {

namespace {

struct OnnxCli {
  io::stablehlo::ProgramOptions program;
  std::string graph_file;
  std::string checkpoint;
  std::string out_dir;
  std::string name;
  int64_t external_data_bytes = -1;
  bool weights_as_inputs = false;
  bool no_expected = false;
  bool quiet = false;
};

std::string json_list(const std::vector<std::string>& items) {
  std::string s = "[";
  for (size_t i = 0; i < items.size(); ++i) s += (i ? ", " : "") + items[i];
  return s + "]";
}

std::string json_tensor(const std::string& name, const ir::TensorType& type, const std::string& file) {
  std::vector<std::string> dims;
  for (int64_t d : type.shape) dims.push_back(std::to_string(d));
  return fmt::format("{{\"name\": {}, \"dtype\": \"{}\", \"shape\": {}, \"file\": {}}}", io::stablehlo::json_string(name),
                     dtype_name(type.dtype), json_list(dims), file.empty() ? "null" : io::stablehlo::json_string(file));
}

int run_onnx(const OnnxCli& cli) {
  namespace shlo = io::stablehlo;
  namespace onnx = io::onnx;
  backends::set_default_backend(backends::reference_backend());
  std::error_code ec;
  std::filesystem::create_directories(cli.out_dir, ec);
  TESSERA_CHECK(!ec, "export: cannot create folder '{}': {}", cli.out_dir, ec.message());
  onnx::ExportOptions options;
  options.external_data_bytes = cli.external_data_bytes;

  if (!cli.graph_file.empty()) {
    const ir::Graph graph = ir::parse_graph(read_text_file(cli.graph_file));
    const std::string path = cli.out_dir + "/" + (cli.name.empty() ? graph.name() : cli.name) + ".onnx";
    onnx::export_onnx(graph, path, options);
    if (!cli.quiet) std::cerr << fmt::format("wrote {}\n", path);
    return kExitOk;
  }

  shlo::ProgramOptions program_options = cli.program;
  if (!cli.checkpoint.empty()) program_options.model = checkpoint_model(cli.checkpoint);
  shlo::Program program = shlo::build_program(program_options);
  if (!cli.checkpoint.empty()) use_checkpoint_weights(program, cli.checkpoint, program_options.train_step);
  // ONNX names each value once: an output named like an input (the step count) becomes "new.<name>",
  // as the updated parameters are named.
  for (const std::string& n : program.output_names) {
    const bool clash = std::find(program.input_names.begin(), program.input_names.end(), n) != program.input_names.end();
    options.output_names.push_back(clash ? "new." + n : n);
  }
  std::vector<Array> model_inputs;
  for (size_t i = 0; i < program.input_names.size(); ++i) {
    const std::string& n = program.input_names[i];
    const bool data = n == "x" || n == "y";
    if (!program_options.train_step && !cli.weights_as_inputs && !data) {
      options.initializers.emplace(n, program.inputs[i]);
    } else {
      model_inputs.push_back(program.inputs[i]);
    }
  }
  const std::string stem = cli.name.empty() ? program.name : cli.name;
  const std::string path = cli.out_dir + "/" + stem + ".onnx";
  if (options.external_data_bytes >= 0) options.external_data_file = stem + ".onnx.data";
  // Everything is computed before anything is written.
  const onnx::OnnxExport exported = onnx::export_onnx_model(program.graph, options);
  const std::vector<Array> expected = cli.no_expected ? std::vector<Array>{} : shlo::reference_outputs(program);

  std::vector<std::string> inputs_json, outputs_json;
  for (size_t i = 0; i < model_inputs.size(); ++i) {
    const std::string file = fmt::format("{}.input_{}.npy", stem, i);
    io::save_npy(cli.out_dir + "/" + file, model_inputs[i]);
    inputs_json.push_back(json_tensor(exported.input_names[i], exported.input_types[i], file));
  }
  for (size_t i = 0; i < exported.output_names.size(); ++i) {
    std::string file;
    if (!expected.empty()) {
      file = fmt::format("{}.expected_{}.npy", stem, i);
      io::save_npy(cli.out_dir + "/" + file, expected[i]);
    }
    outputs_json.push_back(json_tensor(exported.output_names[i], exported.output_types[i], file));
  }
  const std::vector<std::string> written = onnx::write_onnx(exported, path);
  std::string manifest = "{\n";
  manifest += fmt::format("  \"model\": {},\n", shlo::json_string(stem + ".onnx"));
  manifest += fmt::format("  \"opset\": {},\n", onnx::kOnnxExportOpset);
  manifest += fmt::format("  \"program\": {},\n", shlo::json_string(program_options.model));
  manifest += fmt::format("  \"train_step\": {},\n", program_options.train_step ? "true" : "false");
  manifest += fmt::format("  \"batch_size\": {},\n", program_options.batch_size);
  manifest += fmt::format("  \"weights\": {},\n",
                          shlo::json_string(cli.checkpoint.empty() ? std::string("seeded") : cli.checkpoint));
  manifest += fmt::format("  \"expected_from\": {},\n", cli.no_expected ? "null" : "\"reference backend\"");
  manifest += fmt::format("  \"inputs\": [\n    {}\n  ],\n", fmt::join(inputs_json, ",\n    "));
  manifest += fmt::format("  \"outputs\": [\n    {}\n  ]\n}}\n", fmt::join(outputs_json, ",\n    "));
  const std::string manifest_path = cli.out_dir + "/" + stem + ".json";
  io::write_file_atomic(manifest_path, manifest);
  if (!cli.quiet) {
    std::cerr << fmt::format("wrote {} ({} inputs, {} initializers, {} outputs) and {} more files to {}\n",
                             written.back(), exported.input_names.size(), exported.initializer_names.size(),
                             exported.output_names.size(),
                             model_inputs.size() + expected.size() + written.size(), cli.out_dir);
  }
  return kExitOk;
}

}  // namespace

Command add_export_onnx_subcommand(CLI::App& export_app) {
  auto cli = std::make_shared<OnnxCli>();
  CLI::App* app = export_app.add_subcommand(
      "onnx", "Write an ONNX model (opset 17) with example inputs and Tessera's outputs as .npy files");
  CLI::Option* model = app->add_option("--model", cli->program.model, "Built-in model (default: the checkpoint's)")
                           ->check(CLI::IsMember({"mlp", "cnn", "transformer"}))
                           ->capture_default_str();
  app->add_option("--checkpoint", cli->checkpoint,
                  "Export the weights of this `tessera train` checkpoint (with --train-step also its Adam moments "
                  "and step count) instead of seeded ones")
      ->check(CLI::ExistingFile);
  app->add_option("--batch-size", cli->program.batch_size, "Batch size of the model's inputs")
      ->check(CLI::Range(int64_t{1}, int64_t{1} << 20))
      ->capture_default_str();
  app->add_flag("--train-step", cli->program.train_step,
                "Export one whole training step (forward, gradients, Adam update) instead of the forward pass");
  app->add_option("--seed", cli->program.seed, "Seed of the parameters and example inputs")->capture_default_str();
  app->add_option("--graph", cli->graph_file, "Export this IR text file instead of a model; writes only the .onnx")
      ->check(CLI::ExistingFile);
  app->add_option("--name", cli->name, "File name stem (default: the model, or MODEL_train_step)");
  app->add_option("--external-data", cli->external_data_bytes,
                  "Store initializers of at least this many bytes in NAME.onnx.data beside the model")
      ->check(CLI::Range(int64_t{0}, int64_t{1} << 40));
  app->add_flag("--weights-as-inputs", cli->weights_as_inputs,
                "Make a forward model's parameters inputs instead of initializers");
  app->add_flag("--no-expected", cli->no_expected, "Skip computing Tessera's outputs (the reference backend)");
  app->add_flag("--quiet", cli->quiet, "Print nothing on success");
  app->add_option("--out", cli->out_dir, "Output folder")->required()->check(output_folder());
  return {app, [cli, model] {
            TESSERA_CHECK(cli->checkpoint.empty() || cli->graph_file.empty(),
                          "export: --checkpoint gives a model's weights; --graph exports a graph file as it is");
            if (!cli->checkpoint.empty() && model->count() > 0) {
              const std::string trained = checkpoint_model(cli->checkpoint);
              TESSERA_CHECK(trained == cli->program.model,
                            "export: --model {} but checkpoint {} holds a {} (leave --model out to export the "
                            "checkpoint's)",
                            cli->program.model, cli->checkpoint, trained);
            }
            return run_onnx(*cli);
          }};
}

}  // namespace tessera::cli
