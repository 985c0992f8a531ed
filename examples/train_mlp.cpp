// Trains a 784-1024-512-256-10 perceptron on Fashion-MNIST with Tessera's C++ API.
//   train_mlp [EPOCHS] [TRAIN_EXAMPLES]      (defaults: 1 epoch, all 60000 examples)
#include <cstdio>
#include <string>

#include "tessera/tessera.h"

using namespace tessera;

int main(int argc, char** argv) {
  const int64_t epochs = argc > 1 ? std::stoll(argv[1]) : 1;
  const int64_t limit = argc > 2 ? std::stoll(argv[2]) : 0;

  data::TensorDataset train = data::load_fashion_mnist("train");  // images scaled to [0, 1]
  if (limit > 0) train = train.slice(0, limit);
  const data::TensorDataset test = data::load_fashion_mnist("test");
  data::DataLoader loader(std::make_shared<data::TensorDataset>(train), /*batch_size=*/64, /*shuffle=*/true);

  ops::Generator gen(/*seed=*/0);
  nn::Sequential model;
  model.add(std::make_shared<nn::Flatten>())
      .add(std::make_shared<nn::Linear>(784, 1024, true, gen))
      .add(std::make_shared<nn::ReLU>())
      .add(std::make_shared<nn::Linear>(1024, 512, true, gen))
      .add(std::make_shared<nn::ReLU>())
      .add(std::make_shared<nn::Linear>(512, 256, true, gen))
      .add(std::make_shared<nn::ReLU>())
      .add(std::make_shared<nn::Linear>(256, 10, true, gen));
  optim::Adam opt(model, {.lr = 1e-3});

  for (int64_t epoch = 0; epoch < epochs; ++epoch) {
    loader.set_epoch(epoch);
    double total = 0;
    for (const data::Batch& batch : loader) {
      Tensor loss = ops::cross_entropy(model(Tensor(batch.inputs)), Tensor(batch.targets));
      opt.zero_grad();
      loss.backward();
      opt.step();
      total += loss.item();
    }
    std::printf("epoch %lld: mean train loss %.4f\n", static_cast<long long>(epoch + 1), total / loader.num_batches());
  }

  model.eval();
  Tensor logits = model(Tensor(test.features()));
  Tensor correct = ops::sum(ops::eq(ops::argmax(logits, 1), Tensor(test.targets())));
  std::printf("test accuracy: %.2f%%\n", 100.0 * correct.item() / static_cast<double>(test.size()));
  return 0;
}
