#include <sys/resource.h>
#include <zlib.h>

#include "io/io_test_util.h"
#include "tessera/data/idx.h"
#include "test_util.h"

using namespace tessera;
using namespace tessera::test;

namespace {

Array parse(const std::string& bytes) {
  return data::read_idx_from_memory(u8(bytes), bytes.size(), "test.idx");
}

std::string gz(const std::string& plain) {
  const std::vector<uint8_t> z = data::gzip(u8(plain), plain.size());
  return std::string(z.begin(), z.end());
}

// Hand-written files: magic, big-endian dims, data.
const std::string kLabels = std::string("\0\0\x08\x01\0\0\0\x05", 8) + std::string("\x09\x00\x03\x07\x01", 5);
const std::string kImages = std::string("\0\0\x08\x03\0\0\0\x02\0\0\0\x02\0\0\0\x03", 16) +
                            std::string("\x00\x01\x02\x03\x04\x05\xfa\xfb\xfc\xfd\xfe\xff", 12);

}  // namespace

TEST(Idx, PlainLabelsAndImages) {
  const Array labels = parse(kLabels);
  EXPECT_EQ(labels.dtype(), DType::u8);
  EXPECT_EQ(shape_str(labels.shape()), "[5]");
  EXPECT_EQ(labels.to_i64(), (std::vector<int64_t>{9, 0, 3, 7, 1}));
  const Array images = parse(kImages);
  EXPECT_EQ(shape_str(images.shape()), "[2, 2, 3]");
  EXPECT_EQ(images.to_i64(), (std::vector<int64_t>{0, 1, 2, 3, 4, 5, 250, 251, 252, 253, 254, 255}));
}

TEST(Idx, GzipAndFiles) {
  ScratchDir dir;
  write_bytes(dir.file("l.gz"), gz(kLabels));
  write_bytes(dir.file("i"), kImages);
  EXPECT_EQ(data::read_idx(dir.file("l.gz")).to_i64(), (std::vector<int64_t>{9, 0, 3, 7, 1}));
  EXPECT_EQ(data::read_idx(dir.file("i")).to_i64(), parse(kImages).to_i64());
  // gzip allows concatenated members; together they form one stream.
  const Array two = parse(gz(kImages.substr(0, 10)) + gz(kImages.substr(10)));
  EXPECT_EQ(two.to_i64(), parse(kImages).to_i64());
}

TEST(Idx, OtherElementTypesAreBigEndian) {
  // i32 [2]: 1, -2; f32 [1]: 1.5 (0x3fc00000); f64 [1]: -0.25 (0xbfd0000000000000); i8 [2]: -1, 5.
  EXPECT_EQ(parse(std::string("\0\0\x0c\x01\0\0\0\x02\0\0\0\x01\xff\xff\xff\xfe", 16)).to_i64(),
            (std::vector<int64_t>{1, -2}));
  const Array f = parse(std::string("\0\0\x0d\x01\0\0\0\x01\x3f\xc0\0\0", 12));
  EXPECT_EQ(f.dtype(), DType::f32);
  EXPECT_EQ(f.item(), 1.5);
  const Array d = parse(std::string("\0\0\x0e\x01\0\0\0\x01\xbf\xd0\0\0\0\0\0\0", 16));
  EXPECT_EQ(d.dtype(), DType::f64);
  EXPECT_EQ(d.item(), -0.25);
  EXPECT_EQ(parse(std::string("\0\0\x09\x01\0\0\0\x02\xff\x05", 10)).to_i64(), (std::vector<int64_t>{-1, 5}));
}

TEST(Idx, WriteRoundTrip) {
  ScratchDir dir;
  for (DType dt : {DType::u8, DType::i8, DType::i32, DType::f32, DType::f64}) {
    for (bool compress : {false, true}) {
      const Array a = sample_array(dt, {3, 1, 4});
      data::write_idx(dir.file("x"), a, compress);
      EXPECT_EQ(data::is_gzip(u8(read_bytes(dir.file("x"))), read_bytes(dir.file("x")).size()), compress);
      expect_same_array(data::read_idx(dir.file("x")), a);
    }
  }
  // The writer's bytes for the hand-written label file are exactly those bytes.
  const std::vector<uint8_t> bytes = data::serialize_idx(Array::from_vector<uint8_t>({9, 0, 3, 7, 1}, {5}));
  EXPECT_EQ(std::string(bytes.begin(), bytes.end()), kLabels);
  EXPECT_TESSERA_ERROR(data::serialize_idx(Array::zeros(DType::i64, {2})), "write_idx", "i64");
  EXPECT_TESSERA_ERROR(data::serialize_idx(Array::scalar(1, DType::u8)), "write_idx", "rank 1 to 255");
}

TEST(Idx, EmptyDimensions) {
  const Array a = parse(std::string("\0\0\x08\x02\0\0\0\0\0\0\0\x1c", 12));
  EXPECT_EQ(shape_str(a.shape()), "[0, 28]");
}

