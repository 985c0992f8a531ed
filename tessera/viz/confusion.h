#pragma once
// A confusion matrix as a PNG: one cell per (true class, predicted class), shaded by the share of the
// true class's examples it holds, with the count written in it and the class names along both axes.
#include <cstdint>
#include <string>
#include <vector>

namespace tessera::viz {

// confusion[t][p]: examples of class t predicted as p; classes names them (same size). Written atomically.
void write_confusion_png(const std::string& path, const std::vector<std::vector<int64_t>>& confusion,
                         const std::vector<std::string>& classes, const std::string& title);

}  // namespace tessera::viz
