#include "tessera/data/idx.h"

#include <zlib.h>

#include <algorithm>
#include <climits>
#include <cstring>
#include <memory>

#include "tessera/core/atomic_file.h"

namespace tessera::data {

namespace {

// Deflate cannot expand more than ~1032:1, which bounds the data size an (untrusted) IDX header may
// declare inside a gzip file of a given size.
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

// The element type of an IDX magic number, or a failure naming `what`.
const IdxType& idx_type(const uint8_t* magic, const std::string& what) {
  const uint8_t type_code = magic[2], ndims = magic[3];
  const IdxType* type = nullptr;
  for (const IdxType& t : kTypes) {
    if (t.code == type_code) type = &t;
  }
  if (magic[0] != 0 || magic[1] != 0 || type == nullptr || ndims == 0) {
    fail(
        "{}: bad IDX magic number 0x{:08x}: expected 0x0000TTNN with TT one of 08 (u8), 09 (i8), 0C (i32), 0D (f32), "
        "0E (f64) and NN >= 1 dimensions, e.g. 0x00000801 for labels or 0x00000803 for images",
        what, read_be32(magic));
  }
  return *type;
}

// The header from its complete bytes (magic and 4 * ndims dimension bytes), with the data size checked
// for overflow.
IdxHeader header_from(const uint8_t* bytes, const std::string& what) {
  IdxHeader h;
  h.dtype = idx_type(bytes, what).dtype;
  const size_t ndims = bytes[3];
  h.header_bytes = 4 + 4 * ndims;
  int64_t extent = 1;  // product of the non-zero dimensions, which strides multiply
  for (size_t i = 0; i < ndims; ++i) {
    h.shape.push_back(read_be32(bytes + 4 + 4 * i));
    // u32 dimensions: the product can overflow int64 only after three of them, so check each step.
    TESSERA_CHECK(!__builtin_mul_overflow(extent, std::max<int64_t>(h.shape.back(), 1), &extent),
                  "{}: the element count of dimensions {} overflows 64 bits", what, shape_str(h.shape));
  }
  TESSERA_CHECK(
      !__builtin_mul_overflow(static_cast<uint64_t>(shape_numel(h.shape)), dtype_size(h.dtype), &h.data_bytes),
      "{}: the byte size of dimensions {} overflows 64 bits", what, shape_str(h.shape));
  return h;
}

// Big-endian elements to native order in place, byte by byte (no alignment or aliasing assumptions).
void big_endian_to_native(uint8_t* bytes, uint64_t size, size_t esize) {
  if (esize == 1) return;
  for (uint64_t at = 0; at + esize <= size; at += esize) std::reverse(bytes + at, bytes + at + esize);
}

// The elements after a header, big-endian in `src`, as an array.
Array idx_array(const IdxHeader& h, const uint8_t* src) {
  Array out = Array::empty(h.dtype, h.shape);
  uint8_t* dst = static_cast<uint8_t*>(out.raw_data());
  if (h.data_bytes > 0) std::memcpy(dst, src, h.data_bytes);
  big_endian_to_native(dst, h.data_bytes, dtype_size(h.dtype));
  return out;
}

Array parse_idx(const uint8_t* data, size_t size, const std::string& what) {
  TESSERA_CHECK(size >= 4, "{}: {} bytes is too short for the 4-byte IDX magic number", what, size);
  idx_type(data, what);
  const size_t header = 4 + 4 * size_t{data[3]};
  TESSERA_CHECK(size >= header, "{}: truncated: {} dimensions need a {}-byte header but the file has {} bytes", what,
                data[3], header, size);
  const IdxHeader h = header_from(data, what);
  const size_t available = size - header;
  TESSERA_CHECK(h.data_bytes == available, "{}: dimensions {} of {} need {} data bytes but the file has {} ({})", what,
                shape_str(h.shape), dtype_name(h.dtype), h.data_bytes, available,
                available < h.data_bytes ? "truncated" : "trailing bytes after the data");
  return idx_array(h, data + header);
}

// Inflates a gzip stream (one or more members) on demand, so that a reader takes only the bytes it
// asks for: nothing is inflated beyond what the IDX header declares (a small "gzip bomb" cannot make
// us inflate gigabytes first).
class GzipReader {
 public:
  GzipReader(const uint8_t* data, size_t size, std::string what) : data_(data), size_(size), what_(std::move(what)) {
    TESSERA_CHECK(is_gzip(data, size), "{}: not gzip data (expected it to start with 1f 8b)", what_);
    TESSERA_CHECK(inflateInit2(&zs_, 15 + 16) == Z_OK, "{}: zlib initialisation failed", what_);
  }
  ~GzipReader() { inflateEnd(&zs_); }
  GzipReader(const GzipReader&) = delete;
  GzipReader& operator=(const GzipReader&) = delete;

