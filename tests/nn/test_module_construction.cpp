// One way to build modules: every module, activations included, is a class of nn:: built with
// std::make_shared<nn::X>(...) and held by shared_ptr (Sequential, register_module).
#include <type_traits>

#include "nn_helpers.h"

using namespace tessera;
using namespace tessera::test;

namespace {
template <class... M>
constexpr bool all_modules = (std::is_base_of_v<nn::Module, M> && ...);
}  // namespace

TEST(ModuleConstruction, ActivationsAreModuleClasses) {
  static_assert(all_modules<nn::ReLU, nn::GELU, nn::Tanh, nn::Sigmoid, nn::SiLU, nn::LeakyReLU, nn::ELU, nn::Softmax,
                            nn::LogSoftmax>);
  nn::Sequential seq({std::make_shared<nn::ReLU>(), std::make_shared<nn::GELU>(true), std::make_shared<nn::Tanh>(),
                      std::make_shared<nn::Sigmoid>(), std::make_shared<nn::SiLU>(),
                      std::make_shared<nn::LeakyReLU>(0.2), std::make_shared<nn::ELU>(),
                      std::make_shared<nn::Softmax>(0), std::make_shared<nn::LogSoftmax>()});
  std::vector<std::string> names;
  for (const auto& [n, child] : seq.named_children()) names.push_back(child->name());
  EXPECT_EQ(names, (std::vector<std::string>{"ReLU", "GELU(tanh)", "Tanh", "Sigmoid", "SiLU", "LeakyReLU(0.2)",
                                             "ELU(1)", "Softmax", "LogSoftmax"}));
  EXPECT_EQ(seq.num_parameters(), 0);
}

TEST(ModuleConstruction, LayersAndActivationsMixInOneSequential) {
  ops::Generator gen(4);
  auto model = std::make_shared<nn::Sequential>();
  model->add(std::make_shared<nn::Flatten>())
      .add(std::make_shared<nn::Linear>(6, 5, true, gen))
      .add(std::make_shared<nn::ReLU>())
      .add(std::make_shared<nn::Dropout>(0.1, gen))
      .add(std::make_shared<nn::Linear>(5, 2, true, gen));
  model->eval();
  const Tensor x = random_tensor({4, 2, 3}, 1);
  const Tensor y = (*model)(x);
  EXPECT_EQ(y.shape(), (Shape{4, 2}));
  auto& fc1 = static_cast<nn::Linear&>((*model)[1]);
  auto& fc2 = static_cast<nn::Linear&>((*model)[4]);
  const Tensor want =
      ops::linear(ops::relu(ops::linear(ops::flatten(x, 1, -1), fc1.weight, fc1.bias)), fc2.weight, fc2.bias);
  expect_values_near(values(y), values(want), 1e-6, "sequential");
}
