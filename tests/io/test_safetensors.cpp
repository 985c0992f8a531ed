#include "io_test_util.h"
#include "tessera/io/safetensors.h"
#include "test_util.h"

using namespace tessera;
using namespace tessera::test;

namespace {

// A file image from a header text and data bytes (the header length is computed, nothing else).
std::string make_file(const std::string& header, const std::string& data = "") {
  std::string out(8, '\0');
  for (int i = 0; i < 8; ++i) out[i] = static_cast<char>((header.size() >> (8 * i)) & 0xff);
  return out + header + data;
}

io::SafetensorsFile parse_safetensors(const std::string& bytes) {
  return io::load_safetensors_from_memory(u8(bytes), bytes.size(), "test.safetensors");
}

std::string entry(const std::string& name, const std::string& dtype, const std::string& shape, uint64_t begin,
                  uint64_t end) {
  return "\"" + name + "\":{\"dtype\":\"" + dtype + "\",\"shape\":" + shape + ",\"data_offsets\":[" +
         std::to_string(begin) + "," + std::to_string(end) + "]}";
}

}  // namespace

TEST(Safetensors, ByteExactSmallFile) {
  const StateDict tensors = {
      {"b", Array::from_vector<uint8_t>({1, 2, 3}, {3})},
      {"a", Array::scalar(1.0, DType::f32)},
  };
  // Written by hand from the format description: length 0x90 = 144 = 141 header bytes + 3 spaces of
  // padding, metadata first, tensors sorted by name, 1.0f = 0x3f800000 little-endian, then the u8s.
  const std::string expected = std::string("\x90\0\0\0\0\0\0\0", 8) +
                               R"({"__metadata__":{"format":"tessera"},)"
                               R"("a":{"dtype":"F32","shape":[],"data_offsets":[0,4]},)"
                               R"("b":{"dtype":"U8","shape":[3],"data_offsets":[4,7]}})"
                               "   " +
                               std::string("\x00\x00\x80\x3f\x01\x02\x03", 7);
  EXPECT_EQ(io::serialize_safetensors(tensors, {{"format", "tessera"}}), expected);

  ScratchDir dir;
  io::save_safetensors(dir.file("small.safetensors"), tensors, {{"format", "tessera"}});
  EXPECT_EQ(read_bytes(dir.file("small.safetensors")), expected);
}

TEST(Safetensors, HeaderIsPaddedToEightBytes) {
  for (int len = 1; len <= 9; ++len) {
    const std::string bytes = io::serialize_safetensors({{std::string(len, 'n'), Array::scalar(2, DType::i8)}});
    uint64_t n = 0;
    std::memcpy(&n, bytes.data(), 8);
    EXPECT_EQ(n % 8, 0u) << "name length " << len;
    EXPECT_EQ(bytes.size(), 8 + n + 1);
    EXPECT_EQ(bytes[8 + n - 1] == ' ' || bytes[8 + n - 1] == '}', true);
  }
}

TEST(Safetensors, RoundTripEveryDtypeAndShape) {
  ScratchDir dir;
  for (DType dt : kAllDTypes) {
    const std::vector<Shape> shapes = {{2, 3}, {}, {0}, {2, 0, 3}, {1, 1, 1, 1, 5}};
    StateDict tensors;
    for (size_t i = 0; i < shapes.size(); ++i) {
      tensors.emplace("t" + std::to_string(i), sample_array(dt, shapes[i], static_cast<int>(i)));
    }
    const std::string path = dir.file(std::string(dtype_name(dt)) + ".safetensors");
    io::save_safetensors(path, tensors, {{"dtype", dtype_name(dt)}});
    const io::SafetensorsFile f = io::load_safetensors_with_metadata(path);
    ASSERT_EQ(f.tensors.size(), tensors.size());
    for (const auto& [name, array] : tensors) {
      SCOPED_TRACE(std::string(dtype_name(dt)) + " " + name);
      ASSERT_TRUE(f.tensors.count(name));
      expect_same_array(f.tensors.at(name), array);
    }
    EXPECT_EQ(f.metadata.at("dtype"), dtype_name(dt));
  }
}

