#include "io_test_util.h"
#include "tessera/io/npy.h"
#include "test_util.h"

using namespace tessera;
using namespace tessera::test;

namespace {

// A .npy image with the given header text (unpadded) and data; version 1 uses a 16-bit length.
std::string npy_file(const std::string& header, const std::string& data = "", int major = 1) {
  std::string out = std::string("\x93NUMPY", 6) + static_cast<char>(major) + '\0';
  const size_t n = header.size();
  out += static_cast<char>(n & 0xff);
  out += static_cast<char>((n >> 8) & 0xff);
  if (major != 1) out += std::string("\0\0", 2);
  return out + header + data;
}

Array parse_npy(const std::string& bytes) {
  return io::load_npy_from_memory(u8(bytes), bytes.size(), "test.npy");
}

}  // namespace

TEST(Npy, ByteExactSmallFile) {
  // From the format description: magic, version 1.0, header length 0x76 = 118 so that 10 + 118 = 128
  // is a multiple of 64, the dict padded with spaces and a newline, then 1.0f and -2.0f little-endian.
  const std::string expected = std::string("\x93NUMPY\x01\x00\x76\x00", 10) +
                               "{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }" + std::string(60, ' ') +
                               "\n" + std::string("\x00\x00\x80\x3f\x00\x00\x00\xc0", 8);
  const Array a = Array::from_vector<float>({1.0f, -2.0f}, {2});
  EXPECT_EQ(io::serialize_npy(a), expected);
  ScratchDir dir;
  io::save_npy(dir.file("a.npy"), a);
  EXPECT_EQ(read_bytes(dir.file("a.npy")), expected);
}

TEST(Npy, HeaderFormsPerRank) {
  auto header_of = [](const Array& a) {
    const std::string bytes = io::serialize_npy(a);
    const size_t n = static_cast<uint8_t>(bytes[8]) | static_cast<size_t>(static_cast<uint8_t>(bytes[9])) << 8;
    EXPECT_EQ((10 + n) % 64, 0u);
    EXPECT_EQ(bytes[10 + n - 1], '\n');
    std::string h = bytes.substr(10, n);
    return h.substr(0, h.find_last_not_of(" \n") + 1);
  };
  EXPECT_EQ(header_of(Array::scalar(1, DType::u8)), "{'descr': '|u1', 'fortran_order': False, 'shape': (), }");
  EXPECT_EQ(header_of(Array::zeros(DType::i64, {2, 0, 3})),
            "{'descr': '<i8', 'fortran_order': False, 'shape': (2, 0, 3), }");
  EXPECT_EQ(header_of(Array::zeros(DType::boolean, {1})), "{'descr': '|b1', 'fortran_order': False, 'shape': (1,), }");
  EXPECT_EQ(header_of(Array::zeros(DType::i8, {1})), "{'descr': '|i1', 'fortran_order': False, 'shape': (1,), }");
  EXPECT_EQ(header_of(Array::zeros(DType::f16, {1})), "{'descr': '<f2', 'fortran_order': False, 'shape': (1,), }");
  EXPECT_EQ(header_of(Array::zeros(DType::f64, {1})), "{'descr': '<f8', 'fortran_order': False, 'shape': (1,), }");
  EXPECT_EQ(header_of(Array::zeros(DType::i32, {1})), "{'descr': '<i4', 'fortran_order': False, 'shape': (1,), }");
  EXPECT_EQ(header_of(Array::zeros(DType::bf16, {1})), "{'descr': '<f4', 'fortran_order': False, 'shape': (1,), }");
}

TEST(Npy, RoundTripEveryDtype) {
  ScratchDir dir;
  for (DType dt : kAllDTypes) {
    for (const Shape& shape : std::vector<Shape>{{2, 3}, {}, {0}, {3, 0}, {1, 2, 1, 2}}) {
      SCOPED_TRACE(std::string(dtype_name(dt)) + shape_str(shape));
      const Array a = sample_array(dt, shape);
      io::save_npy(dir.file("x.npy"), a);
      const Array back = io::load_npy(dir.file("x.npy"));
      if (dt == DType::bf16) {
        expect_same_array(back, a.astype(DType::f32));  // bf16 -> f32 is exact
      } else {
        expect_same_array(back, a);
      }
    }
  }
}

TEST(Npy, NonContiguousInput) {
  const Array a = Array::from_vector<int32_t>({1, 2, 3, 4, 5, 6}, {2, 3}).transpose(0, 1);
  const std::string bytes = io::serialize_npy(a);
  EXPECT_EQ(parse_npy(bytes).to_i64(), (std::vector<int64_t>{1, 4, 2, 5, 3, 6}));
  EXPECT_EQ(shape_str(parse_npy(bytes).shape()), "[3, 2]");
}

