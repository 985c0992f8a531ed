#include "tessera/backends/common/program_verifier.h"

#include <fmt/format.h>

#include <cstdlib>
#include <cstring>

namespace tessera::backends::common {
namespace {

const char* kind_name(BufferKind k) {
  switch (k) {
    case BufferKind::arena:
      return "arena";
    case BufferKind::input:
      return "input";
    case BufferKind::output:
      return "output";
    case BufferKind::constant:
      return "constant";
  }
  return "?";
}

std::string buffer_name(const Program& p, int32_t b) {
  const BufferInfo& info = p.buffers[static_cast<size_t>(b)];
  if (info.kind == BufferKind::arena) return fmt::format("arena buffer {} ({} bytes)", b, info.bytes);
  return fmt::format("{} buffer {} (slot {})", kind_name(info.kind), b, info.slot);
}

}  // namespace

std::optional<ProgramFault> verify_program(const Program& p, const std::vector<runtime::StepAccess>& access,
                                           bool check_plan) {
  if (access.size() != p.steps.size()) {
    return ProgramFault{-1, fmt::format("{} steps but {} access lists", p.steps.size(), access.size())};
  }
  const size_t nb = p.buffers.size();
  std::vector<bool> written(nb, false);
  for (size_t b = 0; b < nb; ++b) {
    const BufferKind k = p.buffers[b].kind;
    written[b] = k == BufferKind::input || k == BufferKind::constant;
  }
  for (size_t s = 0; s < access.size(); ++s) {
    const auto step = static_cast<int32_t>(s);
    for (int32_t b : access[s].reads) {
      if (b < 0 || static_cast<size_t>(b) >= nb) {
        return ProgramFault{
            step, fmt::format("step {} ({}) reads buffer {}, which does not exist", s, p.steps[s]->describe(), b)};
      }
      if (!written[static_cast<size_t>(b)]) {
        return ProgramFault{step, fmt::format("step {} ({}) reads {} before any step writes it", s,
                                              p.steps[s]->describe(), buffer_name(p, b))};
      }
    }
    for (int32_t b : access[s].writes) {
      if (b < 0 || static_cast<size_t>(b) >= nb) {
        return ProgramFault{
            step, fmt::format("step {} ({}) writes buffer {}, which does not exist", s, p.steps[s]->describe(), b)};
      }
      const BufferKind k = p.buffers[static_cast<size_t>(b)].kind;
      if (k == BufferKind::input || k == BufferKind::constant) {
        return ProgramFault{step, fmt::format("step {} ({}) writes {}, which is read-only", s, p.steps[s]->describe(),
                                              buffer_name(p, b))};
      }
      written[static_cast<size_t>(b)] = true;
    }
  }
  std::vector<bool> output_written(static_cast<size_t>(p.num_outputs), false);
  for (size_t b = 0; b < nb; ++b) {
    const BufferInfo& info = p.buffers[b];
    if (info.kind != BufferKind::output) continue;
    if (info.slot < 0 || info.slot >= p.num_outputs) {
      return ProgramFault{-1, fmt::format("{} names output {} of {}", buffer_name(p, static_cast<int32_t>(b)),
                                          info.slot, p.num_outputs)};
    }
    if (written[b]) output_written[static_cast<size_t>(info.slot)] = true;
  }
  for (size_t k = 0; k < output_written.size(); ++k) {
    if (!output_written[k]) return ProgramFault{-1, fmt::format("no step writes output {}", k)};
  }
  if (check_plan) {
    const std::string plan = runtime::check_memory_plan(p.arena_requests, p.memory);
    if (!plan.empty()) return ProgramFault{-1, "unsound memory plan: " + plan};
  }
  return std::nullopt;
}

bool thorough_program_checks(size_t arena_buffers) {
#ifndef NDEBUG
  (void)arena_buffers;
  return true;
#else
  static const bool forced = [] {
    const char* env = std::getenv("TESSERA_VERIFY_PROGRAM");
    return env != nullptr && *env != '\0' && std::strcmp(env, "0") != 0;
  }();
  return forced || arena_buffers <= 256;
#endif
}

}  // namespace tessera::backends::common
