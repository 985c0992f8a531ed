#pragma once
// StateDict: named arrays, the one type that Module::state_dict, Optimizer::state_dict and the
// safetensors functions all take and return, so that
//   io::save_safetensors(path, model.state_dict());  model.load_state_dict(io::load_safetensors(path));
// needs no conversion. Sorted by name, as safetensors files store them.
#include <map>
#include <string>

#include "tessera/core/array.h"

namespace tessera {

// Tensor name (dotted, as Module::named_parameters gives it) -> its value.
using StateDict = std::map<std::string, Array>;

}  // namespace tessera
