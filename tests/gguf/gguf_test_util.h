#pragma once
// Shared by the GGUF/quantization tests: where the llama.cpp test data lives, and small builders of
// GGUF images for the corruption tests.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <optional>
#include <string>

#include "tessera/io/gguf/gguf_reader.h"
#include "tessera/io/gguf/gguf_writer.h"

namespace tessera::test {

// $TESSERA_TESTDATA, else ../shared/testdata next to the repository root (found from this file's
// path); nullopt when neither holds the README of the test data.
inline std::optional<std::filesystem::path> testdata_dir() {
  std::vector<std::filesystem::path> candidates;
  if (const char* env = std::getenv("TESSERA_TESTDATA"); env != nullptr && *env != '\0') candidates.emplace_back(env);
  const std::filesystem::path repo = std::filesystem::path(TESSERA_SOURCE_DIR);
  candidates.push_back(repo / ".." / "shared" / "testdata");
  for (const auto& c : candidates) {
    std::error_code ec;
    if (std::filesystem::exists(c / "gguf" / "tiny-llama-f32.gguf", ec)) return std::filesystem::canonical(c, ec);
  }
  return std::nullopt;
}

#define TESSERA_REQUIRE_TESTDATA(dir)                                                                    \
  const auto dir##_opt = ::tessera::test::testdata_dir();                                                \
  if (!dir##_opt) {                                                                                      \
    GTEST_SKIP() << "llama.cpp test data not found: set TESSERA_TESTDATA or provide ../shared/testdata " \
                    "next to the repository (see its README)";                                           \
  }                                                                                                      \
  const std::filesystem::path dir = *dir##_opt

}  // namespace tessera::test
