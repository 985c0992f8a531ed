#include "tessera/io/value_summary.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <vector>

namespace tessera::io {

std::string describe_values(const Array& values) {
  const std::vector<double> v = values.to_f64();
  if (v.empty()) return "  values  (none)\n";
  double sum = 0, sq = 0, lo = 0, hi = 0;
  int64_t finite = 0;
  for (double x : v) {
    if (!std::isfinite(x)) continue;
    lo = finite == 0 ? x : std::min(lo, x);
    hi = finite == 0 ? x : std::max(hi, x);
    sum += x;
    sq += x * x;
    ++finite;
  }
  const double count = static_cast<double>(std::max<int64_t>(1, finite));
  std::string out = fmt::format("  values  min {:.6g}, max {:.6g}, mean {:.6g}, rms {:.6g}", lo, hi, sum / count,
                                std::sqrt(sq / count));
  const int64_t non_finite = static_cast<int64_t>(v.size()) - finite;
  if (non_finite > 0) out += fmt::format(", {} non-finite", non_finite);
  out += "\n  first  ";
  for (size_t i = 0; i < std::min<size_t>(v.size(), 8); ++i) out += fmt::format(" {:.6g}", v[i]);
  return out + "\n";
}

}  // namespace tessera::io
