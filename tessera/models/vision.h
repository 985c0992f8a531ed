#pragma once
// The built-in image classifiers used by `tessera train` and the examples: functions that assemble a
// Sequential of modules (as torchvision.models does), each drawing its initial weights from `gen`.
#include <memory>
#include <string>
#include <vector>

#include "tessera/nn/layers.h"

namespace tessera::models {

// 784-1024-512-256-10 perceptron with ReLU; accepts [N, 784] or [N, 1, 28, 28].
std::shared_ptr<nn::Sequential> mlp(ops::Generator& gen = ops::default_generator(), int64_t in_features = 784,
                                    int64_t classes = 10);
// conv(1->32, 3x3)-relu-maxpool(2)-conv(32->64, 3x3)-relu-maxpool(2)-fc(1600->128)-relu-fc(128->10),
// for [N, 1, 28, 28] inputs.
std::shared_ptr<nn::Sequential> cnn(ops::Generator& gen = ops::default_generator(), int64_t classes = 10);

// By name ("mlp", "cnn"); throws listing the known names otherwise.
std::shared_ptr<nn::Module> make_classifier(const std::string& name, ops::Generator& gen = ops::default_generator());
std::vector<std::string> classifier_names();  // the names make_classifier accepts

}  // namespace tessera::models