TEST(Idx, Errors) {
  EXPECT_TESSERA_ERROR(parse(""), "test.idx", "too short");
  EXPECT_TESSERA_ERROR(parse(std::string("\x01\0\x08\x01\0\0\0\x01\x00", 9)), "test.idx",
                       "bad IDX magic number 0x01000801", "0x00000801", "0x00000803");
  EXPECT_TESSERA_ERROR(parse(std::string("\0\0\x0b\x01\0\0\0\x01\0\0", 10)), "magic number 0x00000b01");
  EXPECT_TESSERA_ERROR(parse(std::string("\0\0\x08\x00", 4)), "magic number 0x00000800");
  EXPECT_TESSERA_ERROR(parse(std::string("\0\0\x08\x03\0\0\0\x02\0\0", 10)), "truncated", "16-byte header");
  EXPECT_TESSERA_ERROR(parse(kLabels.substr(0, kLabels.size() - 1)), "test.idx", "[5] of u8 need 5 data bytes", "has 4",
                       "truncated");
  EXPECT_TESSERA_ERROR(parse(kLabels + "x"), "need 5 data bytes but the file has 6", "trailing bytes");
  EXPECT_TESSERA_ERROR(parse(std::string("\0\0\x0c\x01\0\0\0\x02\0\0\0\x01", 12)), "i32", "need 8 data bytes");
  // Dimensions whose product overflows.
  EXPECT_TESSERA_ERROR(parse(std::string("\0\0\x08\x03\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff", 16)),
                       "overflows 64 bits");
  EXPECT_TESSERA_ERROR(data::read_idx("/nonexistent/train-images-idx3-ubyte.gz"),
                       "/nonexistent/train-images-idx3-ubyte.gz", "No such file");
}

TEST(Idx, GzipErrors) {
  const std::string z = gz(kImages);
  ASSERT_EQ(parse(z).numel(), 12);
  for (size_t len = 2; len < z.size(); ++len) {
    EXPECT_THROW(parse(z.substr(0, len)), Error) << "length " << len;
  }
  EXPECT_TESSERA_ERROR(parse(z.substr(0, z.size() - 4)), "test.idx", "truncated gzip stream");
  std::string bad_crc = z;
  bad_crc[z.size() - 8] ^= 0x55;  // CRC32 in the trailer
  EXPECT_TESSERA_ERROR(parse(bad_crc), "corrupt gzip data", "incorrect data check");
  std::string bad_method = z;
  bad_method[2] = 7;  // compression method must be 8 (deflate)
  EXPECT_TESSERA_ERROR(parse(bad_method), "corrupt gzip data");
  EXPECT_TESSERA_ERROR(parse(z + "garbage"), "7 unexpected bytes after the end of the gzip stream");
  // The decompressed contents are validated like a plain file, and say so.
  EXPECT_TESSERA_ERROR(parse(gz(kLabels + "x")), "test.idx (after gunzip)", "trailing bytes");
}

namespace {

// A valid gzip file whose stream is `head` followed by `zero_mib` MiB of zeros, built without holding the
// zeros: one compressed MiB (after a full flush, so it references nothing before it) is repeated, and
// the trailer's CRC is combined arithmetically. 512 MiB of zeros take about 0.5 MB.
std::string gzip_with_zeros(const std::string& head, int zero_mib) {
  z_stream zs{};
  EXPECT_EQ(deflateInit2(&zs, 9, Z_DEFLATED, -15, 8, Z_DEFAULT_STRATEGY), Z_OK);  // raw deflate
  auto deflate_some = [&](const uint8_t* in, size_t n, int flush) {
    std::string out(deflateBound(&zs, n) + 64, '\0');
    zs.next_in = const_cast<Bytef*>(in);
    zs.avail_in = static_cast<uInt>(n);
    zs.next_out = reinterpret_cast<Bytef*>(out.data());
    zs.avail_out = static_cast<uInt>(out.size());
    EXPECT_NE(deflate(&zs, flush), Z_STREAM_ERROR);
    out.resize(out.size() - zs.avail_out);
    return out;
  };
  const std::vector<uint8_t> mib(1 << 20, 0);
  std::string z = std::string("\x1f\x8b\x08\0\0\0\0\0\0\x03", 10);  // gzip header: deflate, no name
  z += deflate_some(u8(head), head.size(), Z_FULL_FLUSH);
  const std::string block = deflate_some(mib.data(), mib.size(), Z_FULL_FLUSH);
  uLong crc = crc32(0, u8(head), static_cast<uInt>(head.size()));
  const uLong mib_crc = crc32(0, mib.data(), static_cast<uInt>(mib.size()));
  for (int i = 0; i < zero_mib; ++i) {
    z += block;
    crc = crc32_combine(crc, mib_crc, static_cast<z_off_t>(mib.size()));
  }
  z += deflate_some(nullptr, 0, Z_FINISH);
  deflateEnd(&zs);
  const uint64_t total = head.size() + (uint64_t{static_cast<uint64_t>(zero_mib)} << 20);
  for (uint64_t v : {static_cast<uint64_t>(crc), total}) {
    for (int b = 0; b < 4; ++b) z += static_cast<char>((v >> (8 * b)) & 0xff);  // little-endian, ISIZE mod 2^32
  }
  return z;
}

const std::string kImages3Header = std::string("\0\0\x08\x03\0\0\0\x03\0\0\0\x1c\0\0\0\x1c", 16);  // u8[3, 28, 28]

// The size a gzip stream inflates to, checked to the end (CRC and length), without keeping the output.
uint64_t inflated_size(const std::string& z) {
  z_stream zs{};
  EXPECT_EQ(inflateInit2(&zs, 15 + 16), Z_OK);
  std::vector<uint8_t> out(1 << 20);
  zs.next_in = const_cast<Bytef*>(u8(z));
  zs.avail_in = static_cast<uInt>(z.size());
  int status = Z_OK;
  while (status == Z_OK) {
    zs.next_out = out.data();
    zs.avail_out = static_cast<uInt>(out.size());
    status = inflate(&zs, Z_NO_FLUSH);
  }
  EXPECT_EQ(status, Z_STREAM_END) << (zs.msg != nullptr ? zs.msg : "");
  const uint64_t total = zs.total_out;
  inflateEnd(&zs);
  return total;
}

int64_t peak_rss_kib() {
  struct rusage usage {};
  getrusage(RUSAGE_SELF, &usage);
  return usage.ru_maxrss;
}

}  // namespace

