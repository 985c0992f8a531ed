#pragma once
// Progress reporting for long loops: a redrawn bar with rate and ETA on a terminal, plain periodic
// lines otherwise (logs, CI).
#include <chrono>
#include <cstdio>
#include <string>

namespace tessera::train {

class Progress {
 public:
  // total: units of work (e.g. samples); label prefixes every line.
  Progress(std::string label, int64_t total, std::FILE* out = stderr);
  // Advances by `n` units; `status` is appended (e.g. "loss 0.431").
  void update(int64_t n, const std::string& status = "");
  void finish(const std::string& status = "");
  double elapsed_s() const;
  double rate() const;  // units per second so far
  static bool is_terminal(std::FILE* f);

 private:
  void draw(const std::string& status, bool final_line);
  std::string label_;
  int64_t total_, done_ = 0;
  std::FILE* out_;
  bool tty_;
  std::chrono::steady_clock::time_point start_, last_draw_;
};

std::string format_duration(double seconds);  // "1:02:03", "4:05"

}  // namespace tessera::train
