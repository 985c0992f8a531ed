#pragma once
// Bounds on training runs, shared by `tessera train`'s options, train_classifier's checks and the
// checkpoint reader (which refuses metadata outside them instead of, say, training a million epochs).
#include <cstdint>

namespace tessera::train {

inline constexpr int64_t kMaxEpochs = 100000;
inline constexpr int64_t kMaxBatchSize = int64_t{1} << 20;
// Classes of a classifier: far beyond any dataset here, a bound so a garbage label cannot ask for terabytes.
inline constexpr int64_t kMaxClasses = 1 << 16;

}  // namespace tessera::train
