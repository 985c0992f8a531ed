#pragma once
// Training curves: the batch-loss history (kept across --resume in the checkpoint's metadata entry
// "loss_curve", CSV text "position,loss" with position in epochs) and curves.png drawn from it and the
// per-epoch records.
#include <string>
#include <utility>
#include <vector>

#include "tessera/train/metrics_csv.h"
#include "tessera/viz/chart.h"

namespace tessera::train {

using LossCurve = std::vector<std::pair<double, double>>;  // (position in epochs, smoothed batch loss)

// Lossless text (shortest round-trip decimals), so a resumed run's curve equals an unbroken run's.
std::string loss_curve_text(const LossCurve& curve);
// Strict: a header "position,loss", then finite pairs with increasing positions; errors name `what`
// and the line.
LossCurve parse_loss_curve(const std::string& text, const std::string& what);

// The panels of curves.png: loss (the batch-loss history, train and test loss per epoch) and test
// accuracy, both over epochs from 0, so that a single epoch shows its whole batch-loss history.
std::vector<viz::Chart> training_charts(const LossCurve& curve, const std::vector<EpochRecord>& epochs);
void write_curves_png(const std::string& path, const LossCurve& curve, const std::vector<EpochRecord>& epochs);

}  // namespace tessera::train
