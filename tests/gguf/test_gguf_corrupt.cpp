// Hostile and damaged GGUF input: every prefix of a valid file, flipped bytes, and hand-made headers
// with impossible counts, lengths, types, dimensions, offsets and alignments. Each must raise
// tessera::Error naming the problem (and, for structure errors, the byte offset); none may read out of
// bounds (this binary runs under ASan in CI).
#include <cstring>
#include <random>

#include "gguf_test_util.h"
#include "tessera/quant/quantize.h"
#include "test_util.h"

using namespace tessera;
using namespace tessera::io::gguf;
using quant::GgmlType;

namespace {

// Raw little-endian GGUF image builder for hand-made (possibly invalid) files.
struct Image {
  std::string b;
  Image& u32(uint32_t v) { return raw(&v, 4); }
  Image& u64(uint64_t v) { return raw(&v, 8); }
  Image& u8(uint8_t v) { return raw(&v, 1); }
  Image& str(const std::string& s) {
    u64(s.size());
    b += s;
    return *this;
  }
  Image& raw(const void* p, size_t n) {
    b.append(static_cast<const char*>(p), n);
    return *this;
  }
  Image& header(uint64_t tensors, uint64_t kvs, uint32_t version = 3) {
    return u32(kMagic).u32(version).u64(tensors).u64(kvs);
  }
  Image& kv_u32(const std::string& key, uint32_t v) { return str(key).u32(4).u32(v); }
  // A tensor info record.
  Image& tensor(const std::string& name, std::vector<uint64_t> ne, uint32_t type, uint64_t offset) {
    str(name).u32(static_cast<uint32_t>(ne.size()));
    for (uint64_t d : ne) u64(d);
    return u32(type).u64(offset);
  }
  Image& pad(size_t alignment = 32) {
    while (b.size() % alignment != 0) b += '\0';
    return *this;
  }
  Image& zeros(size_t n) {
    b.append(n, '\0');
    return *this;
  }
};

Reader parse(const std::string& bytes) {
  return Reader::from_memory(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size(), "bad.gguf");
}

// A small valid file with metadata of several types and three tensors.
std::string small_valid_file() {
  Writer w;
  w.set("general.architecture", Value::string("llama"));
  w.set("n", Value::u32(7));
  w.set("tokens", Value::string_array({"<s>", "hello", ""}));
  w.set("scores", Value::f32_array({0.0f, -1.0f, -2.0f}));
  w.set("nested", Value::array_of_arrays({Value::unsigned_array(ValueType::u16, {1, 2})}));
  std::vector<float> v(64);
  for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<float>(i) - 30.0f;
  w.add_tensor("norm", GgmlType::f32, {8}, std::vector<uint8_t>(32, 0));
  w.add_tensor("w.q8", GgmlType::q8_0, {32, 2}, quant::quantize(GgmlType::q8_0, v.data(), 2, 32));
  w.add_tensor("w.f16", GgmlType::f16, {4, 2}, std::vector<uint8_t>(16, 0));
  return w.serialize();
}

}  // namespace

TEST(GgufCorrupt, EveryTruncationIsRejected) {
  const std::string good = small_valid_file();
  ASSERT_NO_THROW(parse(good));
  for (size_t len = 0; len < good.size(); ++len) {
    // The last tensor's trailing padding is not data: dropping part of it still leaves a valid file.
    try {
      const Reader r = parse(good.substr(0, len));
      const TensorInfo& last = r.tensor("w.f16");
      EXPECT_GE(len, r.data_offset() + last.offset + last.nbytes) << "prefix of " << len << " bytes loaded";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("bad.gguf"), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find("offset"), std::string::npos) << e.what();
    }
  }
}

TEST(GgufCorrupt, FlippedBytesLoadOrThrowCleanly) {
  const std::string good = small_valid_file();
  std::mt19937 rng(42);
  int rejected = 0;
  for (int trial = 0; trial < 3000; ++trial) {
    std::string bad = good;
    const int flips = 1 + trial % 4;
    for (int f = 0; f < flips; ++f) {
      bad[rng() % bad.size()] = static_cast<char>(rng() % 256);
    }
    try {
      const Reader r = parse(bad);
      for (const TensorInfo& t : r.tensors()) {
        if (quant::type_traits(t.type).can_dequantize) (void)r.dequantize(t);
      }
    } catch (const Error&) {
      ++rejected;
    }
  }
  EXPECT_GT(rejected, 100);
}

