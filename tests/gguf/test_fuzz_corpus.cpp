// Replays the GGUF fuzzer's seed corpus (fuzz/corpus/gguf) without libFuzzer: valid_* files must load,
// broken_* files must be rejected with tessera::Error, any other file (a saved reproducer) may do
// either but must not crash. Loaded files are also decoded and written back, as the fuzzer does.
#include <filesystem>
#include <fstream>

#include "gguf_test_util.h"
#include "test_util.h"

using namespace tessera;
namespace fs = std::filesystem;
namespace gguf = tessera::io::gguf;

TEST(GgufCorpus, SeedsLoadOrAreRejectedAsNamed) {
  const fs::path dir = fs::path(__FILE__).parent_path().parent_path().parent_path() / "fuzz" / "corpus" / "gguf";
  ASSERT_TRUE(fs::is_directory(dir)) << dir;
  int valid = 0, broken = 0;
  for (const auto& e : fs::directory_iterator(dir)) {
    const std::string name = e.path().filename().string();
    std::ifstream in(e.path(), std::ios::binary);
    const std::string bytes((std::istreambuf_iterator<char>(in)), {});
    try {
      const gguf::Reader r =
          gguf::Reader::from_memory(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size(), name);
      EXPECT_NE(name.rfind("broken_", 0), 0u) << name << " should have been rejected";
      valid += name.rfind("valid_", 0) == 0;
      gguf::Writer w(r.alignment());
      w.copy_metadata(r);
      for (const gguf::TensorInfo& t : r.tensors()) {
        if (quant::type_traits(t.type).can_dequantize) {
          EXPECT_EQ(r.dequantize(t).numel(), t.numel()) << name;
        }
        w.add_tensor(t.name, t.type, t.ne, std::span<const uint8_t>(r.tensor_data(t), t.nbytes));
      }
      const std::string again = w.serialize();
      const gguf::Reader r2 =
          gguf::Reader::from_memory(reinterpret_cast<const uint8_t*>(again.data()), again.size(), name);
      EXPECT_EQ(r2.tensors().size(), r.tensors().size()) << name;
    } catch (const Error& err) {
      EXPECT_NE(name.rfind("valid_", 0), 0u) << name << " should load but threw: " << err.what();
      broken += name.rfind("broken_", 0) == 0;
    }
  }
  EXPECT_GE(valid, 5);
  EXPECT_GE(broken, 15);
}
