#pragma once
// One exception type for every user-facing failure. Messages say what went wrong, where (op, tensor,
// file, offset) and what was expected, so that the caller can act without reading our source.
#include <stdexcept>
#include <string>

#include <fmt/format.h>

namespace tessera {

// Every error Tessera reports to its caller: a message that names what was wrong and where.
class Error : public std::runtime_error {
 public:
  explicit Error(const std::string& message) : std::runtime_error(message) {}
};

// Throws tessera::Error with the fmt-formatted message (checked at compile time against the arguments).
template <class... Args>
[[noreturn]] void fail(fmt::format_string<Args...> f, Args&&... args) {
  throw Error(fmt::format(f, std::forward<Args>(args)...));
}

}  // namespace tessera

// Throws tessera::Error with a formatted message when `cond` is false.
#define TESSERA_CHECK(cond, ...)              \
  do {                                        \
    if (!(cond)) ::tessera::fail(__VA_ARGS__); \
  } while (0)
