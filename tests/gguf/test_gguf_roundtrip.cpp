// GGUF writer -> reader round trips: every metadata value type (arrays of arrays included), every
// tensor type, custom alignment, zero-copy views, and the byte layout llama.cpp expects.
#include <cstring>

#include "gguf_test_util.h"
#include "io/io_test_util.h"
#include "tessera/quant/quantize.h"
#include "test_util.h"

using namespace tessera;
using namespace tessera::test;
using namespace tessera::io::gguf;
using quant::GgmlType;

namespace {

Writer writer_with_every_value_type() {
  Writer w;
  w.set("general.architecture", Value::string("test"));
  w.set("k.u8", Value::u8(200));
  w.set("k.i8", Value::i8(-100));
  w.set("k.u16", Value::u16(60000));
  w.set("k.i16", Value::i16(-30000));
  w.set("k.u32", Value::u32(4000000000u));
  w.set("k.i32", Value::i32(-2000000000));
  w.set("k.u64", Value::u64(18000000000000000000ull));
  w.set("k.i64", Value::i64(-9000000000000000000ll));
  w.set("k.f32", Value::f32(0.1f));
  w.set("k.f64", Value::f64(0.1));
  w.set("k.bool", Value::boolean(true));
  w.set("k.string", Value::string(std::string("tab\there, nul \0 inside", 22)));
  w.set("k.empty_string", Value::string(""));
  w.set("a.u8", Value::unsigned_array(ValueType::u8, {0, 1, 255}));
  w.set("a.i16", Value::signed_array(ValueType::i16, {-32768, 0, 32767}));
  w.set("a.u64", Value::unsigned_array(ValueType::u64, {~0ull}));
  w.set("a.f32", Value::f32_array({1.5f, -0.0f}));
  w.set("a.f64", Value::f64_array({}));
  w.set("a.bool", Value::bool_array({true, false, true}));
  w.set("a.string", Value::string_array({"a", "", "ccc"}));
  w.set("a.nested", Value::array_of_arrays({Value::signed_array(ValueType::i32, {1, 2}), Value::string_array({"x"}),
                                            Value::array_of_arrays({Value::f32_array({3.0f})})}));
  return w;
}

}  // namespace

TEST(GgufRoundTrip, EveryMetadataTypeSurvives) {
  const Writer w = writer_with_every_value_type();
  const std::string bytes = w.serialize();
  const Reader r = Reader::from_memory(u8(bytes), bytes.size(), "image");
  EXPECT_EQ(r.version(), 3u);
  ASSERT_EQ(r.metadata().size(), w.metadata().size());
  for (size_t i = 0; i < w.metadata().size(); ++i) {
    EXPECT_EQ(r.metadata()[i].first, w.metadata()[i].first);
    EXPECT_TRUE(r.metadata()[i].second == w.metadata()[i].second) << r.metadata()[i].first;
  }
  EXPECT_EQ(r.get("k.u8").type(), ValueType::u8);
  EXPECT_EQ(r.get("k.i64").as_i64(), -9000000000000000000ll);
  EXPECT_EQ(r.get("k.u64").as_u64(), 18000000000000000000ull);
  EXPECT_EQ(r.get("k.f32").as_f64(), static_cast<double>(0.1f));
  EXPECT_EQ(r.get("k.string").as_string().size(), 22u);
  EXPECT_EQ(r.get("a.string").as_strings(), (std::vector<std::string>{"a", "", "ccc"}));
  EXPECT_EQ(r.get("a.i16").as_i64s(), (std::vector<int64_t>{-32768, 0, 32767}));
  EXPECT_EQ(r.get("a.f64").elem_type(), ValueType::f64);
  EXPECT_EQ(r.get("a.f64").array_size(), 0u);
  EXPECT_EQ(r.get("a.nested").to_string(),
            "[array x 3] [[i32 x 2] [1, 2], [string x 1] [\"x\"], [array x 1] [[f32 x 1] [3]]]");
  // Serializing what was read gives the same bytes.
  Writer again;
  again.copy_metadata(r);
  EXPECT_EQ(again.serialize(), bytes);
}