TEST(Safetensors, SpecialFloatBitsSurvive) {
  // NaN payloads, -0, infinities and subnormals are stored bit for bit.
  Array h = Array::empty(DType::f16, {4});
  const uint16_t hbits[] = {0x7e01, 0x8000, 0x7c00, 0x0001};
  std::memcpy(h.raw_data(), hbits, sizeof hbits);
  Array b = Array::empty(DType::bf16, {3});
  const uint16_t bbits[] = {0xffc1, 0xff80, 0x0001};
  std::memcpy(b.raw_data(), bbits, sizeof bbits);
  Array d = Array::from_vector<double>({-0.0, std::numeric_limits<double>::denorm_min(), -INFINITY}, {3});
  const io::SafetensorsFile f = parse_safetensors(io::serialize_safetensors({{"h", h}, {"b", b}, {"d", d}}));
  expect_same_array(f.tensors.at("h"), h);
  expect_same_array(f.tensors.at("b"), b);
  expect_same_array(f.tensors.at("d"), d);
}

TEST(Safetensors, NonContiguousViewsAreWrittenInLogicalOrder) {
  const Array base = Array::from_vector<int32_t>({1, 2, 3, 4, 5, 6}, {2, 3});
  const Array t = base.transpose(0, 1);        // [[1, 4], [2, 5], [3, 6]]
  const Array rev = base.slice(1, 2, -4, -1);  // [[3, 2, 1], [6, 5, 4]]
  const Array bcast = Array::from_vector<int32_t>({7, 8}, {2}).broadcast_to({3, 2});
  const io::SafetensorsFile f = parse_safetensors(io::serialize_safetensors({{"t", t}, {"rev", rev}, {"bcast", bcast}}));
  EXPECT_EQ(f.tensors.at("t").to_i64(), (std::vector<int64_t>{1, 4, 2, 5, 3, 6}));
  EXPECT_EQ(f.tensors.at("rev").to_i64(), (std::vector<int64_t>{3, 2, 1, 6, 5, 4}));
  EXPECT_EQ(f.tensors.at("bcast").to_i64(), (std::vector<int64_t>{7, 8, 7, 8, 7, 8}));
  EXPECT_TRUE(f.tensors.at("t").is_contiguous());
}

TEST(Safetensors, EmptyFileAndUnicodeNames) {
  const io::SafetensorsFile empty = parse_safetensors(io::serialize_safetensors({}));
  EXPECT_TRUE(empty.tensors.empty());
  EXPECT_TRUE(empty.metadata.empty());
  const std::string name = "layer.\xc3\xa9\"quoted\"\\/\n";
  const io::SafetensorsFile f =
      parse_safetensors(io::serialize_safetensors({{name, Array::scalar(3, DType::i64)}}, {{"k\xe2\x82\xac", "v\t"}}));
  EXPECT_EQ(f.tensors.at(name).item(), 3);
  EXPECT_EQ(f.metadata.at("k\xe2\x82\xac"), "v\t");
}

TEST(Safetensors, ReadsForeignLayouts) {
  // Key order, whitespace and tensor order in the data section are free; extra keys are ignored.
  const std::string header =
      R"({ "w" : { "shape" : [ 2 ] , "data_offsets" : [ 1 , 9 ] , "dtype" : "I32" , "extra" : 1 } ,)"
      R"( "flag" : { "dtype":"BOOL","shape":[1],"data_offsets":[0,1]}, "__metadata__": {} }    )";
  const io::SafetensorsFile f = parse_safetensors(make_file(header, std::string("\x05\x01\0\0\0\xff\xff\xff\xff", 9)));
  EXPECT_EQ(f.tensors.at("w").to_i64(), (std::vector<int64_t>{1, -1}));
  EXPECT_EQ(f.tensors.at("flag").dtype(), DType::boolean);
  EXPECT_EQ(f.tensors.at("flag").to_i64(), (std::vector<int64_t>{1}));          // byte 5 reads as true
  EXPECT_EQ(*static_cast<const uint8_t*>(f.tensors.at("flag").raw_data()), 1);  // normalised, not 5
}

