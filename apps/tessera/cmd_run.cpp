// tessera run MODEL.onnx --inputs a.npy b.npy ... --out DIR [--backend reference|cpu|cuda|vulkan]: imports an ONNX
// model for the inputs' types (binding its dynamic dimensions), runs it and writes each output as
// DIR/<output name>.npy (characters other than letters, digits, '.', '-' and '_' become '_'), printing
// each output's name, dtype and shape. Inputs whose values decide shapes (a Reshape's target, say) are
// fixed to the given data (io/onnx/onnx_import.h).
#include <filesystem>
#include <iostream>
#include <set>

#include "command.h"
#include "file_io.h"
#include "tessera/backends/backend.h"
#include "tessera/core/printable.h"
#include "tessera/io/npy.h"
#include "tessera/io/onnx/onnx_import.h"
#include "tessera/io/onnx/onnx_model.h"
#include "usage_errors.h"

namespace tessera::cli {
namespace {

struct RunOptions {
  std::string model;
  std::vector<std::string> inputs;
  std::string out;
  std::string backend = "cpu";
};

// A file name for an ONNX output name: safe characters only, never "." or "..", unique in the folder.
std::string npy_name(const std::string& output, std::set<std::string>& taken) {
  std::string base;
  for (char ch : output) {
    const bool ok = (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') || ch == '.' ||
                    ch == '-' || ch == '_';
    base += ok ? ch : '_';
    if (base.size() >= 100) break;
  }
  if (base.empty() || base[0] == '.') base = "output_" + base;
  std::string name = base;
  for (int i = 1; !taken.insert(name).second; ++i) name = base + "_" + std::to_string(i);
  return name + ".npy";
}

int run_model(const RunOptions& o) {
  const io::onnx::OnnxModel model = io::onnx::load_onnx_model(o.model);
  std::vector<Array> inputs;
  for (const std::string& path : o.inputs) inputs.push_back(io::load_npy(path));
  const io::onnx::ImportedGraph imported = io::onnx::import_onnx_for(model, inputs);
  backends::Backend& backend = backends::backend_by_name(o.backend);
  std::vector<Array> outputs = backend.compile(imported.graph)->run(io::onnx::graph_inputs(imported, inputs));
  // A GPU backend returns arrays in its device's memory; the files are written from host copies.
  for (Array& out : outputs) out = out.to(host_device());
  check_writable_folder(o.out, true);
  std::set<std::string> taken;
  for (size_t i = 0; i < outputs.size(); ++i) {
    const std::string file = (std::filesystem::path(o.out) / npy_name(imported.output_names[i], taken)).string();
    io::save_npy(file, outputs[i]);
    std::cout << fmt::format("{}: {}{} -> {}\n", printable(imported.output_names[i], 80), dtype_name(outputs[i].dtype()),
                             shape_str(outputs[i].shape()), file);
  }
  return kExitOk;
}

}  // namespace

Command add_run_command(CLI::App& root) {
  auto options = std::make_shared<RunOptions>();
  CLI::App* app = root.add_subcommand("run", "Run an ONNX model on .npy inputs and write its outputs as .npy files");
  app->add_option("MODEL", options->model, "The .onnx model")->required()->check(CLI::ExistingFile);
  app->add_option("--inputs", options->inputs, "One .npy file per model input, in the model's order")
      ->check(CLI::ExistingFile);
  app->add_option("--out", options->out, "Folder for the outputs (made if missing)")->required()->check(output_folder());
  app->add_option("--backend", options->backend, "Backend to run on")
      ->check(CLI::IsMember(backends::backend_names()))
      ->capture_default_str();
  return {app, [options] { return run_model(*options); }};
}

}  // namespace tessera::cli
