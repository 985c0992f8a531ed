#include "tessera/ir/origin.h"

namespace tessera::ir {
namespace {

std::shared_ptr<const std::string>& slot() {
  thread_local std::shared_ptr<const std::string> current;
  return current;
}

}  // namespace

OriginScope::OriginScope(std::string_view label) : saved_(slot()) {
  std::string joined = saved_ ? *saved_ + " > " : std::string();
  joined += label;
  slot() = std::make_shared<const std::string>(std::move(joined));
}

OriginScope::OriginScope(const std::shared_ptr<const std::string>& origin, std::string_view prefix) : saved_(slot()) {
  if (!origin) return;  // nothing to continue: keep the surrounding scope
  if (prefix.empty()) {
    slot() = origin;
  } else {
    std::string label(prefix);
    label += ' ';
    label += *origin;
    slot() = std::make_shared<const std::string>(std::move(label));
  }
}

OriginScope::~OriginScope() {
  slot() = std::move(saved_);
}

const std::shared_ptr<const std::string>& current_origin() {
  return slot();
}

}  // namespace tessera::ir
