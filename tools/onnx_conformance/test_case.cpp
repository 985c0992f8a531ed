#include "tools/onnx_conformance/test_case.h"

#include <algorithm>
#include <cmath>
#include <filesystem>

#include <fmt/ranges.h>

#include "tessera/backends/backend.h"
#include "tessera/core/error.h"
#include "tessera/io/onnx/onnx_import.h"
#include "tessera/io/onnx/onnx_model.h"
#include "tessera/io/onnx/onnx_tensor.h"

namespace tessera::onnx_conformance {

namespace fs = std::filesystem;

namespace {

// input_0.pb, input_1.pb, ... in numeric order; `declared` are the model's values of that kind, whose
// BFLOAT16 ones the test data stores as UINT16 bits.
std::vector<Array> read_tensors(const fs::path& folder, const std::string& prefix,
                                const std::vector<io::onnx::OnnxValueInfo>& declared) {
  constexpr int64_t kBfloat16 = 16;  // TensorProto.BFLOAT16
  std::vector<Array> out;
  for (size_t i = 0;; ++i) {
    const fs::path file = folder / (prefix + std::to_string(i) + ".pb");
    if (!fs::exists(file)) break;
    const bool bf16 = i < declared.size() && declared[i].elem_type == kBfloat16;
    out.push_back(io::onnx::load_onnx_tensor(file.string(), bf16));
  }
  return out;
}

std::string shape_text(const Shape& s) { return fmt::format("[{}]", fmt::join(s, ", ")); }

// The first element outside the tolerance, described; "" when all match.
std::string compare(const Array& expected, const Array& got, const Tolerance& tol) {
  if (expected.dtype() != got.dtype()) {
    return fmt::format("dtype {} (expected {})", dtype_name(got.dtype()), dtype_name(expected.dtype()));
  }
  if (expected.shape() != got.shape()) {
    return fmt::format("shape {} (expected {})", shape_text(got.shape()), shape_text(expected.shape()));
  }
  if (!is_floating(expected.dtype())) {
    const std::vector<int64_t> e = expected.to_vector<int64_t>(), g = got.to_vector<int64_t>();
    for (size_t i = 0; i < e.size(); ++i) {
      if (e[i] != g[i]) return fmt::format("element {} is {}, expected {}", i, g[i], e[i]);
    }
    return "";
  }
  const std::vector<double> e = expected.to_vector<double>(), g = got.to_vector<double>();
  for (size_t i = 0; i < e.size(); ++i) {
    if (std::isnan(e[i]) && std::isnan(g[i])) continue;
    if (e[i] == g[i]) continue;  // equal infinities
    if (!(std::abs(e[i] - g[i]) <= tol.atol + tol.rtol * std::abs(e[i]))) {
      return fmt::format("element {} is {}, expected {} (rtol {}, atol {})", i, g[i], e[i], tol.rtol, tol.atol);
    }
  }
  return "";
}

std::vector<fs::path> data_sets(const fs::path& folder) {
  std::vector<fs::path> out;
  for (const auto& e : fs::directory_iterator(folder)) {
    if (e.is_directory() && e.path().filename().string().rfind("test_data_set_", 0) == 0) out.push_back(e.path());
  }
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace

bool is_float_test(const std::string& folder) {
  try {
    const io::onnx::OnnxModel model = io::onnx::load_onnx_model((fs::path(folder) / "model.onnx").string());
    // TensorProto.DataType: FLOAT 1, FLOAT16 10, DOUBLE 11, BFLOAT16 16.
    auto is_float = [](const io::onnx::OnnxValueInfo& v) {
      return v.elem_type == 1 || v.elem_type == 10 || v.elem_type == 11 || v.elem_type == 16;
    };
    const auto& in = model.inputs();
    const auto& out = model.outputs();
    return !in.empty() && !out.empty() && std::all_of(in.begin(), in.end(), is_float) &&
           std::all_of(out.begin(), out.end(), is_float);
  } catch (const std::exception&) {
    return false;
  }
}

CaseResult run_test_case(const std::string& folder, const std::vector<std::string>& backends,
                         const Tolerance& tolerance) {
  try {
    const io::onnx::OnnxModel model = io::onnx::load_onnx_model((fs::path(folder) / "model.onnx").string());
    const std::vector<fs::path> sets = data_sets(folder);
    if (sets.empty()) return {false, "no test_data_set_* folder"};
    for (const fs::path& set : sets) {
      const std::vector<Array> inputs = read_tensors(set, "input_", model.inputs());
      const std::vector<Array> expected = read_tensors(set, "output_", model.outputs());
      const io::onnx::ImportedGraph imported = io::onnx::import_onnx_for(model, inputs);
      const std::vector<Array> feed = io::onnx::graph_inputs(imported, inputs);
      if (expected.size() != imported.output_names.size()) {
        return {false, fmt::format("{} expected outputs for {} graph outputs", expected.size(),
                                   imported.output_names.size())};
      }
      for (const std::string& name : backends) {
        const std::vector<Array> got = backends::backend_by_name(name).compile(imported.graph)->run(feed);
        for (size_t i = 0; i < expected.size(); ++i) {
          // A GPU backend's outputs live in device memory.
          const std::string mismatch = compare(expected[i], got[i].to(host_device()), tolerance);
          if (!mismatch.empty()) {
            return {false, fmt::format("{} on {}: output {} ('{}'): {}", set.filename().string(), name, i,
                                       imported.output_names[i], mismatch)};
          }
        }
      }
    }
    return {true, ""};
  } catch (const std::exception& e) {
    return {false, e.what()};
  }
}

}  // namespace tessera::onnx_conformance
