#pragma once
// An RGB raster with the few drawing primitives charts need, and PNG output (libpng, written
// atomically so a crash never leaves a half picture).
#include <cstdint>
#include <string>
#include <vector>

namespace tessera::viz {

struct Rgb {
  uint8_t r = 0, g = 0, b = 0;
};

class Canvas {
 public:
  Canvas(int width, int height, Rgb background = {255, 255, 255});
  int width() const { return width_; }
  int height() const { return height_; }
  void set(int x, int y, Rgb c);
  Rgb get(int x, int y) const;
  void fill_rect(int x0, int y0, int x1, int y1, Rgb c);
  // A line `thickness` pixels wide (square brush), endpoints included.
  void line(double x0, double y0, double x1, double y1, Rgb c, int thickness = 1);
  // Text in the 5x7 font scaled by `scale`; returns the width drawn in pixels.
  int text(int x, int y, const std::string& s, Rgb c, int scale = 1);
  static int text_width(const std::string& s, int scale = 1) { return static_cast<int>(s.size()) * 6 * scale; }
  const std::vector<uint8_t>& pixels() const { return pixels_; }  // row-major RGB
  void write_png(const std::string& path) const;

 private:
  int width_, height_;
  std::vector<uint8_t> pixels_;
};

}  // namespace tessera::viz