TEST(GgufCorrupt, BadMagicAndVersion) {
  EXPECT_TESSERA_ERROR(parse(""), "bad.gguf", "offset 0", "magic needs 4 bytes");
  EXPECT_TESSERA_ERROR(parse("GGML\x03\x00\x00\x00"), "not a GGUF file", "47 47 4d 4c");
  EXPECT_TESSERA_ERROR(parse(Image().header(0, 0, 1).b), "offset 4", "version 1", "obsolete");
  EXPECT_TESSERA_ERROR(parse(Image().header(0, 0, 0x03000000).b), "big-endian");
  EXPECT_TESSERA_ERROR(parse(Image().u32(kMagic).u32(3).u32(0).b), "tensor count needs 8 bytes");
}

TEST(GgufCorrupt, ImpossibleCounts) {
  EXPECT_TESSERA_ERROR(parse(Image().header(0, ~0ull).b), "offset 16", "metadata count 18446744073709551615");
  EXPECT_TESSERA_ERROR(parse(Image().header(uint64_t{1} << 60, 0).b), "offset 8", "tensor count");
  // A string claiming more bytes than the file has.
  EXPECT_TESSERA_ERROR(parse(Image().header(0, 1).u64(~0ull).zeros(16).b), "offset 24", "metadata key has length");
  EXPECT_TESSERA_ERROR(parse(Image().header(0, 1).str("k").u32(8).u64(1000).b), "string value has length 1000");
  // An array claiming more elements than could fit.
  EXPECT_TESSERA_ERROR(parse(Image().header(0, 1).str("k").u32(9).u32(6).u64(uint64_t{1} << 61).b),
                       "array of 2305843009213693952 f32 values cannot fit");
  EXPECT_TESSERA_ERROR(parse(Image().header(0, 1).str("k").u32(9).u32(8).u64(5).u64(1).b), "cannot fit");
}

TEST(GgufCorrupt, BadValueTypes) {
  EXPECT_TESSERA_ERROR(parse(Image().header(0, 1).str("k").u32(13).b), "offset 33", "metadata value type is 13");
  EXPECT_TESSERA_ERROR(parse(Image().header(0, 1).str("k").u32(9).u32(99).u64(0).b), "array element type is 99");
  EXPECT_TESSERA_ERROR(parse(Image().header(0, 1).str("k").u32(7).u8(2).b), "bool value is 2");
  // Arrays nested deeper than the limit.
  Image deep;
  deep.header(0, 1).str("k").u32(9);
  for (int i = 0; i < 20; ++i) deep.u32(9).u64(1);
  deep.u32(0).u64(0);
  EXPECT_TESSERA_ERROR(parse(deep.b), "nested deeper than 8");
  EXPECT_TESSERA_ERROR(parse(Image().header(0, 2).kv_u32("a", 1).kv_u32("a", 2).b), "duplicate metadata key 'a'");
}

TEST(GgufCorrupt, BadAlignment) {
  EXPECT_TESSERA_ERROR(parse(Image().header(0, 1).kv_u32("general.alignment", 24).b), "general.alignment = 24",
                       "power of two");
  EXPECT_TESSERA_ERROR(parse(Image().header(0, 1).kv_u32("general.alignment", 0).b), "general.alignment = 0");
  EXPECT_TESSERA_ERROR(parse(Image().header(0, 1).str("general.alignment").u32(10).u64(32).b),
                       "general.alignment must be a u32", "u64");
  // A valid custom alignment moves the data section.
  Image img;
  img.header(1, 1).kv_u32("general.alignment", 128).tensor("t", {4}, 0, 0).pad(128).zeros(16);
  const Reader r = parse(img.b);
  EXPECT_EQ(r.data_offset(), 128u);
  EXPECT_EQ(r.alignment(), 128u);
}

TEST(GgufCorrupt, AlignmentIsCappedAt64KiB) {
  // 57 bytes that used to make `quantize` write 2 GiB of padding: alignment 2^31, no tensors.
  const std::string tiny = Image().header(0, 1).kv_u32("general.alignment", 1u << 31).b;
  EXPECT_LT(tiny.size(), 64u);
  EXPECT_TESSERA_ERROR(parse(tiny), "bad.gguf", "general.alignment = 2147483648",
                       "not a power of two between 1 and 65536");
  EXPECT_TESSERA_ERROR(parse(Image().header(0, 1).kv_u32("general.alignment", 1u << 17).b), "= 131072");
  EXPECT_EQ(parse(Image().header(0, 1).kv_u32("general.alignment", 1u << 16).b).alignment(), 65536u);
  EXPECT_TESSERA_ERROR(Writer(uint64_t{1} << 31), "alignment 2147483648", "at most 65536");
  EXPECT_TESSERA_ERROR(Writer(96), "alignment 96", "power of two");
  EXPECT_EQ(Writer(65536).serialize().size(), 65536u);  // the header, padded once
}