TEST(Safetensors, SaveErrors) {
  const Array x = Array::scalar(1);
  EXPECT_TESSERA_ERROR(io::serialize_safetensors({{"__metadata__", x}}), "__metadata__", "reserved");
  EXPECT_TESSERA_ERROR(io::serialize_safetensors({{"u", Array()}}), "'u'", "undefined");
  EXPECT_TESSERA_ERROR(io::serialize_safetensors({{"bad\xff", x}}), "tensor name", "UTF-8");
  EXPECT_TESSERA_ERROR(io::serialize_safetensors({{"a", x}}, {{"k", "\xc3"}}), "metadata value", "UTF-8");
  ScratchDir dir;
  EXPECT_TESSERA_ERROR(io::save_safetensors(dir.file("missing/x.safetensors"), {{"a", x}}), "missing/x.safetensors",
                       "No such file");
}

TEST(Safetensors, LoadMissingFile) {
  EXPECT_TESSERA_ERROR(io::load_safetensors("/nonexistent/model.safetensors"), "/nonexistent/model.safetensors",
                       "No such file");
}

TEST(Safetensors, CorruptHeaders) {
  const std::string ok_entry = entry("a", "F32", "[2]", 0, 8);
  const std::string data8(8, '\0');
  // Sanity: the well-formed version of these files loads.
  EXPECT_EQ(parse_safetensors(make_file("{" + ok_entry + "}", data8)).tensors.size(), 1u);

  EXPECT_TESSERA_ERROR(parse_safetensors("short"), "test.safetensors", "too short");
  {
    std::string f = make_file("{}");
    f[0] = 100;  // claims 100 header bytes, has 2
    EXPECT_TESSERA_ERROR(parse_safetensors(f), "test.safetensors", "header length 100", "larger than the 2 bytes");
  }
  {
    std::string f = make_file("{}");
    for (int i = 0; i < 8; ++i) f[i] = '\xff';  // 2^64 - 1
    EXPECT_TESSERA_ERROR(parse_safetensors(f), "header length 18446744073709551615");
  }
  EXPECT_TESSERA_ERROR(parse_safetensors(make_file("")), "must be a JSON object");
  EXPECT_TESSERA_ERROR(parse_safetensors(make_file(" {}")), "starting with '{'");
  EXPECT_TESSERA_ERROR(parse_safetensors(make_file("[1, 2]")), "must be a JSON object");
  EXPECT_TESSERA_ERROR(parse_safetensors(make_file("{\"a\": ")), "test.safetensors", "not valid JSON");
  EXPECT_TESSERA_ERROR(parse_safetensors(make_file("{" + ok_entry + ",}", data8)), "not valid JSON");
  EXPECT_TESSERA_ERROR(parse_safetensors(make_file("{" + ok_entry + "} x", data8)), "not valid JSON");
  EXPECT_TESSERA_ERROR(parse_safetensors(make_file("{\"a\": 3}")), "tensor 'a'", "expected an object");
  EXPECT_TESSERA_ERROR(parse_safetensors(make_file(R"({"a":{"shape":[2],"data_offsets":[0,8]}})", data8)), "tensor 'a'",
                       "missing field 'dtype'");
  EXPECT_TESSERA_ERROR(parse_safetensors(make_file(R"({"a":{"dtype":"F32","data_offsets":[0,8]}})", data8)), "tensor 'a'",
                       "missing field 'shape'");
  EXPECT_TESSERA_ERROR(parse_safetensors(make_file(R"({"a":{"dtype":"F32","shape":[2]}})", data8)), "tensor 'a'",
                       "missing field 'data_offsets'");
  EXPECT_TESSERA_ERROR(parse_safetensors(make_file("{" + entry("a", "F8_E4M3", "[8]", 0, 8) + "}", data8)), "tensor 'a'",
                       "unsupported dtype 'F8_E4M3'", "F64, F32, F16, BF16, I64, I32, I8, U8, BOOL");
  EXPECT_TESSERA_ERROR(parse_safetensors(make_file(R"({"a":{"dtype":4,"shape":[2],"data_offsets":[0,8]}})", data8)), "tensor 'a'",
                       "dtype must be a string");
  EXPECT_TESSERA_ERROR(parse_safetensors(make_file(R"({"a":{"dtype":"F32","shape":2,"data_offsets":[0,8]}})", data8)), "tensor 'a'",
                       "shape must be an array");
  EXPECT_TESSERA_ERROR(parse_safetensors(make_file("{" + entry("a", "F32", "[-2]", 0, 8) + "}", data8)), "tensor 'a'",
                       "must not be negative");
  EXPECT_TESSERA_ERROR(parse_safetensors(make_file("{" + entry("a", "F32", "[2.0]", 0, 8) + "}", data8)), "tensor 'a'",
                       "non-negative integers");
  EXPECT_TESSERA_ERROR(parse_safetensors(make_file("{" + entry("a", "F32", "[\"2\"]", 0, 8) + "}", data8)), "tensor 'a'",
                       "non-negative integers");
  EXPECT_TESSERA_ERROR(parse_safetensors(make_file(R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0]}})", data8)), "tensor 'a'",
                       "data_offsets must be an array [begin, end]");
  EXPECT_TESSERA_ERROR(parse_safetensors(make_file(R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8,9]}})", data8)),
                       "data_offsets must be an array [begin, end]");
  EXPECT_TESSERA_ERROR(parse_safetensors(make_file(R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[-1,8]}})", data8)),
                       "tensor 'a'", "data_offsets must not be negative");
  EXPECT_TESSERA_ERROR(parse_safetensors(make_file("{" + entry("a", "F32", "[2]", 8, 0) + "}", data8)), "tensor 'a'",
                       "end before they begin");
  EXPECT_TESSERA_ERROR(parse_safetensors(make_file(R"({"__metadata__":{"k":1}})")), "__metadata__ entry 'k'", "must be a string");
  EXPECT_TESSERA_ERROR(parse_safetensors(make_file(R"({"__metadata__":[]})")), "__metadata__ must be an object");
}

