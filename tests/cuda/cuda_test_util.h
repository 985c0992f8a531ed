#pragma once
// Shared by the CUDA tests: the backend, and a function run on the GPU against the reference backend.
#include <functional>
#include <string>
#include <vector>

#include "tessera/api/transforms.h"
#include "tessera/backends/backend.h"
#include "test_util.h"

namespace tessera::test {

inline backends::Backend& cuda() { return backends::backend_by_name("cuda"); }

// Runs fn on the GPU and on the reference backend; every output must agree within tol (absolute and relative).
inline void expect_matches_reference(const std::function<std::vector<Tensor>(const std::vector<Tensor>&)>& fn,
                                     const std::vector<Array>& in, double tol) {
  const ir::Graph g = trace(fn, types_of(in));
  const auto got = cuda().compile(g)->run(in);
  const auto want = backends::reference_backend().compile(g)->run(in);
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) {
    SCOPED_TRACE("output " + std::to_string(i));
    expect_close(Tensor::from_array(got[i].to(host_device())), want[i].to_f64(), tol, tol);
  }
}

}  // namespace tessera::test