TEST(GgufCorrupt, BadTensorInfos) {
  auto one_tensor = [](std::vector<uint64_t> ne, uint32_t type, uint64_t offset, size_t data = 64) {
    Image img;
    img.header(1, 0).tensor("w", std::move(ne), type, offset).pad().zeros(data);
    return img.b;
  };
  EXPECT_TESSERA_ERROR(parse(one_tensor({4}, 99, 0)), "offset", "tensor 0 'w' has unknown ggml type id 99");
  EXPECT_TESSERA_ERROR(parse(one_tensor({4}, 4, 0)), "unknown ggml type id 4");
  EXPECT_TESSERA_ERROR(parse(one_tensor({1, 1, 1, 1, 1}, 0, 0)), "5 dimensions", "at most 4");
  EXPECT_TESSERA_ERROR(parse(one_tensor({uint64_t{1} << 63}, 0, 0)), "dimension 0", "larger than");
  EXPECT_TESSERA_ERROR(parse(one_tensor({uint64_t{1} << 40, uint64_t{1} << 40}, 0, 0)), "dimension 1", "larger than");
  EXPECT_TESSERA_ERROR(parse(one_tensor({uint64_t{1} << 46, 0}, 0, 0)), "dimension 0",
                       "larger than");  // empty, but absurd
  EXPECT_TESSERA_ERROR(parse(one_tensor({uint64_t{1} << 44}, 0, 0)), "past the end");
  EXPECT_TESSERA_ERROR(parse(one_tensor({100}, 12, 0)), "ne[0] = 100", "q4_k block size 256");
  EXPECT_TESSERA_ERROR(parse(one_tensor({4}, 0, 16)), "data offset 16", "alignment 32");
  EXPECT_TESSERA_ERROR(parse(one_tensor({32}, 0, 0)), "'w' (128 bytes", "past the end of the data section (64 bytes)");
  EXPECT_TESSERA_ERROR(parse(one_tensor({4}, 0, ~0ull - 31)), "past the end");
  EXPECT_TESSERA_ERROR(parse(one_tensor({uint64_t{1} << 40}, 0, 0)), "past the end");
  // The data section itself must start inside the file.
  EXPECT_TESSERA_ERROR(parse(Image().header(1, 0).tensor("w", {1}, 0, 0).b), "past the end of the");
}

TEST(GgufCorrupt, OverlappingAndDuplicateTensors) {
  Image overlap;
  overlap.header(2, 0).tensor("a", {16}, 0, 0).tensor("b", {8}, 0, 32).pad().zeros(128);
  EXPECT_TESSERA_ERROR(parse(overlap.b), "tensors 'a' (data offset 0, 64 bytes) and 'b' (data offset 32) overlap");
  Image dup;
  dup.header(2, 0).tensor("a", {8}, 0, 0).tensor("a", {8}, 0, 32).pad().zeros(64);
  EXPECT_TESSERA_ERROR(parse(dup.b), "duplicate tensor name 'a'");
  // Shared storage is fine when one of the tensors is empty; order in the file need not follow offsets.
  Image ok;
  ok.header(3, 0).tensor("late", {8}, 0, 32).tensor("early", {8}, 0, 0).tensor("empty", {0, 8}, 0, 0).pad().zeros(64);
  const Reader r = parse(ok.b);
  EXPECT_EQ(r.tensor("late").offset, 32u);
  EXPECT_EQ(r.tensor("empty").numel(), 0);
  EXPECT_EQ(r.dequantize("empty").numel(), 0);
}

TEST(GgufCorrupt, UndecodableTypesCanBeInspectedButNotDecoded) {
  Image img;
  img.header(1, 0).tensor("iq", {256}, 16, 0).pad().zeros(66);  // iq2_xxs: 66 bytes per 256 values
  const Reader r = parse(img.b);
  EXPECT_EQ(r.tensor("iq").nbytes, 66u);
  EXPECT_EQ(r.view("iq").nbytes(), 66u);
  EXPECT_TESSERA_ERROR(r.dequantize("iq"), "bad.gguf", "'iq'", "iq2_xxs", "cannot decode");
  EXPECT_TESSERA_ERROR(r.tensor("nope"), "no tensor named 'nope'");
}

TEST(GgufCorrupt, VocabOnlyFilesMayEndAfterTheHeader) {
  Image img;
  img.header(0, 1).kv_u32("n", 1);
  const Reader r = parse(img.b);
  EXPECT_EQ(r.tensors().size(), 0u);
  EXPECT_EQ(r.get("n").as_u64(), 1u);
}

TEST(GgufCorrupt, FilesThatCannotBeOpened) {
  EXPECT_TESSERA_ERROR(Reader::open("/nonexistent/model.gguf"), "cannot read '/nonexistent/model.gguf'");
  EXPECT_TESSERA_ERROR(Reader::open("/tmp"), "not a regular file");
}
