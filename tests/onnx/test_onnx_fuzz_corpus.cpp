// Replays the ONNX fuzzer's seed corpus (fuzz/corpus/onnx, written by fuzz/make_onnx_corpus.py) without
// libFuzzer (io/corpus_replay.h): valid_* models must load, broken_* ones must be refused with
// tessera::Error, and every file goes through the fuzz harness (load, summaries, import).
#include "io/corpus_replay.h"
#include "tessera/io/onnx/onnx_model.h"

using namespace tessera;
using namespace tessera::test;

TEST(OnnxCorpus, SeedsLoadOrAreRejectedAsNamed) {
  const ReplayCounts c = replay_corpus(
      "onnx", [](const uint8_t* d, size_t n, const std::string& what) { io::onnx::parse_onnx_model(d, n, what); },
      tessera_fuzz_onnx);
  EXPECT_GE(c.parsed, 5);
  EXPECT_GE(c.rejected, 6);
}
