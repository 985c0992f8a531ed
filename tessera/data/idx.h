#pragma once
// IDX files (the MNIST family's format), plain or gzip-compressed: a big-endian magic 0x0000TTNN
// (TT the element type, NN the number of dimensions), NN big-endian u32 dimensions, then the elements
// in row-major order, big-endian. Labels are 0x00000801 (u8, 1-D), images 0x00000803 (u8, 3-D).
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "tessera/core/array.h"

namespace tessera::data {

// Element types: 0x08 -> u8, 0x09 -> i8, 0x0C -> i32, 0x0D -> f32, 0x0E -> f64 (0x0B, i16, has no
// Tessera dtype and is rejected). The file's size must match its dimensions exactly. A gzip'd file is
// read header first and inflated only as far as the header declares: a declared size that the
// compressed bytes cannot hold, a stream that ends early and bytes after the data all fail, without
// inflating past the declared size (so a small "gzip bomb" costs nothing).
Array read_idx(const std::string& path);
// Same, for an in-memory image (gzip'd or plain); `what` names it in error messages.
Array read_idx_from_memory(const uint8_t* data, size_t size, const std::string& what);

// The header alone (inflating only its bytes), to check what a file declares before reading it.
struct IdxHeader {
  DType dtype = DType::u8;
  Shape shape;
  size_t header_bytes = 0;  // magic and dimensions
  uint64_t data_bytes = 0;  // what the dimensions declare
};
IdxHeader read_idx_header(const std::string& path);
IdxHeader read_idx_header_from_memory(const uint8_t* data, size_t size, const std::string& what);

// Writes `array` (u8, i8, i32, f32 or f64; rank 1..255; any strides) as IDX, gzip'd when `compress`,
// atomically. Useful for small fixtures and for exporting data in the MNIST format.
void write_idx(const std::string& path, const Array& array, bool compress = false);
std::vector<uint8_t> serialize_idx(const Array& array);

// gzip-compresses `data` (one member, no file name).
std::vector<uint8_t> gzip(const uint8_t* data, size_t size, int level = 6);
// Decompresses a complete gzip stream (several members are concatenated, as gzip allows); throws
// naming `what` on corrupt or truncated input, and once the output would pass `max_size` bytes.
std::vector<uint8_t> gunzip(const uint8_t* data, size_t size, const std::string& what,
                            size_t max_size = size_t{1} << 32);
bool is_gzip(const uint8_t* data, size_t size);

}  // namespace tessera::data
