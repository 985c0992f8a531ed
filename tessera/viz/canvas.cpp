#include "tessera/viz/canvas.h"

#include <png.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>

#include "tessera/core/atomic_file.h"
#include "tessera/core/error.h"
#include "tessera/viz/font5x7.h"

namespace tessera::viz {

Canvas::Canvas(int width, int height, Rgb background) : width_(width), height_(height) {
  TESSERA_CHECK(width > 0 && height > 0 && width <= 16384 && height <= 16384, "Canvas: bad size {}x{}", width, height);
  pixels_.resize(static_cast<size_t>(width) * static_cast<size_t>(height) * 3);
  for (size_t i = 0; i < pixels_.size(); i += 3) {
    pixels_[i] = background.r;
    pixels_[i + 1] = background.g;
    pixels_[i + 2] = background.b;
  }
}

void Canvas::set(int x, int y, Rgb c) {
  if (x < 0 || y < 0 || x >= width_ || y >= height_) return;  // clip silently: charts draw near edges
  uint8_t* p = &pixels_[(static_cast<size_t>(y) * static_cast<size_t>(width_) + static_cast<size_t>(x)) * 3];
  p[0] = c.r;
  p[1] = c.g;
  p[2] = c.b;
}

Rgb Canvas::get(int x, int y) const {
  if (x < 0 || y < 0 || x >= width_ || y >= height_) return {};
  const uint8_t* p = &pixels_[(static_cast<size_t>(y) * static_cast<size_t>(width_) + static_cast<size_t>(x)) * 3];
  return {p[0], p[1], p[2]};
}

void Canvas::fill_rect(int x0, int y0, int x1, int y1, Rgb c) {
  for (int y = std::max(0, y0); y <= std::min(height_ - 1, y1); ++y) {
    for (int x = std::max(0, x0); x <= std::min(width_ - 1, x1); ++x) set(x, y, c);
  }
}

void Canvas::line(double x0, double y0, double x1, double y1, Rgb c, int thickness) {
  if (!std::isfinite(x0) || !std::isfinite(y0) || !std::isfinite(x1) || !std::isfinite(y1)) return;
  const double len = std::max(std::abs(x1 - x0), std::abs(y1 - y0));
  const int steps = std::max(1, static_cast<int>(std::ceil(len)));
  const int lo = -(thickness - 1) / 2, hi = thickness / 2;
  for (int i = 0; i <= steps; ++i) {
    const double t = static_cast<double>(i) / steps;
    const int x = static_cast<int>(std::lround(x0 + (x1 - x0) * t));
    const int y = static_cast<int>(std::lround(y0 + (y1 - y0) * t));
    for (int dy = lo; dy <= hi; ++dy) {
      for (int dx = lo; dx <= hi; ++dx) set(x + dx, y + dy, c);
    }
  }
}

int Canvas::text(int x, int y, const std::string& s, Rgb c, int scale) {
  int cx = x;
  for (char ch : s) {
    if (const auto* g = glyph5x7(ch)) {
      for (int row = 0; row < 7; ++row) {
        for (int col = 0; col < 5; ++col) {
          if ((*g)[static_cast<size_t>(row)] & (1u << (4 - col))) {
            fill_rect(cx + col * scale, y + row * scale, cx + (col + 1) * scale - 1, y + (row + 1) * scale - 1, c);
          }
        }
      }
    }
    cx += 6 * scale;
  }
  return cx - x;
}

void Canvas::write_png(const std::string& path) const {
  png_image image{};
  image.version = PNG_IMAGE_VERSION;
  image.width = static_cast<png_uint_32>(width_);
  image.height = static_cast<png_uint_32>(height_);
  image.format = PNG_FORMAT_RGB;
  png_alloc_size_t size = 0;
  TESSERA_CHECK(png_image_write_to_memory(&image, nullptr, &size, 0, pixels_.data(), 0, nullptr) != 0,
                "PNG encoding of {} failed: {}", path, image.message);
  std::string bytes(size, '\0');
  TESSERA_CHECK(png_image_write_to_memory(&image, bytes.data(), &size, 0, pixels_.data(), 0, nullptr) != 0,
                "PNG encoding of {} failed: {}", path, image.message);
  bytes.resize(size);
  write_file_atomic(path, bytes);
}

}  // namespace tessera::viz
