#include "tessera/data/idx.h"

#include <zlib.h>

#include <algorithm>
#include <climits>
#include <cstring>

#include "tessera/io/atomic_file.h"

namespace tessera::data {

namespace {

// Deflate cannot expand more than ~1032:1, which bounds any size hint taken from the (untrusted)
// gzip trailer.
constexpr uint64_t kMaxDeflateRatio = 1032;

struct IdxType {
  uint8_t code;
  DType dtype;
};
constexpr IdxType kTypes[] = {
    {0x08, DType::u8}, {0x09, DType::i8}, {0x0C, DType::i32}, {0x0D, DType::f32}, {0x0E, DType::f64}};

uint32_t read_be32(const uint8_t* p) {
  return (uint32_t{p[0]} << 24) | (uint32_t{p[1]} << 16) | (uint32_t{p[2]} << 8) | uint32_t{p[3]};
}

Array parse_idx(const uint8_t* data, size_t size, const std::string& what) {
  TESSERA_CHECK(size >= 4, "{}: {} bytes is too short for the 4-byte IDX magic number", what, size);
  const uint32_t magic = read_be32(data);
  const uint8_t type_code = data[2], ndims = data[3];
  const IdxType* type = nullptr;
  for (const IdxType& t : kTypes) {
    if (t.code == type_code) type = &t;
  }
  if (data[0] != 0 || data[1] != 0 || type == nullptr || ndims == 0) {
    fail(
        "{}: bad IDX magic number 0x{:08x}: expected 0x0000TTNN with TT one of 08 (u8), 09 (i8), 0C (i32), 0D (f32), "
        "0E (f64) and NN >= 1 dimensions, e.g. 0x00000801 for labels or 0x00000803 for images",
        what, magic);
  }
  const size_t header = 4 + 4 * size_t{ndims};
  TESSERA_CHECK(size >= header, "{}: truncated: {} dimensions need a {}-byte header but the file has {} bytes", what,
                ndims, header, size);
  Shape shape;
  int64_t extent = 1;  // product of the non-zero dimensions, which strides multiply
  for (size_t i = 0; i < ndims; ++i) {
    shape.push_back(read_be32(data + 4 + 4 * i));
    // u32 dimensions: the product can overflow int64 only after three of them, so check each step.
    TESSERA_CHECK(!__builtin_mul_overflow(extent, std::max<int64_t>(shape.back(), 1), &extent),
                  "{}: the element count of dimensions {} overflows 64 bits", what, shape_str(shape));
  }
  const size_t esize = dtype_size(type->dtype);
  const size_t available = size - header;
  const int64_t count = shape_numel(shape);
  uint64_t need = 0;
  TESSERA_CHECK(!__builtin_mul_overflow(static_cast<uint64_t>(count), esize, &need),
                "{}: the byte size of dimensions {} overflows 64 bits", what, shape_str(shape));
  TESSERA_CHECK(need == available, "{}: dimensions {} of {} need {} data bytes but the file has {} ({})", what,
                shape_str(shape), dtype_name(type->dtype), need, available,
                available < need ? "truncated" : "trailing bytes after the data");
  Array out = Array::empty(type->dtype, shape);
  uint8_t* dst = static_cast<uint8_t*>(out.raw_data());
  const uint8_t* src = data + header;
  if (esize == 1) {
    if (need > 0) std::memcpy(dst, src, need);
  } else {
    // Big-endian elements to native order, byte by byte (no alignment or aliasing assumptions).
    for (int64_t i = 0; i < count; ++i) {
      for (size_t b = 0; b < esize; ++b) dst[i * esize + b] = src[i * esize + (esize - 1 - b)];
    }
  }
  return out;
}

}  // namespace

bool is_gzip(const uint8_t* data, size_t size) {
  return size >= 2 && data[0] == 0x1f && data[1] == 0x8b;
}

std::vector<uint8_t> gunzip(const uint8_t* data, size_t size, const std::string& what) {
  TESSERA_CHECK(is_gzip(data, size), "{}: not gzip data (expected it to start with 1f 8b)", what);
  std::vector<uint8_t> out;
  // The trailer's ISIZE (uncompressed size mod 2^32) is a good first guess for single-member files.
  if (size >= 18) {
    const uint64_t isize = uint64_t{data[size - 4]} | uint64_t{data[size - 3]} << 8 | uint64_t{data[size - 2]} << 16 |
                           uint64_t{data[size - 1]} << 24;
    out.reserve(std::min<uint64_t>(isize, size * kMaxDeflateRatio));
  }
  z_stream zs{};
  TESSERA_CHECK(inflateInit2(&zs, 15 + 16) == Z_OK, "{}: zlib initialisation failed", what);
  size_t consumed = 0;
  size_t produced = 0;
  int status = Z_OK;
  while (true) {
    if (out.size() - produced < 65536) out.resize(std::max<size_t>(out.size() * 2, produced + 65536));
    const size_t in_chunk = std::min<size_t>(size - consumed, UINT_MAX);
    const size_t out_chunk = std::min<size_t>(out.size() - produced, UINT_MAX);
    zs.next_in = const_cast<Bytef*>(data + consumed);
    zs.avail_in = static_cast<uInt>(in_chunk);
    zs.next_out = out.data() + produced;
    zs.avail_out = static_cast<uInt>(out_chunk);
    status = inflate(&zs, Z_NO_FLUSH);
    consumed += in_chunk - zs.avail_in;
    produced += out_chunk - zs.avail_out;
    if (status == Z_STREAM_END) {
      // Another gzip member may follow; anything else after the stream is corruption.
      if (consumed == size) break;
      if (!is_gzip(data + consumed, size - consumed)) {
        inflateEnd(&zs);
        fail("{}: {} unexpected bytes after the end of the gzip stream", what, size - consumed);
      }
      inflateReset(&zs);
      continue;
    }
    if (status == Z_BUF_ERROR && consumed == size) {
      inflateEnd(&zs);
      fail("{}: truncated gzip stream (input ended after {} compressed bytes, {} decompressed)", what, size, produced);
    }
    if (status != Z_OK && status != Z_BUF_ERROR) {
      const std::string reason = zs.msg != nullptr ? zs.msg : "error " + std::to_string(status);
      inflateEnd(&zs);
      fail("{}: corrupt gzip data at compressed byte {}: {}", what, consumed, reason);
    }
  }
  inflateEnd(&zs);
  out.resize(produced);
  return out;
}

std::vector<uint8_t> serialize_idx(const Array& array) {
  TESSERA_CHECK(array.defined() && array.rank() >= 1 && array.rank() <= 255,
                "write_idx: expected an array of rank 1 to 255, got {}{}", dtype_name(array.dtype()),
                shape_str(array.shape()));
  const IdxType* type = nullptr;
  for (const IdxType& t : kTypes) {
    if (t.dtype == array.dtype()) type = &t;
  }
  TESSERA_CHECK(type != nullptr, "write_idx: IDX has no element type for {} (expected u8, i8, i32, f32 or f64)",
                dtype_name(array.dtype()));
  std::vector<uint8_t> out = {0, 0, type->code, static_cast<uint8_t>(array.rank())};
  for (int64_t d : array.shape()) {
    TESSERA_CHECK(d <= int64_t{UINT32_MAX}, "write_idx: dimension {} of {} does not fit in 32 bits", d,
                  shape_str(array.shape()));
    for (int shift = 24; shift >= 0; shift -= 8) out.push_back(static_cast<uint8_t>((d >> shift) & 0xff));
  }
  const Array c = array.contiguous();
  const size_t esize = dtype_size(c.dtype());
  const uint8_t* src = static_cast<const uint8_t*>(c.raw_data());
  const size_t header = out.size();
  out.resize(header + c.nbytes());
  for (int64_t i = 0; i < c.numel(); ++i) {
    for (size_t b = 0; b < esize; ++b) out[header + i * esize + b] = src[i * esize + (esize - 1 - b)];
  }
  return out;
}

std::vector<uint8_t> gzip(const uint8_t* data, size_t size, int level) {
  TESSERA_CHECK(size <= UINT_MAX, "gzip: inputs above 4 GiB are not supported");
  z_stream zs{};
  TESSERA_CHECK(deflateInit2(&zs, level, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) == Z_OK,
                "gzip: zlib initialisation failed (level {})", level);
  std::vector<uint8_t> out(deflateBound(&zs, size) + 32);
  zs.next_in = const_cast<Bytef*>(data);
  zs.avail_in = static_cast<uInt>(size);
  zs.next_out = out.data();
  zs.avail_out = static_cast<uInt>(out.size());
  const int status = deflate(&zs, Z_FINISH);
  out.resize(zs.total_out);
  deflateEnd(&zs);
  TESSERA_CHECK(status == Z_STREAM_END, "gzip: zlib deflate failed ({})", status);
  return out;
}

void write_idx(const std::string& path, const Array& array, bool compress) {
  std::vector<uint8_t> bytes = serialize_idx(array);
  if (compress) bytes = gzip(bytes.data(), bytes.size());
  io::write_file_atomic(path, std::string_view(reinterpret_cast<const char*>(bytes.data()), bytes.size()));
}

Array read_idx_from_memory(const uint8_t* data, size_t size, const std::string& what) {
  if (is_gzip(data, size)) {
    const std::vector<uint8_t> plain = gunzip(data, size, what);
    return parse_idx(plain.data(), plain.size(), what + " (after gunzip)");
  }
  return parse_idx(data, size, what);
}

Array read_idx(const std::string& path) {
  io::MappedFile file(path);
  return read_idx_from_memory(file.data(), file.size(), fmt::format("IDX file '{}'", path));
}

}  // namespace tessera::data
