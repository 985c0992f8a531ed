// Model workloads: compiled training steps of the issue-3 MLP and CNN (Adam, lr 1e-3) on synthetic
// Fashion-MNIST-shaped batches, and batch-1 MLP inference through compile().
#include <memory>

#include "tessera/api/transforms.h"
#include "tessera/bench/workloads.h"
#include "tessera/models/vision.h"
#include "tessera/ops/ops.h"
#include "tessera/optim/optim.h"
#include "tessera/train/train_step.h"

namespace tessera::bench {

namespace {

backends::Backend& backend_of(const BenchOptions& o) {
  return o.backend.empty() ? backends::default_backend() : backends::backend_by_name(o.backend);
}

// Pixels in [0, 1) and labels 0..9, fixed by a seed (the rate does not depend on the values).
std::pair<Array, Array> synthetic_batch(const Shape& image_shape, int64_t batch) {
  Shape shape{batch};
  shape.insert(shape.end(), image_shape.begin(), image_shape.end());
  Array x = Array::empty(DType::f32, shape);
  float* px = x.data<float>();
  uint64_t state = 0x9E3779B97F4A7C15ull;
  for (int64_t i = 0; i < x.numel(); ++i) {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    px[i] = static_cast<float>(state >> 40) / static_cast<float>(1ull << 24);
  }
  Array y = Array::empty(DType::i64, {batch});
  for (int64_t i = 0; i < batch; ++i) y.data<int64_t>()[i] = (i * 7) % 10;
  return {x, y};
}

Measurement train_rate(const std::string& name, const std::string& model_name, int64_t batch, const BenchOptions& o) {
  ops::Generator gen(0);
  std::shared_ptr<nn::Module> model = models::make_classifier(model_name, gen);
  optim::Adam opt(*model, optim::AdamOptions{.lr = 1e-3});
  train::CompiledTrainStep step(
      *model, opt, [](nn::Module& m, const Tensor& x, const Tensor& y) { return ops::cross_entropy(m(x), y); }, 0.0,
      &backend_of(o));
  const Shape image = model_name == "mlp" ? Shape{784} : Shape{1, 28, 28};
  // Plain variables, not a structured binding: clang before 16 cannot capture bindings in a lambda.
  const std::pair<Array, Array> data = synthetic_batch(image, batch);
  const Array& x = data.first;
  const Array& y = data.second;
  step.step(x, y);  // the eager first step that creates Adam's state
  step.step(x, y);  // the first compiled step (compiles)
  BenchOptions timed = o;
  Device& device = backend_of(o).device();
  timed.finish = [&device] { device.synchronize(); };
  // The batch lives where the step runs, as the peers keep theirs (on a GPU, uploading a 4096-image
  // batch every step would cost more than the step itself).
  const Array xd = x.to(device), yd = y.to(device);
  // advance(): the loss is not read back each step (on a GPU that would wait for every step).
  Measurement m = measure_rate(name, "samples/s", timed, static_cast<double>(batch), [&] { step.advance(xd, yd); });
  m.detail = fmt::format("{} batch {}, Adam, backend {}", model_name, batch, backend_of(o).name());
  return m;
}

}  // namespace

Measurement train_rate_of(const std::string& name, const std::string& model_name, int64_t batch, const BenchOptions& o) {
  return train_rate(name, model_name, batch, o);
}

namespace {

Measurement mlp_inference(const BenchOptions& o) {
  ops::Generator gen(0);
  std::shared_ptr<nn::Module> model = models::make_classifier("mlp", gen);
  model->eval();
  CompiledFunction forward = compile([&](const std::vector<Tensor>& a) { return std::vector<Tensor>{(*model)(a[0])}; },
                                     &backend_of(o));
  const Tensor x = Tensor::from_array(synthetic_batch({784}, 1).first);
  Measurement m = measure_latency("mlp_infer_b1", "us", o, [&] { forward({x}); });
  m.detail = fmt::format("mlp forward, batch 1, compile() API, backend {}", backend_of(o).name());
  return m;
}

}  // namespace

std::vector<Workload> model_workloads() {
  return {
      {"mlp_train_b64", "MLP 784-1024-512-256-10 training step (Adam), batch 64",
       [](const BenchOptions& o) { return train_rate("mlp_train_b64", "mlp", 64, o); }},
      {"mlp_train_b256", "MLP training step (Adam), batch 256",
       [](const BenchOptions& o) { return train_rate("mlp_train_b256", "mlp", 256, o); }},
      {"cnn_train_b64", "CNN (issue 3) training step (Adam), batch 64",
       [](const BenchOptions& o) { return train_rate("cnn_train_b64", "cnn", 64, o); }},
      {"mlp_infer_b1", "MLP forward, batch 1 (latency)", mlp_inference},
  };
}

}  // namespace tessera::bench
