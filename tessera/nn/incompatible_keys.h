#pragma once
// What Module::load_state_dict reports, as PyTorch's _IncompatibleKeys: the names the module has that
// the state dict lacks, and the names the state dict has that the module lacks. A common cause is a
// prefix on one side only ("model." from a training checkpoint, "module." from a wrapper), which
// explain_key_differences recognises so that the error says what to strip or add.
#include <string>
#include <vector>

namespace tessera::nn {

// The names of one load that did not pair up, each list sorted.
struct IncompatibleKeys {
  std::vector<std::string> missing_keys;     // in the module, not in the state dict
  std::vector<std::string> unexpected_keys;  // in the state dict, not in the module
  bool empty() const { return missing_keys.empty() && unexpected_keys.empty(); }  // every name paired up
};

// A sentence naming a prefix that turns unexpected names into missing ones (or back), with an example
// and how many names it explains; empty when no prefix explains any name.
std::string explain_key_differences(const IncompatibleKeys& keys);

}  // namespace tessera::nn
