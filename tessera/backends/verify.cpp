#include "tessera/backends/verify.h"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>

#include "tessera/backends/backend.h"

namespace tessera::backends {
namespace {

std::atomic<bool>& verify_flag() {
  static std::atomic<bool> flag{[] {
    const char* env = std::getenv("TESSERA_VERIFY");
    return env != nullptr && *env != '\0' && std::strcmp(env, "0") != 0;
  }()};
  return flag;
}

std::mutex& report_mutex() {
  static std::mutex m;
  return m;
}

VerifyReport& last_report() {
  static VerifyReport r;
  return r;
}

}  // namespace

double VerifyReport::max_abs_error() const {
  double m = 0;
  for (const OutputCheck& o : outputs) m = std::max(m, o.max_abs_error);
  return m;
}

double VerifyReport::max_rel_error() const {
  double m = 0;
  for (const OutputCheck& o : outputs) m = std::max(m, o.max_rel_error);
  return m;
}

int64_t VerifyReport::nonfinite_mismatches() const {
  int64_t n = 0;
  for (const OutputCheck& o : outputs) n += o.nonfinite_mismatches;
  return n;
}

void set_verify(bool on) {
  verify_flag().store(on);
}
bool verify_enabled() {
  return verify_flag().load(std::memory_order_relaxed);
}

VerifyReport last_verify_report() {
  std::lock_guard<std::mutex> lock(report_mutex());
  return last_report();
}

OutputCheck compare_outputs(const Array& expected, const Array& actual) {
  OutputCheck c;
  c.type = fmt::format("{}{}", dtype_name(expected.dtype()), shape_str(expected.shape()));
  TESSERA_CHECK(expected.shape() == actual.shape(), "verify: output {} came back with shape {}", c.type,
                shape_str(actual.shape()));
  const std::vector<double> e = expected.to_f64();
  const std::vector<double> a = actual.to_f64();
  double scale = 0;
  for (double x : e) {
    if (std::isfinite(x)) scale = std::max(scale, std::abs(x));
  }
  const double floor = scale > 0 ? 1e-6 * scale : 1.0;
  for (size_t i = 0; i < e.size(); ++i) {
    if (!std::isfinite(e[i]) || !std::isfinite(a[i])) {
      const bool same = (std::isnan(e[i]) && std::isnan(a[i])) || e[i] == a[i];
      if (!same) ++c.nonfinite_mismatches;
      continue;
    }
    const double err = std::abs(a[i] - e[i]);
    c.max_abs_error = std::max(c.max_abs_error, err);
    c.max_rel_error = std::max(c.max_rel_error, err / std::max(std::abs(e[i]), floor));
  }
  return c;
}

std::vector<Array> reference_outputs(const ir::Graph& graph, const std::vector<Array>& inputs) {
  std::vector<Array> outs = reference_backend().compile(graph)->run(inputs);
  for (Array& o : outs) o = o.copy();
  return outs;
}

VerifyReport record_verification(const std::string& backend, const ir::Graph& graph, const std::vector<Array>& expected,
                                 const std::vector<Array>& actual) {
  VerifyReport r;
  r.backend = backend;
  r.graph = graph.name();
  TESSERA_CHECK(expected.size() == actual.size(), "verify: {} reference outputs but {} results", expected.size(),
                actual.size());
  for (size_t i = 0; i < expected.size(); ++i) {
    r.outputs.push_back(compare_outputs(expected[i], actual[i]));
    const OutputCheck& c = r.outputs.back();
    std::fprintf(
        stderr, "tessera verify [%s] graph '%s' output %zu %s: max abs error %.3g, max rel error %.3g%s\n",
        backend.c_str(), r.graph.c_str(), i, c.type.c_str(), c.max_abs_error, c.max_rel_error,
        c.nonfinite_mismatches > 0 ? fmt::format(", {} nan/inf mismatches", c.nonfinite_mismatches).c_str() : "");
  }
  std::lock_guard<std::mutex> lock(report_mutex());
  static uint64_t sequence = 0;
  r.sequence = ++sequence;
  last_report() = r;
  return r;
}

}  // namespace tessera::backends
