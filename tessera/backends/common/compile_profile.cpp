#include "tessera/backends/common/compile_profile.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>

#include <fmt/format.h>

namespace tessera::backends::common {

namespace {

thread_local CompileProfile* open_profile = nullptr;

double elapsed_ms(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t).count();
}

}  // namespace

bool CompileProfile::enabled() {
  static const bool on = [] {
    const char* env = std::getenv("TESSERA_PROFILE_COMPILE");
    return env != nullptr && std::strcmp(env, "1") == 0;
  }();
  return on;
}

CompileProfile::CompileProfile(std::string what) : what_(std::move(what)), start_(std::chrono::steady_clock::now()) {
  if (!enabled()) return;
  active_ = true;
  previous_ = open_profile;
  open_profile = this;
}

CompileProfile::~CompileProfile() {
  if (!active_) return;
  open_profile = previous_;
  std::fprintf(stderr, "%s\n", line().c_str());
}

void CompileProfile::add(const char* phase, double ms) {
  for (Phase& p : phases_) {
    if (std::strcmp(p.name, phase) == 0) {
      p.ms += ms;
      p.count += 1;
      return;
    }
  }
  phases_.push_back({phase, ms, 1});
}

std::string CompileProfile::line() const {
  std::string out = fmt::format("{} {:.2f} ms:", what_, elapsed_ms(start_));
  for (const Phase& p : phases_) {
    out += p.count > 1 ? fmt::format(" {} {:.2f} x{},", p.name, p.ms, p.count) : fmt::format(" {} {:.2f},", p.name, p.ms);
  }
  if (!phases_.empty()) out.pop_back();
  return out;
}

CompilePhase::CompilePhase(const char* phase)
    : phase_(phase), profile_(open_profile), start_(profile_ != nullptr ? std::chrono::steady_clock::now()
                                                                        : std::chrono::steady_clock::time_point{}) {}

CompilePhase::~CompilePhase() {
  if (profile_ != nullptr) profile_->add(phase_, elapsed_ms(start_));
}

}  // namespace tessera::backends::common
