#pragma once
// An export bundle on disk, what `tessera export stablehlo` writes and tools/xla/run_proof.py reads:
//   DIR/<name>.mlir             the module
//   DIR/<name>.input_<i>.npy    @main's arguments in order (graph inputs, then lifted constants)
//   DIR/<name>.expected_<i>.npy Tessera's outputs for those inputs (reference backend), when given
//   DIR/<name>.json             a manifest: files, names, dtypes and shapes of arguments and results
// Everything is serialised in memory first and each file is written atomically.
#include <map>
#include <string>
#include <vector>

#include "tessera/io/stablehlo/export.h"

namespace tessera::io::stablehlo {

struct BundleContents {
  std::string name;
  const Module* module = nullptr;
  std::vector<Array> inputs;                // one per graph input (lifted constants come from the module)
  std::vector<Array> expected;              // one per result, or empty
  std::vector<std::string> result_names;    // optional
  std::map<std::string, std::string> info;  // extra manifest fields (model, batch_size, ...), as JSON values
};

// Writes the bundle and returns the paths written, the .mlir first and the manifest last.
std::vector<std::string> write_bundle(const std::string& dir, const BundleContents& contents);

// JSON string literal of `s` (quotes included).
std::string json_string(const std::string& s);

}  // namespace tessera::io::stablehlo
