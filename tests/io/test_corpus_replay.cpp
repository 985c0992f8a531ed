// Replays the fuzzers' seed corpora (fuzz/corpus/<reader>/) through the readers and the fuzz harnesses
// without libFuzzer (corpus_replay.h), so CI exercises every seed and every saved reproducer.
#include "corpus_replay.h"
#include "tessera/data/idx.h"
#include "tessera/io/npy.h"
#include "tessera/io/safetensors.h"
#include "tessera/ir/graph.h"
#include "test_util.h"

using namespace tessera;
using namespace tessera::test;

TEST(CorpusReplay, Safetensors) {
  const ReplayCounts c = replay_corpus(
      "safetensors",
      [](const uint8_t* d, size_t n, const std::string& what) { io::load_safetensors_from_memory(d, n, what); },
      tessera_fuzz_safetensors);
  EXPECT_GE(c.parsed, 3) << "the corpus should hold valid files";
  EXPECT_GE(c.rejected, 3) << "the corpus should hold broken files";
}

TEST(CorpusReplay, Npy) {
  const ReplayCounts c = replay_corpus(
      "npy", [](const uint8_t* d, size_t n, const std::string& what) { io::load_npy_from_memory(d, n, what); },
      tessera_fuzz_npy);
  EXPECT_GE(c.parsed, 3);
  EXPECT_GE(c.rejected, 3);
}

TEST(CorpusReplay, Idx) {
  const ReplayCounts c = replay_corpus(
      "idx", [](const uint8_t* d, size_t n, const std::string& what) { data::read_idx_from_memory(d, n, what); },
      tessera_fuzz_idx);
  EXPECT_GE(c.parsed, 3);
  EXPECT_GE(c.rejected, 3);
}

TEST(CorpusReplay, IrText) {
  const ReplayCounts c = replay_corpus(
      "ir_text",
      [](const uint8_t* d, size_t n, const std::string&) {
        ir::parse_graph(std::string(reinterpret_cast<const char*>(d), n));
      },
      tessera_fuzz_ir_text);
  EXPECT_GE(c.parsed, 2);
  EXPECT_GE(c.rejected, 3);
}
