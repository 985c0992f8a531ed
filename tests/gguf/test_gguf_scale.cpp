// GGUF files with very many keys or tensors are written and read in linear time: duplicate checks
// use hash tables (they used to scan every earlier entry, so a million empty tensors took minutes).
// Guarded by a generous time bound, a quadratic scan of these sizes takes far longer.
#include <chrono>

#include "gguf_test_util.h"
#include "io/io_test_util.h"
#include "tessera/io/gguf/quantize_file.h"
#include "test_util.h"

using namespace tessera;
using namespace tessera::io::gguf;
using quant::GgmlType;

TEST(GgufScale, HundredsOfThousandsOfTensorsAndKeysInLinearTime) {
  constexpr int kEntries = 300'000;
  const auto t0 = std::chrono::steady_clock::now();
  Writer w;
  for (int i = 0; i < kEntries; ++i) {
    const std::string name = fmt::format("t{}", i);
    w.add_tensor(name, GgmlType::f32, {0}, std::span<const uint8_t>());
    w.set("k." + name, Value::u8(1));
  }
  EXPECT_TESSERA_ERROR(w.add_tensor("t7", GgmlType::f32, {0}, std::span<const uint8_t>()), "duplicate tensor name 't7'");
  w.set("k.t7", Value::u8(2));
  EXPECT_EQ(w.find("k.t7")->as_u64(), 2u);
  EXPECT_EQ(w.metadata().size(), static_cast<size_t>(kEntries));
  w.remove("k.t0");
  EXPECT_EQ(w.find("k.t0"), nullptr);
  EXPECT_EQ(w.find("k.t1")->as_u64(), 1u);
  w.append("k.t1", Value::u8(3));
  EXPECT_EQ(w.metadata().back().first, "k.t1");
  EXPECT_EQ(w.find("k.t2")->as_u64(), 1u);

  test::ScratchDir dir;
  w.write(dir.file("many.gguf"));
  QuantizeOptions o;
  o.type = GgmlType::q8_0;
  const auto plans = quantize_file(dir.file("many.gguf"), dir.file("out.gguf"), o);
  EXPECT_EQ(plans.size(), static_cast<size_t>(kEntries));
  const Reader r = Reader::open(dir.file("out.gguf"));
  EXPECT_EQ(r.tensors().size(), static_cast<size_t>(kEntries));
  EXPECT_NE(r.find_tensor("t299999"), nullptr);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::printf("[ timing ] %d tensors and keys: written, quantized and read in %.1f s\n", kEntries, seconds);
  EXPECT_LT(seconds, 120) << "quadratic behaviour is back";
}
