#include "tessera/data/image_folder.h"

#include <png.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>

#include "tessera/core/atomic_file.h"

namespace tessera::data {

namespace fs = std::filesystem;

namespace {

// Owns a png_image so that libpng's allocations are released on every path.
struct PngImage {
  png_image image{};
  PngImage() { image.version = PNG_IMAGE_VERSION; }
  ~PngImage() { png_image_free(&image); }
  PngImage(const PngImage&) = delete;
  PngImage& operator=(const PngImage&) = delete;
};

struct DecodedPng {
  int64_t channels = 0, height = 0, width = 0;
  Array pixels;  // f32 [C, H, W]
};

DecodedPng decode_png(const std::string& path, int channels) {
  TESSERA_CHECK(channels == 0 || channels == 1 || channels == 3,
                "read_png: channels must be 0 (as stored), 1 or 3, got {}", channels);
  PngImage png;
  if (!png_image_begin_read_from_file(&png.image, path.c_str())) {
    fail("read_png: cannot decode '{}': {}", path, png.image.message);
  }
  const bool stored_color = (png.image.format & PNG_FORMAT_FLAG_COLOR) != 0;
  const bool has_alpha = (png.image.format & PNG_FORMAT_FLAG_ALPHA) != 0;
  const int out_channels = channels != 0 ? channels : (stored_color ? 3 : 1);
  // Keep alpha as a separate sample (8-bit sRGB output is not premultiplied) and drop it below, so
  // colour values come through unchanged.
  png.image.format = (out_channels == 3 ? PNG_FORMAT_RGB : PNG_FORMAT_GRAY) | (has_alpha ? PNG_FORMAT_FLAG_ALPHA : 0);
  const int samples = out_channels + (has_alpha ? 1 : 0);
  DecodedPng out;
  out.channels = out_channels;
  out.height = png.image.height;
  out.width = png.image.width;
  // The header's size is untrusted: refuse absurd images instead of attempting the allocation.
  const uint64_t nbytes = uint64_t{png.image.width} * png.image.height * static_cast<uint64_t>(samples);
  TESSERA_CHECK(nbytes <= (uint64_t{1} << 31), "read_png: '{}' claims {}x{} pixels, more than this reader accepts",
                path, png.image.width, png.image.height);
  std::vector<uint8_t> buffer(PNG_IMAGE_SIZE(png.image));
  if (!png_image_finish_read(&png.image, nullptr, buffer.data(), 0, nullptr)) {
    fail("read_png: cannot decode '{}': {}", path, png.image.message);
  }
  out.pixels = Array::empty(DType::f32, {out.channels, out.height, out.width});
  float* dst = out.pixels.data<float>();
  const int64_t plane = out.height * out.width;
  for (int64_t p = 0; p < plane; ++p) {
    for (int64_t c = 0; c < out.channels; ++c)
      dst[c * plane + p] = static_cast<float>(buffer[p * samples + c]) / 255.0f;
  }
  return out;
}

bool is_png_name(const fs::path& p) {
  std::string ext = p.extension().string();
  std::transform(ext.begin(), ext.end(), ext.begin(),
                 [](unsigned char ch) { return static_cast<char>(std::tolower(ch)); });
  return ext == ".png";
}

bool is_hidden(const fs::path& p) {
  return !p.filename().empty() && p.filename().string()[0] == '.';
}

}  // namespace

Array read_png(const std::string& path, int channels) {
  return decode_png(path, channels).pixels;
}

void write_png(const std::string& path, const Array& image) {
  TESSERA_CHECK(
      image.defined() && (image.rank() == 2 || (image.rank() == 3 && (image.shape()[0] == 1 || image.shape()[0] == 3))),
      "write_png: expected an image [H, W], [1, H, W] or [3, H, W], got {}{}", dtype_name(image.dtype()),
      shape_str(image.shape()));
  const Array chw = image.rank() == 2 ? image.unsqueeze(0) : image;
  const int64_t c = chw.shape()[0], h = chw.shape()[1], w = chw.shape()[2];
  TESSERA_CHECK(h > 0 && w > 0 && h <= (1 << 24) && w <= (1 << 24), "write_png: invalid image size {}x{}", h, w);
  // Interleave to HWC bytes; floats map [0, 1] to 0..255 with rounding, clamped.
  const std::vector<double> values = chw.permute({1, 2, 0}).to_f64();
  std::vector<uint8_t> bytes(values.size());
  const bool is_float = is_floating(image.dtype());
  for (size_t i = 0; i < values.size(); ++i) {
    const double v = is_float ? std::round(std::clamp(values[i], 0.0, 1.0) * 255.0) : std::clamp(values[i], 0.0, 255.0);
    bytes[i] = static_cast<uint8_t>(std::isnan(v) ? 0 : v);
  }
  PngImage png;
  png.image.width = static_cast<png_uint_32>(w);
  png.image.height = static_cast<png_uint_32>(h);
  png.image.format = c == 3 ? PNG_FORMAT_RGB : PNG_FORMAT_GRAY;
  png_alloc_size_t size = 0;
  if (!png_image_write_get_memory_size(png.image, size, 0, bytes.data(), 0, nullptr)) {
    fail("write_png: cannot encode '{}': {}", path, png.image.message);
  }
  std::string encoded(size, '\0');
  if (!png_image_write_to_memory(&png.image, encoded.data(), &size, 0, bytes.data(), 0, nullptr)) {
    fail("write_png: cannot encode '{}': {}", path, png.image.message);
  }
  encoded.resize(size);
  write_file_atomic(path, encoded);
}

ImageFolder load_image_folder(const std::string& root, const ImageFolderOptions& options) {
  std::error_code ec;
  TESSERA_CHECK(fs::is_directory(root, ec), "load_image_folder: '{}' is not a directory", root);
  std::vector<std::string> classes, paths;
  std::vector<std::pair<std::string, int64_t>> files;  // path, label
  std::vector<fs::path> class_dirs;
  for (const fs::directory_entry& entry : fs::directory_iterator(root)) {
    if (entry.is_directory() && !is_hidden(entry.path())) class_dirs.push_back(entry.path());
  }
  std::sort(class_dirs.begin(), class_dirs.end());
  TESSERA_CHECK(!class_dirs.empty(), "load_image_folder: '{}' has no class sub-folders (expected root/<class>/*.png)",
                root);
  for (const fs::path& dir : class_dirs) {
    const int64_t label = static_cast<int64_t>(classes.size());
    classes.push_back(dir.filename().string());
    std::vector<std::string> images;
    for (const fs::directory_entry& entry : fs::directory_iterator(dir)) {
      if (entry.is_regular_file() && !is_hidden(entry.path()) && is_png_name(entry.path())) {
        images.push_back(entry.path().string());
      }
    }
    std::sort(images.begin(), images.end());
    for (std::string& path : images) files.emplace_back(std::move(path), label);
  }
  TESSERA_CHECK(!files.empty(), "load_image_folder: no .png images under the class folders of '{}'", root);

  Array inputs, targets = Array::empty(DType::i64, {static_cast<int64_t>(files.size())});
  int64_t* labels = targets.data<int64_t>();
  for (size_t i = 0; i < files.size(); ++i) {
    const auto& [path, label] = files[i];
    DecodedPng img = decode_png(path, options.channels);
    if (i == 0) {
      inputs = Array::empty(DType::f32, {static_cast<int64_t>(files.size()), img.channels, img.height, img.width});
    }
    const Shape expected(inputs.shape().begin() + 1, inputs.shape().end());
    TESSERA_CHECK(img.pixels.shape() == expected,
                  "load_image_folder: '{}' decodes to [C, H, W] = {} but '{}' gave {}; every image must have the "
                  "same size and channel count (or set ImageFolderOptions::channels)",
                  path, shape_str(img.pixels.shape()), files[0].first, shape_str(expected));
    std::memcpy(inputs.data<float>() + i * static_cast<size_t>(img.pixels.numel()), img.pixels.raw_data(),
                img.pixels.nbytes());
    labels[i] = label;
    paths.push_back(path);
  }
  return ImageFolder{TensorDataset(inputs, targets), std::move(classes), std::move(paths)};
}

}  // namespace tessera::data
