#pragma once
// Runs the system C compiler for the JIT: which compiler ($TESSERA_CC, else `cc`), which flags (the
// optimisation level, -mavx2 -mfma when this CPU has them), its version string, and one compile of a
// source file into a shared object with the compiler's messages captured.
#include <string>
#include <vector>

namespace tessera::backends::cpu {

struct CompilerCommand {
  std::vector<std::string> program;  // the compiler and any words of $TESSERA_CC after it
  std::vector<std::string> flags;    // everything but the input and output paths
  std::string version;               // first line of `<program> --version` ("" if it printed none)
  std::string text() const;          // program and flags joined by spaces
};

// The command for this process: $TESSERA_CC (split at spaces) or "cc"; -O$TESSERA_JIT_OPT (default 1);
// AVX2/FMA flags when __builtin_cpu_supports says so. Memoised per program/opt-level.
const CompilerCommand& compiler_command();

struct CompileResult {
  bool ok = false;
  int exit_status = -1;
  std::string messages;  // the compiler's stdout and stderr, or why it could not start
};

// Whether the compiler runs at all (it answered `--version`). Without one the CPU backend generates no
// kernels: what they would compute runs on library and reference kernels (cpu_backend.cpp says so once).
bool compiler_available();

// Compiles `source_path` into the shared object `output_path`.
CompileResult run_compiler(const CompilerCommand& command, const std::string& source_path,
                           const std::string& output_path);

}  // namespace tessera::backends::cpu