TEST(Safetensors, SizeMismatchNamesTensorAndBytes) {
  EXPECT_TESSERA_ERROR(parse_safetensors(make_file("{" + entry("w", "F32", "[3]", 0, 8) + "}", std::string(8, '\0'))),
                       "test.safetensors", "tensor 'w'", "F32[3] needs 12 bytes", "data_offsets [0, 8] span 8 bytes");
  EXPECT_TESSERA_ERROR(parse_safetensors(make_file("{" + entry("w", "BF16", "[2, 2]", 0, 4) + "}", std::string(4, '\0'))),
                       "BF16[2, 2] needs 8 bytes");
}

TEST(Safetensors, ShapeProductOverflow) {
  EXPECT_TESSERA_ERROR(parse_safetensors(make_file("{" + entry("big", "U8", "[4294967296, 4294967296]", 0, 0) + "}")),
                       "tensor 'big'", "overflows 64 bits");
  // A zero dimension does not excuse overflowing strides of the others.
  EXPECT_TESSERA_ERROR(parse_safetensors(make_file("{" + entry("z", "U8", "[0, 4294967296, 4294967296]", 0, 0) + "}")),
                       "tensor 'z'", "overflows 64 bits");
  // The byte count overflows although the element count does not.
  EXPECT_TESSERA_ERROR(parse_safetensors(make_file("{" + entry("f", "F64", "[4611686018427387904]", 0, 0) + "}")), "tensor 'f'",
                       "byte size", "overflows 64 bits");
  EXPECT_TESSERA_ERROR(parse_safetensors(make_file("{" + entry("h", "U8", "[18446744073709551615]", 0, 0) + "}")), "tensor 'h'",
                       "too large");
}