// A Fashion-MNIST-sized header followed by 512 MiB of zeros in a 0.5 MB file: the reader inflates the
// header, the 2352 data bytes it declares and one byte more, then refuses the trailing data. Before, the
// whole stream was inflated (peak memory over 512 MiB) before the header was looked at.
TEST(Idx, GzipBombIsNotInflatedPastWhatTheHeaderDeclares) {
  const std::string bomb = gzip_with_zeros(kImages3Header + std::string(3 * 784, '\x07'), 512);
  ASSERT_LT(bomb.size(), 1u << 20);
  // Measured before anything else inflates the bomb: the peak only ever rises.
  const int64_t before = peak_rss_kib();
  EXPECT_TESSERA_ERROR(parse(bomb), "test.idx (after gunzip)", "[3, 28, 28] of u8 need 2352 data bytes",
                       "trailing bytes after the data", "not inflated further");
  EXPECT_LT(peak_rss_kib() - before, 64 * 1024) << "the reader inflated far past the declared size";
  EXPECT_EQ(inflated_size(bomb), 16 + 3 * 784 + (uint64_t{512} << 20)) << "the bomb must be a valid gzip file";
  // The header alone is readable without touching the data.
  const data::IdxHeader h = data::read_idx_header_from_memory(u8(bomb), bomb.size(), "bomb");
  EXPECT_EQ(h.dtype, DType::u8);
  EXPECT_EQ(shape_str(h.shape), "[3, 28, 28]");
  EXPECT_EQ(h.header_bytes, 16u);
  EXPECT_EQ(h.data_bytes, 3u * 784);
  // gunzip itself stops at its limit instead of growing without bound.
  EXPECT_TESSERA_ERROR(data::gunzip(u8(bomb), bomb.size(), "bomb", size_t{1} << 20), "bomb",
                       "inflates to more than the 1048576 bytes allowed");
}

TEST(Idx, GzipHeaderThatTheFileCannotHoldOrShortData) {
  // 100000 images (78 MB) declared by a file of a few dozen bytes: refused before allocating anything.
  const std::string huge = gz(std::string("\0\0\x08\x03\0\x01\x86\xa0\0\0\0\x1c\0\0\0\x1c", 16) + "abc");
  EXPECT_TESSERA_ERROR(parse(huge), "test.idx (after gunzip)", "[100000, 28, 28] of u8 need 78400000 data bytes",
                       "can hold", "truncated or corrupt");
  // Declared 3 images, holds one.
  EXPECT_TESSERA_ERROR(parse(gz(kImages3Header + std::string(784, '\x01'))), "test.idx (after gunzip)",
                       "need 2352 data bytes but the file has 784 (truncated)");
  // A plain file's header reads the same way.
  const data::IdxHeader h = data::read_idx_header_from_memory(u8(kImages), kImages.size(), "plain");
  EXPECT_EQ(shape_str(h.shape), "[2, 2, 3]");
  EXPECT_EQ(h.data_bytes, 12u);
  EXPECT_TESSERA_ERROR(data::read_idx_header_from_memory(u8(kImages), 10, "plain"), "plain", "truncated",
                       "16-byte header");
}

TEST(Idx, ByteFlipsNeverCrash) {
  int parsed = 0, rejected = 0;
  for (const std::string& full : {kImages, gz(kImages)}) {
    for (size_t i = 0; i < full.size(); ++i) {
      for (uint8_t value : {uint8_t{0}, uint8_t{0xff}, uint8_t{0x08}, uint8_t{0x1f}}) {
        std::string corrupt = full;
        corrupt[i] = static_cast<char>(value);
        try {
          parse(corrupt);
          ++parsed;
        } catch (const Error&) {
          ++rejected;
        }
      }
    }
  }
  EXPECT_GT(parsed, 0);
  EXPECT_GT(rejected, 0);
}
