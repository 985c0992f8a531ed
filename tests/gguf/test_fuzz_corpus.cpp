// Replays the GGUF fuzzer's seed corpus (fuzz/corpus/gguf) without libFuzzer (io/corpus_replay.h):
// valid_* files must load, broken_* files must be rejected with tessera::Error, any other file (a
// saved reproducer) may do either, and every file goes through the fuzz harness itself (decode, view,
// write back, re-read, write again), which must find no broken invariant.
#include "io/corpus_replay.h"
#include "tessera/io/gguf/gguf_reader.h"
#include "test_util.h"

using namespace tessera;
using namespace tessera::test;

TEST(GgufCorpus, SeedsLoadOrAreRejectedAsNamed) {
  int valid = 0, broken = 0;
  const ReplayCounts c = replay_corpus(
      "gguf",
      [](const uint8_t* d, size_t n, const std::string& what) { io::gguf::Reader::from_memory(d, n, what); },
      tessera_fuzz_gguf);
  for (const auto& e : std::filesystem::directory_iterator(corpus_dir("gguf"))) {
    const std::string name = e.path().filename().string();
    valid += name.rfind("valid_", 0) == 0;
    broken += name.rfind("broken_", 0) == 0;
  }
  EXPECT_GE(valid, 5);
  EXPECT_GE(broken, 15);
  EXPECT_GE(c.parsed, valid);
  EXPECT_GE(c.rejected, broken);
}
