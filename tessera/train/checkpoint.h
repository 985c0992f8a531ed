#pragma once
// Training checkpoints in safetensors: the model's parameters and buffers as "model.<name>", the
// optimiser state as "optim.<param>.<slot>", and the training position (epoch, optimiser step, seed,
// model and optimiser names) in the header metadata. Written atomically.
#include <map>
#include <string>

#include "tessera/nn/module.h"
#include "tessera/optim/optimizer.h"

namespace tessera::train {

// What load_checkpoint read besides the tensors.
struct CheckpointInfo {
  std::map<std::string, std::string> metadata;  // everything from the header, incl. "epoch" and "step"
  int64_t epoch = 0;                            // completed epochs
};

// Writes one safetensors file (atomically): the model's state_dict under "model.", the optimiser's state
// (when not null) under "optim.", and `metadata` plus the optimiser's metadata ("optim." keys) and a format tag.
void save_checkpoint(const std::string& path, nn::Module& model, const optim::Optimizer* optimizer,
                     std::map<std::string, std::string> metadata);
// Loads into `model` (strict: missing, extra or mis-shaped tensors are errors naming the tensor and both
// shapes) and, when given, into `optimizer`.
CheckpointInfo load_checkpoint(const std::string& path, nn::Module& model, optim::Optimizer* optimizer);
// Reads only the metadata (to learn which model/optimiser a checkpoint needs before building them).
std::map<std::string, std::string> read_checkpoint_metadata(const std::string& path);
// The completed epochs a checkpoint's metadata records: 0 without an "epoch" entry, else a plain decimal
// in [0, kMaxEpochs] (parse_int_strict: "-1000000", "1xyz" and " 1" fail naming the file).
int64_t checkpoint_epoch(const std::string& path, const std::map<std::string, std::string>& metadata);

}  // namespace tessera::train
