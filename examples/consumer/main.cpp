// A first program against an installed Tessera: a small classifier trained on a synthetic problem
// (two interleaved spirals), its parameters saved as a safetensors checkpoint and loaded into a fresh model, and
// the reloaded model evaluated. Exits non-zero unless training learned the problem.
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <vector>

#include "tessera/tessera.h"

using namespace tessera;

int main() {
  // 512 points on two spirals, labels 0 and 1.
  const int64_t n = 512;
  std::vector<float> xy;
  std::vector<int64_t> labels;
  for (int64_t i = 0; i < n; ++i) {
    const int64_t label = i % 2;
    const double r = 0.2 + 0.8 * static_cast<double>(i / 2) / static_cast<double>(n / 2);
    const double angle = 3.0 * r * M_PI + (label == 1 ? M_PI : 0.0);
    xy.push_back(static_cast<float>(r * std::cos(angle)));
    xy.push_back(static_cast<float>(r * std::sin(angle)));
    labels.push_back(label);
  }
  const Tensor x = Tensor::from_vector(xy, {n, 2});
  const Tensor y = Tensor::from_vector(labels, {n});

  ops::Generator gen(0);
  auto make_model = [&] {
    auto m = std::make_shared<nn::Sequential>();
    m->add(std::make_shared<nn::Linear>(2, 64, true, gen));
    m->add(std::make_shared<nn::ReLU>());
    m->add(std::make_shared<nn::Linear>(64, 64, true, gen));
    m->add(std::make_shared<nn::ReLU>());
    m->add(std::make_shared<nn::Linear>(64, 2, true, gen));
    return m;
  };
  auto model = make_model();
  optim::Adam opt(*model, {.lr = 1e-2});
  double loss = 0;
  for (int step = 0; step < 300; ++step) {
    const Tensor l = ops::cross_entropy((*model)(x), y);
    opt.zero_grad();
    l.backward();
    opt.step();
    loss = l.item();
  }

  const std::string path = (std::filesystem::temp_directory_path() / "tessera_consumer.safetensors").string();
  train::save_checkpoint(path, *model, nullptr, {});
  auto reloaded = make_model();
  train::load_checkpoint(path, *reloaded, nullptr);
  std::filesystem::remove(path);

  const Tensor predicted = ops::argmax((*reloaded)(x), 1);
  const double accuracy = ops::mean(ops::cast(ops::eq(predicted, y), DType::f32)).item();
  std::printf("final loss %.4f, accuracy of the reloaded model %.1f%%\n", loss, 100.0 * accuracy);
  return accuracy > 0.9 ? 0 : 1;
}
