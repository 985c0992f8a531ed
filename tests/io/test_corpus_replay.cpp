// Replays the fuzzers' seed corpora (fuzz/corpus/<reader>/) through the readers without libFuzzer, so
// CI exercises every seed: valid_* files must load, broken_* files must throw tessera::Error, and any
// other file (e.g. a reproducer saved from a fuzzing run) must do one or the other, never crash.
#include "io_test_util.h"
#include "tessera/data/idx.h"
#include "tessera/io/npy.h"
#include "tessera/io/safetensors.h"
#include "test_util.h"

using namespace tessera;
using namespace tessera::test;
namespace fs = std::filesystem;

namespace {

struct ReplayCounts {
  int files = 0, parsed = 0, rejected = 0;
};

template <class Reader>
ReplayCounts replay(const std::string& name, Reader reader) {
  ReplayCounts counts;
  const fs::path dir = corpus_dir(name);
  EXPECT_TRUE(fs::is_directory(dir)) << dir;
  if (!fs::is_directory(dir)) return counts;
  for (const auto& e : fs::directory_iterator(dir)) {
    if (!e.is_regular_file()) continue;
    ++counts.files;
    const std::string bytes = read_bytes(e.path().string());
    const std::string file = e.path().filename().string();
    try {
      reader(u8(bytes), bytes.size(), e.path().string());
      ++counts.parsed;
      EXPECT_NE(file.rfind("broken_", 0), 0u) << name << "/" << file << " should have been rejected";
    } catch (const Error& err) {
      ++counts.rejected;
      EXPECT_NE(file.rfind("valid_", 0), 0u) << name << "/" << file << " should load but threw: " << err.what();
    }
  }
  return counts;
}

}  // namespace

TEST(CorpusReplay, Safetensors) {
  const ReplayCounts c = replay("safetensors", [](const uint8_t* d, size_t n, const std::string& what) {
    io::load_safetensors_from_memory(d, n, what);
  });
  EXPECT_GE(c.parsed, 3) << "the corpus should hold valid files";
  EXPECT_GE(c.rejected, 3) << "the corpus should hold broken files";
}

TEST(CorpusReplay, Npy) {
  const ReplayCounts c =
      replay("npy", [](const uint8_t* d, size_t n, const std::string& what) { io::load_npy_from_memory(d, n, what); });
  EXPECT_GE(c.parsed, 3);
  EXPECT_GE(c.rejected, 3);
}

TEST(CorpusReplay, Idx) {
  const ReplayCounts c = replay(
      "idx", [](const uint8_t* d, size_t n, const std::string& what) { data::read_idx_from_memory(d, n, what); });
  EXPECT_GE(c.parsed, 3);
  EXPECT_GE(c.rejected, 3);
}

TEST(CorpusReplay, IrText) {
  const ReplayCounts c = replay("ir_text", [](const uint8_t* d, size_t n, const std::string&) {
    const ir::Graph g = ir::parse_graph(std::string(reinterpret_cast<const char*>(d), n));
    const std::string printed = ir::print_graph(g);
    EXPECT_EQ(ir::print_graph(ir::parse_graph(printed)), printed);
  });
  EXPECT_GE(c.parsed, 2);
  EXPECT_GE(c.rejected, 3);
}
