#pragma once
// TESSERA_PROFILE_COMPILE=1: where a backend's compile spends its time, as one line on stderr per
// compile ("cuda compile 13.2 ms: lower 9.1 (cubin load 5.0 x9, gemm plan 2.2 x8), ...").
// A backend's compile opens a CompileProfile; code anywhere below it (lowering, kernel loads, library
// plans) times its part with a CompilePhase, which adds to the thread's open profile (none: no cost).
#include <chrono>
#include <string>
#include <vector>

namespace tessera::backends::common {

class CompileProfile {
 public:
  static bool enabled();  // TESSERA_PROFILE_COMPILE=1
  // Becomes the thread's open profile when enabled (the previous one is restored at destruction).
  explicit CompileProfile(std::string what);
  ~CompileProfile();  // prints the line
  CompileProfile(const CompileProfile&) = delete;
  CompileProfile& operator=(const CompileProfile&) = delete;

  void add(const char* phase, double ms);
  std::string line() const;

 private:
  struct Phase {
    const char* name;
    double ms = 0;
    int count = 0;
  };
  std::string what_;
  std::chrono::steady_clock::time_point start_;
  std::vector<Phase> phases_;  // in first-seen order
  CompileProfile* previous_ = nullptr;
  bool active_ = false;
};

// Times its own lifetime into the thread's open CompileProfile under `phase` (a string literal).
class CompilePhase {
 public:
  explicit CompilePhase(const char* phase);
  ~CompilePhase();
  CompilePhase(const CompilePhase&) = delete;
  CompilePhase& operator=(const CompilePhase&) = delete;

 private:
  const char* phase_;
  CompileProfile* profile_;
  std::chrono::steady_clock::time_point start_;
};

}  // namespace tessera::backends::common
