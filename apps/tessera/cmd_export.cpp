// tessera export stablehlo: writes a built-in model's forward pass or training step (seeded weights, or
// a training checkpoint's with --checkpoint), or any graph in Tessera's IR text form, as a StableHLO
// module with its example inputs and Tessera's own outputs as .npy files and a JSON manifest, so that
// XLA, IREE or anyone else can run it and compare. `export onnx` lives in export_onnx.cpp.
#include <fmt/format.h>

#include <filesystem>
#include <iostream>
#include <map>
#include <memory>

#include "command.h"
#include "usage_errors.h"
#include "export_checkpoint.h"
#include "export_onnx.h"
#include "file_io.h"
#include "tessera/backends/backend.h"
#include "tessera/io/stablehlo/bundle.h"
#include "tessera/io/stablehlo/checker.h"
#include "tessera/io/stablehlo/export.h"
#include "tessera/io/stablehlo/programs.h"
#include "tessera/ir/graph.h"

namespace tessera::cli {

namespace {

struct ExportCli {
  io::stablehlo::ProgramOptions program;
  std::string graph_file;
  std::string checkpoint;   // export these trained weights instead of seeded ones
  bool model_given = false;
  std::string precision = "default";
  std::string out_dir;
  std::string name;
  int64_t max_inline = 1024;
  bool no_expected = false;
  bool quiet = false;
};

int run_stablehlo(const ExportCli& cli) {
  namespace shlo = io::stablehlo;
  // The export's expected outputs are Tessera's oracle: everything here runs on the reference backend.
  backends::set_default_backend(backends::reference_backend());
  const shlo::ExportOptions options{
      .precision = cli.precision == "highest" ? shlo::Precision::Highest : shlo::Precision::Default,
      .max_inline_elements = cli.max_inline};
  shlo::BundleContents bundle;
  std::map<std::string, std::string>& info = bundle.info;
  info["precision"] = shlo::json_string(cli.precision);
  shlo::Module module;
  if (!cli.graph_file.empty()) {
    const ir::Graph graph = ir::parse_graph(read_text_file(cli.graph_file));
    module = shlo::export_graph(graph, options);
    bundle.name = cli.name.empty() ? graph.name() : cli.name;
    info["graph"] = shlo::json_string(cli.graph_file);
    // Without example inputs, only the module (and the manifest of its signature) is written.
    shlo::check_exported(module);
    const std::string path = cli.out_dir + "/" + bundle.name + ".mlir";
    std::error_code ec;
    std::filesystem::create_directories(cli.out_dir, ec);
    TESSERA_CHECK(!ec, "export: cannot create folder '{}': {}", cli.out_dir, ec.message());
    write_file_atomic(path, module.text);
    if (!cli.quiet) std::cerr << fmt::format("wrote {}\n", path);
    return kExitOk;
  }
  shlo::ProgramOptions program_options = cli.program;
  if (!cli.checkpoint.empty()) {
    const std::string trained = checkpoint_model(cli.checkpoint);
    TESSERA_CHECK(!cli.model_given || trained == cli.program.model,
                  "export: --model {} but checkpoint {} holds a {} (leave --model out to export the checkpoint's)",
                  cli.program.model, cli.checkpoint, trained);
    program_options.model = trained;
  }
  shlo::Program program = shlo::build_program(program_options);
  if (!cli.checkpoint.empty()) use_checkpoint_weights(program, cli.checkpoint, program_options.train_step);
  module = shlo::export_graph(program.graph, options);
  shlo::check_exported(module);
  bundle.name = cli.name.empty() ? program.name : cli.name;
  bundle.module = &module;
  bundle.inputs = program.inputs;
  bundle.result_names = program.output_names;
  if (!cli.no_expected) bundle.expected = shlo::reference_outputs(program);
  info["model"] = shlo::json_string(program_options.model);
  info["weights"] = cli.checkpoint.empty() ? shlo::json_string("seeded") : shlo::json_string(cli.checkpoint);
  info["batch_size"] = std::to_string(cli.program.batch_size);
  info["train_step"] = cli.program.train_step ? "true" : "false";
  info["seed"] = std::to_string(cli.program.seed);
  info["expected_from"] = cli.no_expected ? "null" : shlo::json_string("reference backend");
  const std::vector<std::string> written = shlo::write_bundle(cli.out_dir, bundle);
  if (!cli.quiet) {
    std::cerr << fmt::format("wrote {} ({} arguments, {} results) and {} more files to {}\n", written.front(),
                             module.arguments.size(), module.results.size(), written.size() - 1, cli.out_dir);
  }
  return kExitOk;
}

}  // namespace

Command add_export_command(CLI::App& root) {
  auto cli = std::make_shared<ExportCli>();
  CLI::App* app = root.add_subcommand("export", "Export a model or graph for another compiler");
  app->require_subcommand(1);
  CLI::App* shlo = app->add_subcommand(
      "stablehlo", "Write a StableHLO module (MLIR text) with example inputs and Tessera's outputs as .npy files");
  CLI::Option* model = shlo->add_option("--model", cli->program.model, "Built-in model (default: the checkpoint's)")
                           ->check(CLI::IsMember({"mlp", "cnn", "transformer"}))
                           ->capture_default_str();
  shlo->add_option("--checkpoint", cli->checkpoint,
                   "Export the weights of this `tessera train` checkpoint (with --train-step also its Adam moments "
                   "and step count) instead of seeded ones")
      ->check(CLI::ExistingFile);
  shlo->add_option("--batch-size", cli->program.batch_size, "Batch size of the example inputs")
      ->check(CLI::Range(int64_t{1}, int64_t{1} << 20))
      ->capture_default_str();
  shlo->add_flag("--train-step", cli->program.train_step,
                 "Export one whole training step (forward, gradients, Adam update) instead of the forward pass");
  shlo->add_option("--precision", cli->precision, "Precision of dot_general/convolution (highest: HIGHEST)")
      ->check(CLI::IsMember({"default", "highest"}))
      ->capture_default_str();
  shlo->add_option("--seed", cli->program.seed, "Seed of the parameters and example inputs")->capture_default_str();
  shlo->add_option("--graph", cli->graph_file,
                   "Export this IR text file (as `tessera inspect --print` writes) "
                   "instead of a model; writes only the .mlir")
      ->check(CLI::ExistingFile);
  shlo->add_option("--name", cli->name, "File name stem (default: the model, or MODEL_train_step)");
  shlo->add_option("--max-inline", cli->max_inline,
                   "Constants with more elements become @main arguments (-1: inline everything)")
      ->capture_default_str();
  shlo->add_flag("--no-expected", cli->no_expected, "Skip computing Tessera's outputs (the reference backend)");
  shlo->add_flag("--quiet", cli->quiet, "Print nothing on success");
  shlo->add_option("--out", cli->out_dir, "Output folder")->required()->check(output_folder());
  const Command onnx = add_export_onnx_subcommand(*app);
  return {app, [cli, shlo, model, onnx] {
            if (onnx.app->parsed()) return onnx.run();
            cli->model_given = model->count() > 0;
            TESSERA_CHECK(cli->checkpoint.empty() || cli->graph_file.empty(),
                          "export: --checkpoint gives a model's weights; --graph exports a graph file as it is");
            if (shlo->parsed()) return run_stablehlo(*cli);
            return kExitUsage;
          }};
}

}  // namespace tessera::cli
