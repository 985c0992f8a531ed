// metrics.csv text and its strict reader (see metrics_csv.h).
#include "tessera/train/metrics_csv.h"

#include <fmt/format.h>

#include <charconv>
#include <cmath>

#include "tessera/core/parse_int.h"
#include "tessera/train/limits.h"

namespace tessera::train {

namespace {

// A whole field as a finite double (from_chars: no spaces, nothing left over).
bool parse_double(std::string_view field, double* out) {
  if (field.empty()) return false;
  const auto [end, ec] = std::from_chars(field.data(), field.data() + field.size(), *out);
  return ec == std::errc() && end == field.data() + field.size() && std::isfinite(*out);
}

// One row's six comma-separated fields; false when the line is not exactly that.
bool parse_row(std::string_view line, int64_t want_epoch, EpochRecord* r) {
  std::vector<std::string_view> fields;
  for (size_t start = 0;;) {
    const size_t comma = line.find(',', start);
    fields.push_back(line.substr(start, comma == std::string_view::npos ? std::string_view::npos : comma - start));
    if (comma == std::string_view::npos) break;
    start = comma + 1;
  }
  if (fields.size() != 6) return false;
  const std::optional<int64_t> epoch = parse_int_strict(fields[0], 1, kMaxEpochs);
  if (!epoch || *epoch != want_epoch) return false;
  r->epoch = *epoch;
  return parse_double(fields[1], &r->train_loss) && parse_double(fields[2], &r->test_loss) &&
         parse_double(fields[3], &r->test_accuracy) && parse_double(fields[4], &r->samples_per_s) &&
         parse_double(fields[5], &r->seconds);
}

}  // namespace

std::string metrics_csv(const std::vector<EpochRecord>& rows) {
  std::string csv = std::string(kMetricsHeader) + "\n";
  for (const EpochRecord& r : rows) {
    csv += fmt::format("{},{:.6f},{:.6f},{:.6f},{:.1f},{:.3f}\n", r.epoch, r.train_loss, r.test_loss, r.test_accuracy,
                       r.samples_per_s, r.seconds);
  }
  return csv;
}

ParsedMetrics parse_metrics_csv(std::string_view text) {
  ParsedMetrics out;
  size_t at = 0;
  bool header = true;
  while (at < text.size()) {
    const size_t newline = text.find('\n', at);
    if (newline == std::string_view::npos) {  // a last line without its newline was cut short
      out.complete = false;
      break;
    }
    const std::string_view line = text.substr(at, newline - at);
    at = newline + 1;
    if (header) {
      if (line != kMetricsHeader) {
        out.complete = false;
        break;
      }
      header = false;
      continue;
    }
    EpochRecord r;
    if (!parse_row(line, static_cast<int64_t>(out.rows.size()) + 1, &r)) {
      out.complete = false;
      break;
    }
    out.rows.push_back(r);
  }
  if (header) out.complete = false;  // not even a header
  return out;
}

}  // namespace tessera::train