TEST(Npy, ReadsBigEndianFortranAndLaterVersions) {
  // >i4 [2]: 1, -2 big-endian.
  EXPECT_EQ(parse_npy(npy_file("{'descr': '>i4', 'fortran_order': False, 'shape': (2,), }",
                           std::string("\0\0\0\x01\xff\xff\xff\xfe", 8)))
                .to_i64(),
            (std::vector<int64_t>{1, -2}));
  // >f8 scalar 1.5 = 0x3ff8000000000000.
  EXPECT_EQ(
      parse_npy(npy_file("{'descr': '>f8', 'fortran_order': False, 'shape': (), }", std::string("\x3f\xf8\0\0\0\0\0\0", 8)))
          .item(),
      1.5);
  // Fortran order [2, 3]: memory holds columns, so a[i][j] = 1 + i + 2 j from 1..6 in memory.
  const Array f = parse_npy(npy_file("{'descr': '|u1', 'fortran_order': True, 'shape': (2, 3), }",
                                 std::string("\x01\x02\x03\x04\x05\x06", 6)));
  EXPECT_EQ(shape_str(f.shape()), "[2, 3]");
  EXPECT_EQ(f.to_i64(), (std::vector<int64_t>{1, 3, 5, 2, 4, 6}));
  // Fortran order of rank 3 [2, 2, 2]: element (i, j, k) at memory i + 2 j + 4 k.
  std::string mem;
  for (int k = 0; k < 8; ++k) mem += static_cast<char>(k);
  const Array f3 = parse_npy(npy_file("{'descr': 'i1', 'fortran_order': True, 'shape': (2, 2, 2), }", mem));
  EXPECT_EQ(f3.to_i64(), (std::vector<int64_t>{0, 4, 2, 6, 1, 5, 3, 7}));
  // Version 2.0 and 3.0 (32-bit header length), double-quoted keys, '?' for bool, no trailing comma.
  for (int major : {2, 3}) {
    const Array b = parse_npy(
        npy_file(R"({"descr": "?", "shape": (3,), "fortran_order": False})", std::string("\x00\x01\x07", 3), major));
    EXPECT_EQ(b.dtype(), DType::boolean);
    EXPECT_EQ(b.to_i64(), (std::vector<int64_t>{0, 1, 1}));
    EXPECT_EQ(static_cast<const uint8_t*>(b.raw_data())[2], 1);  // normalised bool
  }
  // Python 2 style long dimensions.
  EXPECT_EQ(shape_str(parse_npy(npy_file("{'descr': '<i8', 'fortran_order': False, 'shape': (1L, 0L), }")).shape()),
            "[1, 0]");
}

TEST(Npy, VeryHighRankUsesVersion2) {
  Shape shape(25000, 1);  // "1, " per dimension: a header over 65535 bytes
  const Array a = Array::full(DType::i32, shape, 42);
  const std::string bytes = io::serialize_npy(a);
  EXPECT_EQ(bytes[6], '\x02');
  const Array back = parse_npy(bytes);
  EXPECT_EQ(back.rank(), 25000);
  EXPECT_EQ(back.item(), 42);
}

