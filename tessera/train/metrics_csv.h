#pragma once
// metrics.csv, the per-epoch record `tessera train` writes beside its checkpoint: the text, and a strict
// reader that tells complete rows from a torn last line (a run killed while the file was being written,
// on a file system without atomic renames, or an editor's stray bytes).
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace tessera::train {

struct EpochRecord {
  int64_t epoch = 0;  // 1-based
  double train_loss = 0;
  double test_loss = 0;
  double test_accuracy = 0;
  double samples_per_s = 0;  // training throughput of this epoch
  double seconds = 0;
};

inline constexpr std::string_view kMetricsHeader = "epoch,train_loss,test_loss,test_accuracy,samples_per_s,seconds";

// The header line and one line per row, each ending in '\n'.
std::string metrics_csv(const std::vector<EpochRecord>& rows);

struct ParsedMetrics {
  std::vector<EpochRecord> rows;  // the complete rows, epochs 1, 2, ... in order
  bool complete = true;           // false: something after them was dropped (torn or malformed)
};
// Reads the header and then rows while each is a whole line (ending in '\n') of six fields that parse
// completely, numbered 1, 2, ...; reading stops at the first line that is not, which is dropped.
ParsedMetrics parse_metrics_csv(std::string_view text);

}  // namespace tessera::train
