#pragma once
// Line charts (training curves) rendered to PNG: one panel per Chart, side by side.
#include <cmath>
#include <string>
#include <vector>

#include "tessera/viz/canvas.h"

namespace tessera::viz {

struct Series {
  std::string label;
  std::vector<double> x, y;
  Rgb color{31, 119, 180};
};

struct Chart {
  std::string title;
  std::string x_label;
  std::vector<Series> series;
  double x_from = NAN;  // the x axis starts here or lower (NAN: where the data starts), e.g. epoch 0
};

// "Nice" tick positions covering [lo, hi] (steps of 1, 2 or 5 times a power of ten).
std::vector<double> nice_ticks(double lo, double hi, int max_ticks = 6);
// Short tick text: "0.25", "1200", "1e-05".
std::string tick_label(double v, double step);

void render_chart(Canvas& canvas, const Chart& chart, int x0, int y0, int width, int height);
void write_charts_png(const std::string& path, const std::vector<Chart>& charts, int panel_width = 520,
                      int panel_height = 380);

}  // namespace tessera::viz