TEST(Npy, CorruptInputs) {
  const std::string h = "{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }";
  const std::string d8(8, '\0');
  ASSERT_EQ(parse_npy(npy_file(h, d8)).numel(), 2);

  EXPECT_TESSERA_ERROR(parse_npy(""), "test.npy", "not a .npy file");
  EXPECT_TESSERA_ERROR(parse_npy("PK\x03\x04 zip file"), "not a .npy file");
  {
    std::string v = npy_file(h, d8);
    v[6] = 4;
    EXPECT_TESSERA_ERROR(parse_npy(v), "unsupported .npy format version 4.0");
    v[6] = 1;
    v[7] = 1;
    EXPECT_TESSERA_ERROR(parse_npy(v), "version 1.1");
  }
  EXPECT_TESSERA_ERROR(parse_npy(npy_file(h, d8).substr(0, 9)), "truncated");
  EXPECT_TESSERA_ERROR(parse_npy(npy_file(h, d8).substr(0, 30)), "truncated", "header needs");
  EXPECT_TESSERA_ERROR(parse_npy(npy_file(h, d8.substr(0, 5))), "test.npy", "f32[2]", "needs 8 data bytes", "holds 5",
                       "truncated");
  EXPECT_TESSERA_ERROR(parse_npy(npy_file(h, d8 + "xx")), "needs 8 data bytes but the file holds 10");
  EXPECT_TESSERA_ERROR(parse_npy(npy_file("{'descr': '<c8', 'fortran_order': False, 'shape': (2,), }", d8 + d8)),
                       "unsupported dtype descriptor '<c8'", "<f4");
  EXPECT_TESSERA_ERROR(parse_npy(npy_file("{'descr': '<u2', 'fortran_order': False, 'shape': (4,), }", d8)),
                       "descriptor '<u2'");
  EXPECT_TESSERA_ERROR(parse_npy(npy_file("{'descr': 'O', 'fortran_order': False, 'shape': (1,), }", d8)),
                       "descriptor 'O'");
  EXPECT_TESSERA_ERROR(parse_npy(npy_file("{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (2,), }", d8)),
                       "malformed header", "expected a quoted string");
  EXPECT_TESSERA_ERROR(parse_npy(npy_file("{'descr': '<f4', 'shape': (2,), }", d8)), "lacks the key 'fortran_order'");
  EXPECT_TESSERA_ERROR(parse_npy(npy_file("{'descr': '<f4', 'fortran_order': False}", d8)), "lacks the key 'shape'");
  EXPECT_TESSERA_ERROR(parse_npy(npy_file("{'fortran_order': False, 'shape': (2,)}", d8)), "lacks the key 'descr'");
  EXPECT_TESSERA_ERROR(parse_npy(npy_file("{'descr': '<f4', 'fortran_order': False, 'shape': (2,), 'x': 1}", d8)),
                       "unexpected key 'x'");
  EXPECT_TESSERA_ERROR(parse_npy(npy_file("{'descr': '<f4', 'descr': '<f4', 'fortran_order': False, 'shape': (2,)}", d8)),
                       "duplicate key 'descr'");
  EXPECT_TESSERA_ERROR(parse_npy(npy_file("{'descr': '<f4', 'fortran_order': 0, 'shape': (2,)}", d8)),
                       "expected True or False");
  EXPECT_TESSERA_ERROR(parse_npy(npy_file("{'descr': '<f4', 'fortran_order': False, 'shape': (-2,)}", d8)),
                       "non-negative integer");
  EXPECT_TESSERA_ERROR(parse_npy(npy_file("{'descr': '<f4', 'fortran_order': False, 'shape': (2)}", d8)), "trailing comma");
  EXPECT_TESSERA_ERROR(parse_npy(npy_file("{'descr': '<f4', 'fortran_order': False, 'shape': [2]}", d8)), "expected '('");
  EXPECT_TESSERA_ERROR(parse_npy(npy_file("{'descr': '<f4', 'fortran_order': False, 'shape': (2,)} junk", d8)),
                       "after the closing");
  EXPECT_TESSERA_ERROR(parse_npy(npy_file("{'descr': '<f4\\n', 'fortran_order': False, 'shape': (2,)}", d8)), "escape");
  EXPECT_TESSERA_ERROR(parse_npy(npy_file("{'descr': '<f4", d8)), "unterminated string");
  EXPECT_TESSERA_ERROR(parse_npy(npy_file("{'descr': '|u1', 'fortran_order': False, 'shape': (4294967296, 4294967296)}")),
                       "overflows 64 bits");
  EXPECT_TESSERA_ERROR(
      parse_npy(npy_file("{'descr': '|u1', 'fortran_order': False, 'shape': (0, 4294967296, 4294967296)}")),
      "overflows 64 bits");
  EXPECT_TESSERA_ERROR(parse_npy(npy_file("{'descr': '<f8', 'fortran_order': False, 'shape': (4611686018427387904,)}")),
                       "byte size", "overflows 64 bits");
  EXPECT_TESSERA_ERROR(parse_npy(npy_file("{'descr': '|u1', 'fortran_order': False, 'shape': (99999999999999999999,)}")),
                       "dimension too large");
  EXPECT_TESSERA_ERROR(io::load_npy("/nonexistent.npy"), "/nonexistent.npy", "No such file");
  EXPECT_TESSERA_ERROR(io::save_npy("/nonexistent/dir/a.npy", Array::scalar(1)), "/nonexistent/dir/a.npy");
  EXPECT_TESSERA_ERROR(io::serialize_npy(Array()), "undefined");
}

TEST(Npy, EveryTruncationThrowsAndByteFlipsNeverCrash) {
  const std::string full = io::serialize_npy(sample_array(DType::i32, {2, 2}));
  ASSERT_EQ(parse_npy(full).numel(), 4);
  for (size_t len = 0; len < full.size(); ++len) {
    EXPECT_THROW(io::load_npy_from_memory(u8(full), len, "truncated"), Error) << "length " << len;
  }
  int parsed = 0, rejected = 0;
  for (size_t i = 0; i < full.size(); ++i) {
    for (uint8_t value : {uint8_t{0}, uint8_t{0xff}, uint8_t{'9'}, uint8_t{'('}, uint8_t{'\''}}) {
      std::string corrupt = full;
      corrupt[i] = static_cast<char>(value);
      try {
        parse_npy(corrupt);
        ++parsed;
      } catch (const Error&) {
        ++rejected;
      }
    }
  }
  EXPECT_GT(parsed, 0);
  EXPECT_GT(rejected, 0);
}