TEST(GgufRoundTrip, TypedAccessorsNameTheKeyOnMismatch) {
  const std::string bytes = writer_with_every_value_type().serialize();
  const Reader r = Reader::from_memory(u8(bytes), bytes.size(), "image");
  EXPECT_TESSERA_ERROR(r.get("k.string").as_u64("k.string"), "k.string", "expected an integer", "string");
  EXPECT_TESSERA_ERROR(r.get("a.u8").as_strings("a.u8"), "a.u8", "array of strings", "array of u8");
  EXPECT_TESSERA_ERROR(r.get("k.i8").as_u64("k.i8"), "non-negative", "-100");
  EXPECT_TESSERA_ERROR(r.get("missing.key"), "image", "no metadata key 'missing.key'");
  EXPECT_TESSERA_ERROR(Value::u8(256), "256", "u8");
  EXPECT_TESSERA_ERROR(Value::i32(int64_t{1} << 40), "i32");
}

TEST(GgufRoundTrip, TensorsOfEveryTypeAndTheirViews) {
  ScratchDir dir;
  Writer w;
  std::vector<float> values(2 * 256);
  for (size_t i = 0; i < values.size(); ++i) values[i] = std::sin(static_cast<float>(i)) * 0.3f;
  std::vector<std::string> names;
  for (GgmlType type : quant::quantizable_types()) {
    const std::string name = std::string("t.") + quant::type_name(type);
    w.add_tensor(name, type, {256, 2}, quant::quantize(type, values.data(), 2, 256));
    names.push_back(name);
  }
  w.add_array("ints", Array::from_vector<int32_t>({1, -2, 3, 4, 5, 6}, {2, 3}));
  w.add_array("doubles", Array::from_vector<double>({0.5, 1.5}, {2}));
  const std::string path = dir.file("all.gguf");
  w.write(path);
  const Reader r = Reader::open(path);
  ASSERT_EQ(r.tensors().size(), names.size() + 2);
  for (const std::string& name : names) {
    const TensorInfo& t = r.tensor(name);
    SCOPED_TRACE(name);
    EXPECT_EQ(t.offset % 32, 0u);
    EXPECT_EQ(shape_str(t.shape()), "[2, 256]");
    const std::vector<float> want =
        quant::dequantize(t.type, quant::quantize(t.type, values.data(), 2, 256).data(), t.nbytes, 2, 256);
    const Array got = r.dequantize(t);
    EXPECT_EQ(std::memcmp(got.data<float>(), want.data(), want.size() * 4), 0);
  }
  // Plain dtypes view the mapped file without a copy; block types view their raw bytes.
  const Array f32 = r.view("t.f32");
  EXPECT_EQ(f32.dtype(), DType::f32);
  EXPECT_EQ(f32.raw_data(), static_cast<const void*>(r.tensor_data(r.tensor("t.f32"))));
  EXPECT_EQ(f32.data<float>()[3], values[3]);
  const Array q4 = r.view("t.q4_k");
  EXPECT_EQ(q4.dtype(), DType::u8);
  EXPECT_EQ(shape_str(q4.shape()), "[2, 144]");
  EXPECT_EQ(r.view("ints").to_vector<int32_t>(), (std::vector<int32_t>{1, -2, 3, 4, 5, 6}));
  EXPECT_EQ(r.view("doubles").dtype(), DType::f64);
  // Views are copy-on-write: writing through one leaves the file alone.
  const std::string before = read_bytes(path);
  f32.data<float>()[0] = 123.0f;
  EXPECT_EQ(read_bytes(path), before);
  EXPECT_EQ(Reader::open(path).view("t.f32").data<float>()[0], values[0]);
  // A view keeps the mapping alive after its reader is gone.
  Array kept;
  {
    const Reader tmp = Reader::open(path);
    kept = tmp.view("t.bf16");
  }
  EXPECT_EQ(kept.numel(), 512);
  EXPECT_NEAR(kept.astype(DType::f32).data<float>()[5], values[5], 1e-2);
}

