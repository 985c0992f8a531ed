#include "tessera/viz/confusion.h"

#include <algorithm>
#include <cmath>

#include "tessera/core/error.h"
#include "tessera/viz/canvas.h"

namespace tessera::viz {

namespace {

// Long names are cut so that the picture stays a sensible size with many classes.
std::string short_name(const std::string& name, size_t most) {
  return name.size() <= most ? name : name.substr(0, most - 1) + "~";
}

// White for no examples through dark blue for all of a row's.
Rgb shade(double share) {
  const double s = std::clamp(share, 0.0, 1.0);
  auto mix = [s](int from, int to) { return static_cast<uint8_t>(std::lround(from + (to - from) * s)); };
  return {mix(255, 8), mix(255, 48), mix(255, 107)};
}

}  // namespace

void write_confusion_png(const std::string& path, const std::vector<std::vector<int64_t>>& confusion,
                         const std::vector<std::string>& classes, const std::string& title) {
  const size_t k = classes.size();
  TESSERA_CHECK(k > 0 && confusion.size() == k, "write_confusion_png: {} classes but {} rows for {}", k,
                confusion.size(), path);
  int64_t most = 0;
  for (const auto& row : confusion) {
    TESSERA_CHECK(row.size() == k, "write_confusion_png: a row of {} cells, expected {} for {}", row.size(), k, path);
    for (int64_t v : row) most = std::max(most, v);
  }
  constexpr size_t kNameChars = 14;
  const int cell = std::max(28, Canvas::text_width(std::to_string(most)) + 8);
  const int left = Canvas::text_width(std::string(kNameChars, 'x')) + 40, top = 44;
  const int grid = cell * static_cast<int>(k);
  const int width = left + grid + 20, height = top + grid + Canvas::text_width(std::string(kNameChars, 'x')) + 40;
  const Rgb ink{40, 40, 40};
  Canvas canvas(std::max(width, Canvas::text_width(title, 2) + 20), height);
  canvas.text(10, 10, title, ink, 2);
  canvas.text(left, top - 12, "predicted class", ink);
  for (size_t t = 0; t < k; ++t) {
    int64_t row_total = 0;
    for (int64_t v : confusion[t]) row_total += v;
    const int y = top + cell * static_cast<int>(t);
    const std::string name = short_name(classes[t], kNameChars);
    canvas.text(left - 8 - Canvas::text_width(name), y + cell / 2 - 3, name, ink);
    for (size_t p = 0; p < k; ++p) {
      const int x = left + cell * static_cast<int>(p);
      const double share = row_total > 0 ? static_cast<double>(confusion[t][p]) / static_cast<double>(row_total) : 0;
      canvas.fill_rect(x, y, x + cell - 2, y + cell - 2, shade(share));
      const std::string count = std::to_string(confusion[t][p]);
      const Rgb text = share > 0.5 ? Rgb{255, 255, 255} : ink;
      canvas.text(x + (cell - 2 - Canvas::text_width(count)) / 2, y + cell / 2 - 4, count, text);
    }
  }
  // Predicted-class names run down below their columns, one character per line, as the font has no rotation.
  for (size_t p = 0; p < k; ++p) {
    const std::string name = short_name(classes[p], kNameChars);
    const int x = left + cell * static_cast<int>(p) + cell / 2 - 3;
    for (size_t i = 0; i < name.size(); ++i) {
      canvas.text(x, top + grid + 6 + static_cast<int>(i) * 9, std::string(1, name[i]), ink);
    }
  }
  canvas.text(8, top + grid + 6, "true class (rows)", ink);
  canvas.write_png(path);
}

}  // namespace tessera::viz
