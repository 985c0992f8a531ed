// What `tessera inspect FILE.gguf` prints for hostile files: keys and tensor names are escaped (no
// terminal escapes or forged lines) and cut at 64 characters, so the text stays linear in the file.
#include "gguf_test_util.h"
#include "tessera/io/gguf/gguf_summary.h"
#include "test_util.h"

using namespace tessera;
using namespace tessera::io::gguf;
using quant::GgmlType;

namespace {

Reader read_back(const Writer& w) {
  const std::string bytes = w.serialize();
  return Reader::from_memory(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size(), "hostile.gguf");
}

size_t count(const std::string& s, char c) {
  return static_cast<size_t>(std::count(s.begin(), s.end(), c));
}

}  // namespace

TEST(GgufSummary, OneLongKeyDoesNotWidenEveryLine) {
  // One 8 MB key among 2,000 used to pad all 2,000 lines to 8 MB (4 GB of text, then bad_alloc).
  Writer w;
  w.set(std::string(8 << 20, 'k'), Value::u8(1));
  for (int i = 0; i < 2000; ++i) w.set(fmt::format("key.{}", i), Value::u32(static_cast<uint64_t>(i)));
  w.add_tensor(std::string(63, 't'), GgmlType::f32, {1}, std::vector<uint8_t>(4, 0));
  w.add_tensor("short", GgmlType::f32, {1}, std::vector<uint8_t>(4, 0));
  const std::string text = describe_file(read_back(w));
  EXPECT_LT(text.size(), 2002u * 120) << "output must stay linear in the number of entries";
  EXPECT_NE(text.find(std::string(64, 'k') + "..."), std::string::npos);
  EXPECT_EQ(text.find(std::string(65, 'k')), std::string::npos);
  EXPECT_NE(text.find("  key.1999 "), std::string::npos);
}

TEST(GgufSummary, KeysAndNamesCannotForgeTerminalOutput) {
  Writer w;
  w.set("evil\x1b[2J\nforged.key", Value::string("value\x1b[31m"));
  w.add_tensor("t\x1b]0;pwned\x07\nforged", GgmlType::f32, {1}, std::vector<uint8_t>(4, 0));
  const Reader r = read_back(w);
  const std::string text = describe_file(r);
  EXPECT_EQ(count(text, '\x1b'), 0u) << text;
  EXPECT_EQ(count(text, '\x07'), 0u) << text;
  EXPECT_NE(text.find("evil\\x1b[2J\\nforged.key"), std::string::npos) << text;
  EXPECT_NE(text.find("\"value\\x1b[31m\""), std::string::npos) << text;
  EXPECT_NE(text.find("t\\x1b]0;pwned\\x07\\nforged"), std::string::npos) << text;
  EXPECT_EQ(text.find("\nforged"), std::string::npos) << text;
  const std::string one = describe_tensor(r, r.tensors()[0]);
  EXPECT_EQ(count(one, '\x1b'), 0u) << one;
  // Error messages escape names from the file too.
  EXPECT_TESSERA_ERROR(r.get("no\x1b[2Jsuch"), "no metadata key 'no\\x1b[2Jsuch'");
  EXPECT_TESSERA_ERROR(r.tensor("\x1b[2J"), "no tensor named '\\x1b[2J'");
}
