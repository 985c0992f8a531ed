#pragma once
// One ONNX backend test: a folder with model.onnx and test_data_set_*/ folders of input_<i>.pb and
// output_<i>.pb tensors. Every data set is run on each backend and its outputs compared as ONNX's own
// runner compares them: same dtype and shape, floats within atol + rtol * |expected| (NaN matches NaN),
// everything else exactly.
#include <string>
#include <vector>

namespace tessera::onnx_conformance {

struct Tolerance {
  double rtol = 1e-3;
  double atol = 1e-7;
};

struct CaseResult {
  bool passed = false;
  std::string message;  // why it failed: the first error or mismatch
};

/// Whether every declared input and output of the test's model is a float tensor (f16, bf16, f32, f64):
/// the "float node tests" of issue 16's target, counted whether the test runs or is excluded. A model
/// that does not load counts as not float.
bool is_float_test(const std::string& folder);

CaseResult run_test_case(const std::string& folder, const std::vector<std::string>& backends,
                         const Tolerance& tolerance);

}  // namespace tessera::onnx_conformance
