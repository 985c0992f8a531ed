#include "tessera/models/vision.h"

#include "tessera/nn/activation.h"
#include "tessera/nn/conv.h"

namespace tessera::models {

std::shared_ptr<nn::Sequential> mlp(ops::Generator& gen, int64_t in_features, int64_t classes) {
  auto m = std::make_shared<nn::Sequential>();
  m->add(std::make_shared<nn::Flatten>(1));
  const std::vector<int64_t> widths{in_features, 1024, 512, 256};
  for (size_t i = 0; i + 1 < widths.size(); ++i) {
    m->add(std::make_shared<nn::Linear>(widths[i], widths[i + 1], true, gen));
    m->add(std::make_shared<nn::ReLU>());
  }
  m->add(std::make_shared<nn::Linear>(widths.back(), classes, true, gen));
  return m;
}

std::shared_ptr<nn::Sequential> cnn(ops::Generator& gen, int64_t classes) {
  auto m = std::make_shared<nn::Sequential>();
  m->add(std::make_shared<nn::Conv2d>(1, 32, std::array<int64_t, 2>{3, 3}, std::array<int64_t, 2>{1, 1},
                                      std::array<int64_t, 2>{0, 0}, std::array<int64_t, 2>{1, 1}, 1, true, gen));
  m->add(std::make_shared<nn::ReLU>());
  m->add(std::make_shared<nn::MaxPool2d>(std::array<int64_t, 2>{2, 2}));
  m->add(std::make_shared<nn::Conv2d>(32, 64, std::array<int64_t, 2>{3, 3}, std::array<int64_t, 2>{1, 1},
                                      std::array<int64_t, 2>{0, 0}, std::array<int64_t, 2>{1, 1}, 1, true, gen));
  m->add(std::make_shared<nn::ReLU>());
  m->add(std::make_shared<nn::MaxPool2d>(std::array<int64_t, 2>{2, 2}));
  m->add(std::make_shared<nn::Flatten>(1));
  m->add(std::make_shared<nn::Linear>(1600, 128, true, gen));
  m->add(std::make_shared<nn::ReLU>());
  m->add(std::make_shared<nn::Linear>(128, classes, true, gen));
  return m;
}

std::vector<std::string> classifier_names() { return {"mlp", "cnn"}; }

std::shared_ptr<nn::Module> make_classifier(const std::string& name, ops::Generator& gen) {
  if (name == "mlp") return mlp(gen);
  if (name == "cnn") return cnn(gen);
  fail("unknown model '{}': expected one of mlp, cnn", name);
}

}  // namespace tessera::models