TEST(Safetensors, OffsetsMustTileTheData) {
  const std::string d16(16, '\0');
  // Out of range: the data section has 8 bytes, the tensor ends at 16.
  EXPECT_TESSERA_ERROR(parse_safetensors(make_file("{" + entry("a", "F32", "[4]", 0, 16) + "}", std::string(8, '\0'))),
                       "tensor 'a'", "past the end of the data section (8 bytes", "truncated");
  // Overlap: b starts inside a.
  EXPECT_TESSERA_ERROR(
      parse_safetensors(make_file("{" + entry("a", "F32", "[2]", 0, 8) + "," + entry("b", "F32", "[2]", 4, 12) + "}", d16)),
      "tensor 'b'", "overlap tensor 'a'");
  // Two tensors on the same bytes.
  EXPECT_TESSERA_ERROR(parse_safetensors(make_file("{" + entry("a", "F32", "[2]", 0, 8) + "," + entry("b", "F32", "[2]", 0, 8) +
                                           "," + entry("c", "F32", "[2]", 8, 16) + "}",
                                       d16)),
                       "overlap");
  // Gap between tensors.
  EXPECT_TESSERA_ERROR(
      parse_safetensors(make_file("{" + entry("a", "F32", "[1]", 0, 4) + "," + entry("b", "F32", "[2]", 8, 16) + "}", d16)),
      "tensor 'b'", "gap", "begin at 4", "where tensor 'a' ends");
  EXPECT_TESSERA_ERROR(parse_safetensors(make_file("{" + entry("a", "F32", "[2]", 8, 16) + "}", d16)), "tensor 'a'", "gap",
                       "the start of the data");
  // Unused bytes at the end.
  EXPECT_TESSERA_ERROR(parse_safetensors(make_file("{" + entry("a", "F32", "[2]", 0, 8) + "}", d16)),
                       "cover 8 of the 16 data bytes");
  // Zero-size tensors anywhere in the sequence are fine.
  const auto f = parse_safetensors(make_file("{" + entry("e", "F32", "[0]", 8, 8) + "," + entry("a", "F32", "[2]", 0, 8) + "," +
                                     entry("z", "I64", "[0, 3]", 0, 0) + "," + entry("b", "F32", "[2]", 8, 16) + "}",
                                 d16));
  EXPECT_EQ(f.tensors.size(), 4u);
}

TEST(Safetensors, DuplicateNamesAndKeys) {
  const std::string d8(8, '\0');
  EXPECT_TESSERA_ERROR(
      parse_safetensors(make_file("{" + entry("a", "F32", "[2]", 0, 8) + "," + entry("a", "F32", "[2]", 0, 8) + "}", d8)),
      "test.safetensors", "duplicate tensor name 'a'");
  EXPECT_TESSERA_ERROR(parse_safetensors(make_file(R"({"a":{"dtype":"F32","dtype":"F32","shape":[2],"data_offsets":[0,8]}})", d8)),
                       "duplicate key 'dtype'");
  EXPECT_TESSERA_ERROR(parse_safetensors(make_file(R"({"__metadata__":{"k":"1","k":"2"}})")), "duplicate key 'k'");
}

TEST(Safetensors, EveryTruncationThrows) {
  const std::string full = io::serialize_safetensors({{"weight", sample_array(DType::f32, {2, 3})},
                                                      {"bias", sample_array(DType::bf16, {3})},
                                                      {"step", Array::scalar(7, DType::i64)}},
                                                     {{"epoch", "3"}});
  ASSERT_EQ(parse_safetensors(full).tensors.size(), 3u);
  for (size_t len = 0; len < full.size(); ++len) {
    EXPECT_THROW(io::load_safetensors_from_memory(u8(full), len, "truncated"), Error) << "length " << len;
  }
  ScratchDir dir;  // and through the file path, for a few lengths
  for (size_t len : {size_t{0}, size_t{7}, size_t{8}, full.size() / 2, full.size() - 1}) {
    write_bytes(dir.file("t"), full.substr(0, len));
    EXPECT_TESSERA_ERROR(io::load_safetensors(dir.file("t")), dir.file("t"));
  }
}

TEST(Safetensors, ByteFlipsNeverCrash) {
  // Each single-byte corruption either still parses or throws tessera::Error (ASan/UBSan builds check
  // that nothing is read out of bounds on the way).
  const std::string full =
      io::serialize_safetensors({{"a", sample_array(DType::boolean, {3})}, {"b", sample_array(DType::f16, {2, 2})}});
  int parsed = 0, rejected = 0;
  for (size_t i = 0; i < full.size(); ++i) {
    for (uint8_t value : {uint8_t{0}, uint8_t{0xff}, uint8_t{'9'}, uint8_t{'"'}, uint8_t{'['}}) {
      std::string corrupt = full;
      corrupt[i] = static_cast<char>(value);
      try {
        parse_safetensors(corrupt);
        ++parsed;
      } catch (const Error&) {
        ++rejected;
      }
    }
  }
  EXPECT_GT(parsed, 0);  // flips inside tensor data or padding still load
  EXPECT_GT(rejected, 0);
}

namespace {

// `depth` nested JSON arrays around one number: [[[...[0]...]]].
std::string nested_arrays(size_t depth) {
  return std::string(depth, '[') + "0" + std::string(depth, ']');
}

}  // namespace

