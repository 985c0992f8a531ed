#pragma once
// The tessera command-line program is a set of subcommands. Each lives in its own cmd_<name>.cpp and
// exposes one add_<name>_command function that registers its options on the root app and returns the
// action to run when that subcommand was chosen; main.cpp lists them. Adding a subcommand (train,
// generate, quantize, ...) means adding one file and one line in main.cpp.
#include <CLI/CLI.hpp>
#include <cstdlib>
#include <functional>
#include <string>

namespace tessera::cli {

// Process exit codes: 0 success, 1 the command failed on its input (unreadable file, malformed IR,
// failed verification), 2 the command line itself was wrong.
inline constexpr int kExitOk = 0;
inline constexpr int kExitFailure = 1;
inline constexpr int kExitUsage = 2;

struct Command {
  CLI::App* app = nullptr;   // the subcommand, owned by the root app
  std::function<int()> run;  // runs after a successful parse; returns the exit code
};

Command add_inspect_command(CLI::App& root);
Command add_ops_command(CLI::App& root);
Command add_train_command(CLI::App& root);
Command add_eval_command(CLI::App& root);
Command add_quantize_command(CLI::App& root);
Command add_bench_command(CLI::App& root);
Command add_export_command(CLI::App& root);
Command add_check_command(CLI::App& root);
Command add_devices_command(CLI::App& root);
Command add_tokenize_command(CLI::App& root);
Command add_generate_command(CLI::App& root);
Command add_init_model_command(CLI::App& root);
Command add_convert_command(CLI::App& root);
Command add_run_command(CLI::App& root);
Command add_bench_llm_command(CLI::App& bench);  // `bench llm`, a subcommand of bench

// --threads N: the size of the host thread pool (TESSERA_NUM_THREADS), set once the command line is
// parsed and before anything computes.
inline void add_threads_option(CLI::App& app, int& threads) {
  app.add_option("-t,--threads", threads, "Host threads (default: $TESSERA_NUM_THREADS, else every core)")
      ->check(CLI::Range(1, 256))
      ->each([](const std::string& v) { setenv("TESSERA_NUM_THREADS", v.c_str(), 1); });
}

}  // namespace tessera::cli
