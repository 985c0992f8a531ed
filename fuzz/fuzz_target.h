#pragma once
// How each harness in fuzz/ is built. Under libFuzzer (fuzz/build.sh) a harness is the program's
// LLVMFuzzerTestOneInput and a broken invariant traps, so that libFuzzer saves the input. The test
// suite compiles the same harnesses with TESSERA_FUZZ_REPLAY (cmake/fuzz_replay.cmake) and replays
// every corpus file through them: each harness is then tessera_fuzz_<name>() and a broken invariant
// throws tessera::fuzz::BrokenInvariant naming the check, so CI checks exactly what the fuzzers check.
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>

namespace tessera::fuzz {

// Reader errors are one short line of plain text: no control characters (text from the file is
// escaped, tessera/core/printable.h) and nothing that grows with the input.
inline bool is_short_plain_message(const char* message) {
  size_t n = 0;
  for (const char* p = message; *p != '\0'; ++p) {
    const unsigned char c = static_cast<unsigned char>(*p);
    if (c < 0x20 || c == 0x7f || ++n > 2048) return false;
  }
  return true;
}

}  // namespace tessera::fuzz

#ifdef TESSERA_FUZZ_REPLAY

namespace tessera::fuzz {
struct BrokenInvariant : std::logic_error {
  using std::logic_error::logic_error;
};
}  // namespace tessera::fuzz

#define TESSERA_FUZZ_TARGET(name) int tessera_fuzz_##name(const uint8_t* data, size_t size)
#define FUZZ_CHECK(cond)                                                                              \
  do {                                                                                                \
    if (!(cond)) throw ::tessera::fuzz::BrokenInvariant(std::string(__FILE__ ": broken invariant: ") + #cond); \
  } while (0)

TESSERA_FUZZ_TARGET(safetensors);
TESSERA_FUZZ_TARGET(npy);
TESSERA_FUZZ_TARGET(idx);
TESSERA_FUZZ_TARGET(ir_text);
TESSERA_FUZZ_TARGET(gguf);
TESSERA_FUZZ_TARGET(onnx);

#else

#define TESSERA_FUZZ_TARGET(name) extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size)
#define FUZZ_CHECK(cond)        \
  do {                          \
    if (!(cond)) __builtin_trap(); \
  } while (0)

#endif