  // Inflates up to n bytes into dst; fewer only where the stream ends. Corrupt or truncated input and
  // bytes after the last member fail, naming the input.
  size_t read(uint8_t* dst, size_t n) {
    size_t produced = 0;
    while (produced < n && !ended_) {
      const size_t in_chunk = std::min<size_t>(size_ - consumed_, UINT_MAX);
      const size_t out_chunk = std::min<size_t>(n - produced, UINT_MAX);
      zs_.next_in = const_cast<Bytef*>(data_ + consumed_);
      zs_.avail_in = static_cast<uInt>(in_chunk);
      zs_.next_out = dst + produced;
      zs_.avail_out = static_cast<uInt>(out_chunk);
      const int status = inflate(&zs_, Z_NO_FLUSH);
      consumed_ += in_chunk - zs_.avail_in;
      produced += out_chunk - zs_.avail_out;
      total_ += out_chunk - zs_.avail_out;
      if (status == Z_STREAM_END) {
        // Another gzip member may follow; anything else after the stream is corruption.
        if (consumed_ == size_) {
          ended_ = true;
        } else if (!is_gzip(data_ + consumed_, size_ - consumed_)) {
          fail("{}: {} unexpected bytes after the end of the gzip stream", what_, size_ - consumed_);
        } else {
          inflateReset(&zs_);
        }
        continue;
      }
      if (status == Z_BUF_ERROR && consumed_ == size_) {
        fail("{}: truncated gzip stream (input ended after {} compressed bytes, {} decompressed)", what_, size_,
             total_);
      }
      if (status != Z_OK && status != Z_BUF_ERROR) {
        fail("{}: corrupt gzip data at compressed byte {}: {}", what_, consumed_,
             zs_.msg != nullptr ? std::string(zs_.msg) : "error " + std::to_string(status));
      }
    }
    return produced;
  }

  // Whether anything follows what was read (inflating at most one more byte); checks the rest of the
  // stream, trailer and CRC included, when nothing does.
  bool more() {
    uint8_t byte = 0;
    return read(&byte, 1) == 1;
  }

