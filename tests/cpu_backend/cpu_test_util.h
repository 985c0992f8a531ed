#pragma once
// Helpers for the differential tests: run one graph on the reference backend and on the backend
// under test and compare every output. The backend under test is the CPU backend, or the one named
// by $TESSERA_TEST_BACKEND (the same suite is built as test_cuda_differential with "cuda").
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <string>
#include <vector>

#include "tessera/backends/common/program.h"
#include "tessera/backends/cpu/cpu_backend.h"
#include "test_util.h"

#ifndef TESSERA_TEST_BACKEND_DEFAULT
#define TESSERA_TEST_BACKEND_DEFAULT "cpu"
#endif

namespace tessera::test {

inline backends::Backend& backend_under_test() {
  const char* env = std::getenv("TESSERA_TEST_BACKEND");
  return backends::backend_by_name(env != nullptr && *env != '\0' ? env : TESSERA_TEST_BACKEND_DEFAULT);
}
inline bool testing_cpu() { return backend_under_test().name() == "cpu"; }

// Sets the JIT mode for a scope.
class ScopedJit {
 public:
  explicit ScopedJit(backends::cpu::JitMode mode) : saved_(backends::cpu::jit_mode()) {
    backends::cpu::set_jit_mode(mode);
  }
  ~ScopedJit() { backends::cpu::set_jit_mode(saved_); }
  ScopedJit(const ScopedJit&) = delete;
  ScopedJit& operator=(const ScopedJit&) = delete;

 private:
  backends::cpu::JitMode saved_;
};

// Compares two arrays element by element: exact for integers and bools, |a - e| <= atol + rtol |e|
// for floats, nan where nan is expected. Returns "" or a description of the first mismatch.
inline std::string compare_arrays(const Array& expected, const Array& actual, double atol, double rtol) {
  if (expected.dtype() != actual.dtype()) {
    return std::string("dtype ") + dtype_name(actual.dtype()) + ", expected " + dtype_name(expected.dtype());
  }
  if (expected.shape() != actual.shape()) {
    return "shape " + shape_str(actual.shape()) + ", expected " + shape_str(expected.shape());
  }
  const std::vector<double> e = expected.to_f64(), a = actual.to_f64();
  const bool exact = !is_floating(expected.dtype());
  for (size_t i = 0; i < e.size(); ++i) {
    const bool ok = std::isnan(e[i])   ? std::isnan(a[i])
                    : std::isinf(e[i]) ? a[i] == e[i]
                    : exact            ? a[i] == e[i]
                                       : std::abs(a[i] - e[i]) <= atol + rtol * std::abs(e[i]);
    if (!ok) {
      return "element " + std::to_string(i) + " is " + std::to_string(a[i]) + ", expected " + std::to_string(e[i]);
    }
  }
  return "";
}

inline double default_tolerance(DType dt) {
  switch (dt) {
    case DType::f64:
      return 1e-10;
    case DType::f32:
      return 2e-5;
    case DType::f16:
      return 2e-3;
    case DType::bf16:
      return 1.6e-2;
    default:
      return 0;
  }
}

// Runs `graph` on both backends with `inputs` (run, then run_into into fresh arrays) and expects
// equal outputs. `what` names the case in failure messages.
inline void expect_matches_reference_unguarded(const ir::Graph& graph, const std::vector<Array>& inputs, const std::string& what,
                                     double tol = -1) {
  const std::vector<Array> expected = backends::reference_backend().compile(graph)->run(inputs);
  backends::Backend& backend = backend_under_test();
  std::unique_ptr<backends::Executable> exe = backend.compile(graph);
  std::vector<Array> got = exe->run(inputs);
  ASSERT_EQ(got.size(), expected.size()) << what;
  std::vector<Array> into;
  for (const Array& e : expected) into.push_back(Array::empty(e.dtype(), e.shape(), exe->device()));
  exe->run_into(inputs, into);
  const std::string program = backend.name() == "cpu" ? backends::cpu::compile_info(*exe).program : "";
  for (size_t i = 0; i < expected.size(); ++i) {
    const double t = tol >= 0 ? tol : default_tolerance(expected[i].dtype());
    EXPECT_EQ(compare_arrays(expected[i], got[i].to(host_device()), t, t), "")
        << what << ": output " << i << " of run() on " << backend.name() << "\n"
        << program;
    EXPECT_EQ(compare_arrays(expected[i], into[i].to(host_device()), t, t), "")
        << what << ": output " << i << " of run_into() on " << backend.name();
  }
}

// As above; an exception (a backend that cannot run the graph) fails this case only, naming it.
inline void expect_matches_reference(const ir::Graph& graph, const std::vector<Array>& inputs, const std::string& what,
                                     double tol = -1) {
  try {
    expect_matches_reference_unguarded(graph, inputs, what, tol);
  } catch (const std::exception& e) {
    ADD_FAILURE() << what << " on " << backend_under_test().name() << ": " << e.what();
  }
}

}  // namespace tessera::test
