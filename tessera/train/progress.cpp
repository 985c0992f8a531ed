#include "tessera/train/progress.h"

#include <unistd.h>

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

namespace tessera::train {

std::string format_duration(double seconds) {
  if (!std::isfinite(seconds) || seconds < 0) return "?";
  const auto s = static_cast<int64_t>(seconds + 0.5);
  if (s >= 3600) return fmt::format("{}:{:02}:{:02}", s / 3600, (s / 60) % 60, s % 60);
  return fmt::format("{}:{:02}", s / 60, s % 60);
}

bool Progress::is_terminal(std::FILE* f) { return f && isatty(fileno(f)); }

Progress::Progress(std::string label, int64_t total, std::FILE* out)
    : label_(std::move(label)), total_(std::max<int64_t>(total, 1)), out_(out), tty_(is_terminal(out)),
      start_(std::chrono::steady_clock::now()), last_draw_(start_) {}

double Progress::elapsed_s() const {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
}

double Progress::rate() const {
  const double t = elapsed_s();
  return t > 0 ? static_cast<double>(done_) / t : 0.0;
}

void Progress::update(int64_t n, const std::string& status) {
  done_ = std::min(total_, done_ + n);
  const auto now = std::chrono::steady_clock::now();
  // Redraw a terminal bar 10 times a second; print a plain line every 10 s elsewhere.
  const double since = std::chrono::duration<double>(now - last_draw_).count();
  if ((tty_ && since >= 0.1) || (!tty_ && since >= 10.0)) {
    last_draw_ = now;
    draw(status, false);
  }
}

void Progress::finish(const std::string& status) {
  done_ = total_;
  draw(status, true);
}

void Progress::draw(const std::string& status, bool final_line) {
  if (!out_) return;
  const double r = rate();
  const double eta = r > 0 ? static_cast<double>(total_ - done_) / r : NAN;
  const double frac = static_cast<double>(done_) / static_cast<double>(total_);
  const std::string info = fmt::format("{:>3.0f}% {}/{} {:.0f}/s {} eta {}{}{}", frac * 100, done_, total_, r,
                                       format_duration(elapsed_s()), format_duration(eta),
                                       status.empty() ? "" : "  ", status);
  if (tty_) {
    constexpr int kWidth = 28;
    const int filled = static_cast<int>(frac * kWidth);
    std::string bar(static_cast<size_t>(filled), '#');
    bar.resize(kWidth, '.');
    fmt::print(out_, "\r\033[K{} [{}] {}{}", label_, bar, info, final_line ? "\n" : "");
  } else {
    fmt::print(out_, "{} {}\n", label_, info);
  }
  std::fflush(out_);
}

}  // namespace tessera::train