 private:
  z_stream zs_{};
  const uint8_t* data_;
  size_t size_, consumed_ = 0;
  uint64_t total_ = 0;
  bool ended_ = false;
  std::string what_;
};

// A gzip'd IDX file: the header first, then exactly the data bytes it declares, bounded by what deflate
// can expand the compressed size to; short or trailing data fail clearly.
Array parse_gzip_idx(const uint8_t* data, size_t size, const std::string& what) {
  const std::string inner = what + " (after gunzip)";
  GzipReader reader(data, size, what);
  uint8_t header[4 + 4 * 255];
  size_t got = reader.read(header, 4);
  TESSERA_CHECK(got == 4, "{}: {} bytes is too short for the 4-byte IDX magic number", inner, got);
  idx_type(header, inner);
  const size_t header_bytes = 4 + 4 * size_t{header[3]};
  got += reader.read(header + 4, header_bytes - 4);
  TESSERA_CHECK(got == header_bytes, "{}: truncated: {} dimensions need a {}-byte header but the file has {} bytes",
                inner, header[3], header_bytes, got);
  const IdxHeader h = header_from(header, inner);
  TESSERA_CHECK(h.data_bytes <= static_cast<uint64_t>(size) * kMaxDeflateRatio,
                "{}: dimensions {} of {} need {} data bytes, more than {} gzip'd bytes can hold (deflate expands at "
                "most {}:1): truncated or corrupt",
                inner, shape_str(h.shape), dtype_name(h.dtype), h.data_bytes, size, kMaxDeflateRatio);
  // Straight into the array's storage: the declared size is all that is ever allocated.
  Array out = Array::empty(h.dtype, h.shape);
  uint8_t* dst = static_cast<uint8_t*>(out.raw_data());
  const size_t available = reader.read(dst, static_cast<size_t>(h.data_bytes));
  TESSERA_CHECK(available == h.data_bytes, "{}: dimensions {} of {} need {} data bytes but the file has {} (truncated)",
                inner, shape_str(h.shape), dtype_name(h.dtype), h.data_bytes, available);
  TESSERA_CHECK(!reader.more(),
                "{}: dimensions {} of {} need {} data bytes but the file has more (trailing bytes after the data; not "
                "inflated further)",
                inner, shape_str(h.shape), dtype_name(h.dtype), h.data_bytes);
  big_endian_to_native(dst, h.data_bytes, dtype_size(h.dtype));
  return out;
}

}  // namespace

bool is_gzip(const uint8_t* data, size_t size) {
  return size >= 2 && data[0] == 0x1f && data[1] == 0x8b;
}

std::vector<uint8_t> gunzip(const uint8_t* data, size_t size, const std::string& what, size_t max_size) {
  GzipReader reader(data, size, what);
  std::vector<uint8_t> out;
  size_t produced = 0;
  while (true) {
    if (out.size() - produced < 65536) out.resize(std::max<size_t>(out.size() * 2, produced + 65536));
    const size_t room = max_size - produced;  // reading one byte past it detects an excess
    const size_t want = std::min(out.size() - produced, room == SIZE_MAX ? room : room + 1);
    const size_t got = reader.read(out.data() + produced, want);
    produced += got;
    TESSERA_CHECK(produced <= max_size, "{}: inflates to more than the {} bytes allowed", what, max_size);
    if (got < want) break;
  }
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
  write_file_atomic(path, std::string_view(reinterpret_cast<const char*>(bytes.data()), bytes.size()));
}

Array read_idx_from_memory(const uint8_t* data, size_t size, const std::string& what) {
  return is_gzip(data, size) ? parse_gzip_idx(data, size, what) : parse_idx(data, size, what);
}

IdxHeader read_idx_header_from_memory(const uint8_t* data, size_t size, const std::string& what) {
  uint8_t header[4 + 4 * 255];
  size_t got = 0;
  const std::string inner = is_gzip(data, size) ? what + " (after gunzip)" : what;
  std::unique_ptr<GzipReader> reader;
  auto take = [&](size_t n) {
    if (is_gzip(data, size)) {
      if (!reader) reader = std::make_unique<GzipReader>(data, size, what);
      got += reader->read(header + got, n);
    } else {
      const size_t k = std::min(n, size - got);
      std::memcpy(header + got, data + got, k);
      got += k;
    }
  };
  take(4);
  TESSERA_CHECK(got == 4, "{}: {} bytes is too short for the 4-byte IDX magic number", inner, got);
  idx_type(header, inner);
  const size_t header_bytes = 4 + 4 * size_t{header[3]};
  take(header_bytes - 4);
  TESSERA_CHECK(got == header_bytes, "{}: truncated: {} dimensions need a {}-byte header but the file has {} bytes",
                inner, header[3], header_bytes, got);
  return header_from(header, inner);
}

IdxHeader read_idx_header(const std::string& path) {
  MappedFile file(path);
  return read_idx_header_from_memory(file.data(), file.size(), fmt::format("IDX file '{}'", path));
}

Array read_idx(const std::string& path) {
  MappedFile file(path);
  return read_idx_from_memory(file.data(), file.size(), fmt::format("IDX file '{}'", path));
}

}  // namespace tessera::data