TEST(Safetensors, DeepNestingIsRefusedWhileParsing) {
  // 70,000 levels (137 KB) used to crash: an error message dumped the value with nlohmann's recursive
  // dump() (ASan builds overflowed the stack at 10,000). The parser now stops at 64 levels.
  const std::string deep = nested_arrays(70'000);
  EXPECT_TESSERA_ERROR(parse_safetensors(make_file(R"({"a":{"dtype":"F32","shape":)" + deep + R"(,"data_offsets":[0,0]}})")),
                       "test.safetensors", "more than 64 levels deep");
  EXPECT_TESSERA_ERROR(parse_safetensors(make_file(R"({"__metadata__":{"k":)" + deep + "}}")), "more than 64 levels deep");
  std::string objects;
  for (int i = 0; i < 70'000; ++i) objects += R"({"k":)";
  EXPECT_TESSERA_ERROR(parse_safetensors(make_file(R"({"a":)" + objects + "0" + std::string(70'000, '}') + "}")),
                       "more than 64 levels deep");
  // Within the limit, a wrong shape is still reported with a short excerpt.
  EXPECT_TESSERA_ERROR(parse_safetensors(make_file(R"({"a":{"dtype":"F32","shape":[)" + nested_arrays(60) + R"(],"data_offsets":[0,0]}})")),
                       "tensor 'a'", "shape must hold non-negative integers, got array [[...]]");
}

TEST(Safetensors, MessagesShowShortEscapedExcerpts) {
  // Neither a huge value nor terminal escapes from the file reach the message whole.
  const std::string huge(1 << 20, 'x');
  const std::string shape = "[\"" + huge + "\"," + std::string(1000, '1').substr(0, 1) + "]";
  try {
    parse_safetensors(make_file(R"({"a":{"dtype":"F32","shape":)" + shape + R"(,"data_offsets":[0,0]}})"));
    ADD_FAILURE() << "expected an error";
  } catch (const Error& e) {
    EXPECT_LT(std::string(e.what()).size(), 400u) << e.what();
  }
  std::string list = "[";
  for (int i = 0; i < 100000; ++i) list += (i ? ",\"" : "\"") + std::to_string(i) + "\"";
  list += "]";
  try {
    parse_safetensors(make_file(R"({"a":{"dtype":"F32","shape":[2],"data_offsets":)" + list + "}}"));
    ADD_FAILURE() << "expected an error";
  } catch (const Error& e) {
    const std::string msg = e.what();
    EXPECT_LT(msg.size(), 400u) << msg;
    EXPECT_NE(msg.find("100000 in all"), std::string::npos) << msg;
  }
  EXPECT_TESSERA_ERROR(parse_safetensors(make_file("{" + entry("evil\\u001b[2J", "F32", "[2]", 0, 8) + "}")), "tensor 'evil\\x1b[2J'");
}

TEST(Safetensors, OnlySpacesMayFollowTheHeaderObject) {
  const std::string ok = "{" + entry("a", "F32", "[2]", 0, 8) + "}";
  const std::string data8(8, '\0');
  EXPECT_EQ(parse_safetensors(make_file(ok + "      ", data8)).tensors.size(), 1u);  // padding, as writers do
  // A NUL used to end the header early and hide whatever followed it.
  EXPECT_TESSERA_ERROR(parse_safetensors(make_file(ok + std::string("\0{\"b\":1}", 8), data8)), "test.safetensors",
                       "NUL byte at header offset " + std::to_string(ok.size()));
  EXPECT_TESSERA_ERROR(parse_safetensors(make_file(ok + std::string("\0\0\0\0", 4), data8)), "NUL byte");
  EXPECT_TESSERA_ERROR(parse_safetensors(make_file(ok + "  x  ", data8)), "not valid JSON", "only spaces may pad it",
                       "\"x\" at header offset " + std::to_string(ok.size() + 2));
  EXPECT_TESSERA_ERROR(parse_safetensors(make_file(ok + "\n", data8)), "only spaces may pad it", "\"\\n\"");
  EXPECT_TESSERA_ERROR(parse_safetensors(make_file(ok + " }", data8)), "not valid JSON");
}