TEST(GgufRoundTrip, CustomAlignmentIsWrittenAndHonoured) {
  Writer w(64);
  w.set("general.name", Value::string("aligned"));
  w.add_tensor("a", GgmlType::f32, {3}, std::vector<uint8_t>(12, 1));
  w.add_tensor("b", GgmlType::f16, {5}, std::vector<uint8_t>(10, 2));
  const std::string bytes = w.serialize();
  const Reader r = Reader::from_memory(u8(bytes), bytes.size(), "aligned");
  EXPECT_EQ(r.alignment(), 64u);
  EXPECT_EQ(r.get("general.alignment").as_u64(), 64u);
  EXPECT_EQ(r.data_offset() % 64, 0u);
  EXPECT_EQ(r.tensor("b").offset, 64u);
  EXPECT_EQ(bytes.size() % 64, 0u);
  EXPECT_TESSERA_ERROR(Writer(48), "alignment 48");
  EXPECT_TESSERA_ERROR(w.set("general.alignment", Value::u32(16)), "general.alignment");
}

TEST(GgufRoundTrip, WriterLayoutIsWhatLlamaCppExpects) {
  // Header fields, then offsets increasing in insertion order with padding to 32 between tensors.
  Writer w;
  w.add_tensor("x", GgmlType::f32, {5}, std::vector<uint8_t>(20, 7));
  w.add_tensor("y", GgmlType::q8_0, {32, 2}, std::vector<uint8_t>(68, 9));
  const std::string b = w.serialize();
  uint32_t magic, version;
  uint64_t tensors, kvs;
  std::memcpy(&magic, b.data(), 4);
  std::memcpy(&version, b.data() + 4, 4);
  std::memcpy(&tensors, b.data() + 8, 8);
  std::memcpy(&kvs, b.data() + 16, 8);
  EXPECT_EQ(std::string(b.data(), 4), "GGUF");
  EXPECT_EQ(version, 3u);
  EXPECT_EQ(tensors, 2u);
  EXPECT_EQ(kvs, 0u);
  const Reader r = Reader::from_memory(u8(b), b.size(), "layout");
  EXPECT_EQ(r.tensor("x").offset, 0u);
  EXPECT_EQ(r.tensor("y").offset, 32u);
  EXPECT_EQ(b.size(), r.data_offset() + 32 + 96);
  EXPECT_EQ(static_cast<uint8_t>(b[r.data_offset() + 20]), 0);  // padding is zeros
}

TEST(GgufRoundTrip, WriterRejectsInconsistentTensors) {
  Writer w;
  EXPECT_TESSERA_ERROR(w.add_tensor("w", GgmlType::q4_0, {32, 2}, std::vector<uint8_t>(35)), "'w'", "needs 36 bytes",
                       "got 35");
  EXPECT_TESSERA_ERROR(w.add_tensor("w", GgmlType::q4_0, {30}, std::vector<uint8_t>(18)), "30 values", "q4_0");
  EXPECT_TESSERA_ERROR(w.add_tensor(std::string(64, 'n'), GgmlType::f32, {1}, std::vector<uint8_t>(4)), "1 to 63");
  EXPECT_TESSERA_ERROR(w.add_tensor("x", GgmlType::f32, {1, 1, 1, 1, 1}, std::vector<uint8_t>(4)), "5 dimensions");
  w.add_tensor("x", GgmlType::f32, {1}, std::vector<uint8_t>(4));
  EXPECT_TESSERA_ERROR(w.add_tensor("x", GgmlType::f32, {1}, std::vector<uint8_t>(4)), "duplicate tensor name 'x'");
  EXPECT_TESSERA_ERROR(w.add_array("b", Array::from_vector<bool>({true}, {1})), "'b'", "bool");
}

TEST(GgufRoundTrip, WriteIsAtomic) {
  ScratchDir dir;
  const std::string path = dir.file("model.gguf");
  write_bytes(path, "old contents");
  Writer w;
  w.add_tensor("x", GgmlType::f32, {1}, std::vector<uint8_t>(4));
  EXPECT_TESSERA_ERROR(w.write(dir.file("missing/dir/model.gguf")), "missing/dir");
  EXPECT_EQ(read_bytes(path), "old contents");
  w.write(path);
  EXPECT_EQ(read_bytes(path), w.serialize());
  for (const auto& entry : std::filesystem::directory_iterator(dir.path())) {
    EXPECT_EQ(entry.path().filename().string().find(".tmp"), std::string::npos) << entry.path();
  }
}
