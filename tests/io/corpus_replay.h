#pragma once
// Replays a fuzz seed corpus (fuzz/corpus/<name>/) without libFuzzer, so CI covers every seed and
// every saved reproducer: each file goes through the reader (valid_* files must load, broken_* files
// must throw tessera::Error, any other file may do either) and then through the fuzz harness itself
// (fuzz/fuzz_target.h), which must neither throw nor find a broken invariant.
#include <gtest/gtest.h>

#include <filesystem>
#include <functional>
#include <string>

#include "fuzz/fuzz_target.h"
#include "io_test_util.h"
#include "tessera/core/error.h"

namespace tessera::test {

struct ReplayCounts {
  int files = 0, parsed = 0, rejected = 0;
};

using CorpusReader = std::function<void(const uint8_t* data, size_t size, const std::string& what)>;
using FuzzHarness = int (*)(const uint8_t* data, size_t size);

inline ReplayCounts replay_corpus(const std::string& name, const CorpusReader& reader, FuzzHarness harness) {
  ReplayCounts counts;
  const std::filesystem::path dir = corpus_dir(name);
  EXPECT_TRUE(std::filesystem::is_directory(dir)) << dir;
  if (!std::filesystem::is_directory(dir)) return counts;
  for (const auto& e : std::filesystem::recursive_directory_iterator(dir)) {
    if (!e.is_regular_file()) continue;
    ++counts.files;
    const std::string bytes = read_bytes(e.path().string());
    const std::string file = std::filesystem::relative(e.path(), dir).string();
    SCOPED_TRACE(name + "/" + file);
    try {
      reader(u8(bytes), bytes.size(), e.path().string());
      ++counts.parsed;
      EXPECT_NE(file.rfind("broken_", 0), 0u) << "should have been rejected";
    } catch (const Error& err) {
      ++counts.rejected;
      EXPECT_NE(file.rfind("valid_", 0), 0u) << "should load but threw: " << err.what();
    }
    try {
      harness(u8(bytes), bytes.size());
    } catch (const fuzz::BrokenInvariant& broken) {
      ADD_FAILURE() << broken.what();
    } catch (const std::exception& other) {
      ADD_FAILURE() << "the fuzz harness threw " << other.what();
    }
  }
  return counts;
}

}  // namespace tessera::test
