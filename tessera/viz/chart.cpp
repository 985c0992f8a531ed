#include "tessera/viz/chart.h"

#include <algorithm>
#include <cmath>

#include "tessera/core/error.h"

namespace tessera::viz {

std::vector<double> nice_ticks(double lo, double hi, int max_ticks) {
  if (!(hi > lo)) {
    const double pad = lo == 0 ? 1.0 : std::abs(lo) * 0.1;
    lo -= pad;
    hi += pad;
  }
  const double raw = (hi - lo) / std::max(1, max_ticks - 1);
  const double mag = std::pow(10.0, std::floor(std::log10(raw)));
  double step = mag;
  for (double m : {1.0, 2.0, 5.0, 10.0}) {
    if (m * mag >= raw) {
      step = m * mag;
      break;
    }
  }
  std::vector<double> ticks;
  for (double t = std::floor(lo / step) * step; t <= hi + step * 0.5; t += step) ticks.push_back(t);
  return ticks;
}

std::string tick_label(double v, double step) {
  if (std::abs(v) < step * 1e-9) return "0";
  const double a = std::abs(v);
  if (a >= 1e5 || a < 1e-3) return fmt::format("{:.0e}", v);
  const int decimals = std::max(0, static_cast<int>(std::ceil(-std::log10(step) - 1e-9)));
  return fmt::format("{:.{}f}", v, decimals);
}

void render_chart(Canvas& canvas, const Chart& chart, int x0, int y0, int width, int height) {
  const Rgb ink{40, 40, 40}, grid{225, 225, 225};
  const int left = x0 + 64, right = x0 + width - 16, top = y0 + 34, bottom = y0 + height - 44;
  canvas.text(x0 + (width - Canvas::text_width(chart.title, 2)) / 2, y0 + 8, chart.title, ink, 2);

  double xmin = INFINITY, xmax = -INFINITY, ymin = INFINITY, ymax = -INFINITY;
  for (const Series& s : chart.series) {
    for (size_t i = 0; i < s.x.size() && i < s.y.size(); ++i) {
      if (!std::isfinite(s.x[i]) || !std::isfinite(s.y[i])) continue;
      xmin = std::min(xmin, s.x[i]);
      xmax = std::max(xmax, s.x[i]);
      ymin = std::min(ymin, s.y[i]);
      ymax = std::max(ymax, s.y[i]);
    }
  }
  if (!std::isfinite(xmin)) {
    xmin = 0, xmax = 1, ymin = 0, ymax = 1;
  }
  if (std::isfinite(chart.x_from)) xmin = std::min(xmin, chart.x_from);
  const std::vector<double> xt = nice_ticks(xmin, xmax), yt = nice_ticks(ymin, ymax);
  xmin = std::min(xmin, xt.front()), xmax = std::max(xmax, xt.back());
  ymin = std::min(ymin, yt.front()), ymax = std::max(ymax, yt.back());
  auto px = [&](double x) { return left + (x - xmin) / (xmax - xmin) * (right - left); };
  auto py = [&](double y) { return bottom - (y - ymin) / (ymax - ymin) * (bottom - top); };

  const double xstep = xt.size() > 1 ? xt[1] - xt[0] : 1, ystep = yt.size() > 1 ? yt[1] - yt[0] : 1;
  for (double t : yt) {
    canvas.line(left, py(t), right, py(t), grid);
    const std::string s = tick_label(t, ystep);
    canvas.text(left - 6 - Canvas::text_width(s), static_cast<int>(py(t)) - 3, s, ink);
  }
  for (double t : xt) {
    canvas.line(px(t), top, px(t), bottom, grid);
    const std::string s = tick_label(t, xstep);
    canvas.text(static_cast<int>(px(t)) - Canvas::text_width(s) / 2, bottom + 6, s, ink);
  }
  canvas.line(left, bottom, right, bottom, ink);
  canvas.line(left, top, left, bottom, ink);
  canvas.text(x0 + (width - Canvas::text_width(chart.x_label)) / 2, bottom + 20, chart.x_label, ink);

  int legend_y = top + 4;
  for (const Series& s : chart.series) {
    for (size_t i = 1; i < s.x.size() && i < s.y.size(); ++i) {
      canvas.line(px(s.x[i - 1]), py(s.y[i - 1]), px(s.x[i]), py(s.y[i]), s.color, 2);
    }
    for (size_t i = 0; i < s.x.size() && i < s.y.size() && s.x.size() <= 60; ++i) {
      canvas.fill_rect(static_cast<int>(px(s.x[i])) - 2, static_cast<int>(py(s.y[i])) - 2,
                       static_cast<int>(px(s.x[i])) + 2, static_cast<int>(py(s.y[i])) + 2, s.color);
    }
    if (!s.label.empty()) {
      const int lx = right - Canvas::text_width(s.label) - 24;
      canvas.fill_rect(lx, legend_y + 2, lx + 14, legend_y + 4, s.color);
      canvas.text(lx + 18, legend_y, s.label, ink);
      legend_y += 12;
    }
  }
}

void write_charts_png(const std::string& path, const std::vector<Chart>& charts, int panel_width, int panel_height) {
  TESSERA_CHECK(!charts.empty(), "write_charts_png: no charts to draw for {}", path);
  Canvas canvas(panel_width * static_cast<int>(charts.size()), panel_height);
  for (size_t i = 0; i < charts.size(); ++i) {
    render_chart(canvas, charts[i], static_cast<int>(i) * panel_width, 0, panel_width, panel_height);
  }
  canvas.write_png(path);
}

}  // namespace tessera::viz
