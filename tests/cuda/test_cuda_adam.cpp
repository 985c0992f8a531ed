// adam_update on the CUDA backend: every f32 update of a graph that shares hyperparameters and scalars
// runs as one launch (library_ops_optim.cpp), against the reference's f64 update; a step that is not a
// whole number is reported at a later run.
#include <gtest/gtest.h>

#include "tessera/api/transforms.h"
#include "tessera/backends/backend.h"
#include "tessera/backends/cuda/executable.h"
#include "tessera/core/error.h"
#include "tessera/ops/ops.h"
#include "tessera/ops/optim.h"
#include "cuda_test_util.h"

namespace tessera::test {
namespace {

using V = std::vector<Tensor>;

// Three parameters of ragged sizes (one smaller than a block, one over several) updated by one graph.
std::function<V(const V&)> three_updates(const ops::AdamUpdateOptions& options) {
  return [options](const V& a) {
    V out;
    for (int k = 0; k < 3; ++k) {
      const V r = ops::adam_update(a[4 * k], a[4 * k + 1], a[4 * k + 2], a[4 * k + 3], a[12], a[13], options);
      out.insert(out.end(), r.begin(), r.end());
    }
    return out;
  };
}

std::vector<Array> three_states(double step) {
  std::vector<Array> in;
  const Shape shapes[] = {{7}, {33, 65}, {1025, 3}};
  for (int k = 0; k < 3; ++k) {
    in.push_back(random_array(shapes[k], 100 + k, -1, 1, DType::f32));
    in.push_back(random_array(shapes[k], 200 + k, -1, 1, DType::f32));
    in.push_back(random_array(shapes[k], 300 + k, -0.1, 0.1, DType::f32));
    in.push_back(random_array(shapes[k], 400 + k, 0, 0.01, DType::f32));
  }
  in.push_back(Array::from_vector<double>({1e-3}, {}));
  in.push_back(Array::from_vector<double>({step}, {}));
  return in;
}

TEST(CudaAdam, UpdatesOfOneGraphRunAsOneLaunchAndMatchTheReference) {
  for (const ops::AdamUpdateOptions options :
       {ops::AdamUpdateOptions{}, ops::AdamUpdateOptions{.weight_decay = 0.1},
        ops::AdamUpdateOptions{.beta1 = 0.8, .weight_decay = 0.01, .decoupled = true}}) {
    SCOPED_TRACE(fmt::format("weight decay {} decoupled {}", options.weight_decay, options.decoupled));
    const auto fn = three_updates(options);
    const std::vector<Array> in = three_states(3);
    expect_matches_reference(fn, in, 1e-5);
    std::vector<ir::TensorType> types;
    for (const Array& a : in) types.push_back({a.dtype(), a.shape()});
    const auto exe = cuda().compile(trace(fn, types));
    const auto* cu = dynamic_cast<const backends::cuda::CudaExecutable*>(exe.get());
    ASSERT_NE(cu, nullptr);
    int adam_steps = 0;
    for (const auto& s : cu->program().steps) adam_steps += s->describe().find(" x3 tensors") != std::string::npos;
    EXPECT_EQ(adam_steps, 1);
  }
}

TEST(CudaAdam, AStepThatIsNotAWholeNumberIsReported) {
  const auto fn = three_updates({});
  std::vector<ir::TensorType> types;
  for (const Array& a : three_states(1)) types.push_back({a.dtype(), a.shape()});
  const auto exe = cuda().compile(trace(fn, types));
  exe->run(three_states(1.5));
  cuda().device().synchronize();  // the report never waits for a running run
  EXPECT_TESSERA_ERROR(exe->run(three_states(2)), "adam_update step");
  EXPECT_NO_THROW(exe->run(three_states(3)));
}

}  // namespace
}  // namespace tessera::test
