// Writing your own module: a residual MLP block with a learnable gate, trained to fit y = sin(3x)
// from random points. Shows parameters, submodules, buffers, initialisation and a training loop.
#include <cmath>
#include <cstdio>

#include "tessera/tessera.h"

using namespace tessera;

// out = x + gate * fc2(gelu(fc1(norm(x)))): the gate starts at zero, so the block starts as identity.
class ResidualBlock : public nn::Module {
 public:
  ResidualBlock(int64_t width, ops::Generator& gen) {
    norm = register_module("norm", std::make_shared<nn::LayerNorm>(Shape{width}));
    fc1 = register_module("fc1", std::make_shared<nn::Linear>(width, 4 * width, true, gen));
    fc2 = register_module("fc2", std::make_shared<nn::Linear>(4 * width, width, true, gen));
    gate = nn::init::zeros({1});
    register_parameter("gate", &gate);
  }
  Tensor forward(const Tensor& x) override { return x + gate * (*fc2)(ops::gelu((*fc1)((*norm)(x)))); }
  std::string name() const override { return "ResidualBlock"; }

  std::shared_ptr<nn::LayerNorm> norm;
  std::shared_ptr<nn::Linear> fc1, fc2;
  Tensor gate;
};

int main(int argc, char** argv) {
  const int64_t steps = argc > 1 ? std::stoll(argv[1]) : 300;
  ops::Generator gen(42);
  nn::Sequential model;
  model.add(std::make_shared<nn::Linear>(1, 32, true, gen))
      .add(std::make_shared<ResidualBlock>(32, gen))
      .add(std::make_shared<ResidualBlock>(32, gen))
      .add(std::make_shared<nn::Linear>(32, 1, true, gen));
  std::printf("%s%lld parameters\n", model.summary().c_str(), static_cast<long long>(model.num_parameters()));

  optim::AdamW opt(model, {.lr = 3e-3, .weight_decay = 1e-4});
  const Tensor x = ops::uniform({256, 1}, -1.0, 1.0, gen);
  const Tensor y = ops::sin(x * 3.0);
  double first = 0, last = 0;
  for (int64_t step = 0; step < steps; ++step) {
    Tensor loss = ops::mse_loss(model(x), y);
    opt.zero_grad();
    loss.backward();
    opt.step();
    last = loss.item();
    if (step == 0) first = last;
    if (step % 100 == 0) std::printf("step %lld: loss %.5f\n", static_cast<long long>(step), last);
  }
  std::printf("loss %.5f -> %.5f\n", first, last);
  return last < first * 0.1 ? 0 : 1;  // a working training loop cuts the loss at least tenfold
}
