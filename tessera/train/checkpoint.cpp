#include "tessera/train/checkpoint.h"

#include "tessera/core/parse_int.h"
#include "tessera/io/safetensors.h"
#include "tessera/train/limits.h"

namespace tessera::train {

namespace {
constexpr const char* kFormat = "tessera-checkpoint-1";
}

int64_t checkpoint_epoch(const std::string& path, const std::map<std::string, std::string>& metadata) {
  auto ep = metadata.find("epoch");
  if (ep == metadata.end()) return 0;
  return parse_int_or_fail(ep->second, 0, kMaxEpochs, fmt::format("checkpoint {}: metadata 'epoch'", path));
}

void save_checkpoint(const std::string& path, nn::Module& model, const optim::Optimizer* optimizer,
                     std::map<std::string, std::string> metadata) {
  StateDict tensors;
  for (auto& [name, a] : model.state_dict()) tensors.emplace("model." + name, a);
  if (optimizer) {
    for (auto& [name, a] : optimizer->state_dict()) tensors.emplace("optim." + name, a);
    for (auto& [k, v] : optimizer->state_metadata()) metadata["optim." + k] = v;
  }
  metadata["format"] = kFormat;
  io::save_safetensors(path, tensors, metadata);
}

std::map<std::string, std::string> read_checkpoint_metadata(const std::string& path) {
  auto file = io::load_safetensors_with_metadata(path);
  auto it = file.metadata.find("format");
  TESSERA_CHECK(it != file.metadata.end() && it->second == kFormat,
                "checkpoint {}: not a Tessera training checkpoint (metadata 'format' is '{}', expected '{}')", path,
                it == file.metadata.end() ? std::string("missing") : it->second, kFormat);
  return file.metadata;
}

CheckpointInfo load_checkpoint(const std::string& path, nn::Module& model, optim::Optimizer* optimizer) {
  io::SafetensorsFile file = io::load_safetensors_with_metadata(path);
  auto fmt_it = file.metadata.find("format");
  TESSERA_CHECK(fmt_it != file.metadata.end() && fmt_it->second == kFormat,
                "checkpoint {}: not a Tessera training checkpoint (metadata 'format' is '{}', expected '{}')", path,
                fmt_it == file.metadata.end() ? std::string("missing") : fmt_it->second, kFormat);
  StateDict model_state, optim_state;
  for (auto& [name, a] : file.tensors) {
    if (name.rfind("model.", 0) == 0) {
      model_state[name.substr(6)] = a;
    } else if (name.rfind("optim.", 0) == 0) {
      optim_state[name.substr(6)] = a;
    } else {
      fail("checkpoint {}: unexpected tensor '{}' (expected names starting with model. or optim.)", path, name);
    }
  }
  try {
    model.load_state_dict(model_state, true);
  } catch (const Error& e) {
    fail("checkpoint {}: {}", path, e.what());
  }
  if (optimizer) {
    std::map<std::string, std::string> optim_meta;
    for (auto& [k, v] : file.metadata) {
      if (k.rfind("optim.", 0) == 0) optim_meta[k.substr(6)] = v;
    }
    try {
      optimizer->load_state_dict(optim_state, optim_meta);
    } catch (const Error& e) {
      fail("checkpoint {}: {}", path, e.what());
    }
  }
  CheckpointInfo info;
  info.metadata = file.metadata;
  info.epoch = checkpoint_epoch(path, file.metadata);
  return info;
}

}  // namespace tessera::train
