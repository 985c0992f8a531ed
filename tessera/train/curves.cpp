#include "tessera/train/curves.h"

#include <fmt/format.h>

#include <charconv>
#include <cmath>

#include "tessera/core/error.h"

namespace tessera::train {

namespace {

constexpr std::string_view kHeader = "position,loss";

double parse_number(std::string_view field, const std::string& what, int64_t line) {
  double v = 0;
  const auto [end, ec] = std::from_chars(field.data(), field.data() + field.size(), v);
  TESSERA_CHECK(!field.empty() && ec == std::errc() && end == field.data() + field.size() && std::isfinite(v),
                "{}: line {}: '{}' is not a finite number", what, line, field);
  return v;
}

}  // namespace

std::string loss_curve_text(const LossCurve& curve) {
  std::string text = std::string(kHeader) + "\n";
  for (const auto& [x, y] : curve) text += fmt::format("{},{}\n", x, y);
  return text;
}

LossCurve parse_loss_curve(const std::string& text, const std::string& what) {
  LossCurve curve;
  std::string_view rest(text);
  int64_t line = 0;
  while (!rest.empty()) {
    const size_t newline = rest.find('\n');
    TESSERA_CHECK(newline != std::string_view::npos, "{}: line {}: the last line has no newline (cut short?)", what,
                  line + 1);
    const std::string_view row = rest.substr(0, newline);
    rest.remove_prefix(newline + 1);
    if (++line == 1) {
      TESSERA_CHECK(row == kHeader, "{}: line 1: expected the header '{}', got '{}'", what, kHeader, row);
      continue;
    }
    const size_t comma = row.find(',');
    TESSERA_CHECK(comma != std::string_view::npos, "{}: line {}: expected 'position,loss', got '{}'", what, line, row);
    const double x = parse_number(row.substr(0, comma), what, line), y = parse_number(row.substr(comma + 1), what, line);
    TESSERA_CHECK(curve.empty() || x > curve.back().first, "{}: line {}: position {} does not follow {}", what, line, x,
                  curve.back().first);
    curve.emplace_back(x, y);
  }
  TESSERA_CHECK(line >= 1, "{}: empty (expected the header '{}')", what, kHeader);
  return curve;
}

std::vector<viz::Chart> training_charts(const LossCurve& curve, const std::vector<EpochRecord>& epochs) {
  viz::Series batch_loss{"batch loss (smoothed)", {}, {}, {31, 119, 180}};
  for (auto [x, y] : curve) {
    batch_loss.x.push_back(x);
    batch_loss.y.push_back(y);
  }
  viz::Series train_loss{"train loss", {}, {}, {255, 127, 14}}, test_loss{"test loss", {}, {}, {44, 160, 44}};
  viz::Series accuracy{"test accuracy", {}, {}, {214, 39, 40}};
  for (const EpochRecord& r : epochs) {
    train_loss.x.push_back(static_cast<double>(r.epoch));
    train_loss.y.push_back(r.train_loss);
    test_loss.x.push_back(static_cast<double>(r.epoch));
    test_loss.y.push_back(r.test_loss);
    accuracy.x.push_back(static_cast<double>(r.epoch));
    accuracy.y.push_back(r.test_accuracy * 100.0);
  }
  // The latest value in the legend: with one epoch the accuracy panel is a single point.
  if (!epochs.empty()) accuracy.label = fmt::format("test accuracy (last {:.2f}%)", epochs.back().test_accuracy * 100);
  return {viz::Chart{"loss", "epoch", {batch_loss, train_loss, test_loss}, 0.0},
          viz::Chart{"test accuracy (%)", "epoch", {accuracy}, 0.0}};
}

void write_curves_png(const std::string& path, const LossCurve& curve, const std::vector<EpochRecord>& epochs) {
  viz::write_charts_png(path, training_charts(curve, epochs));
}

}  // namespace tessera::train
