// tessera: the command-line front end. Parses the command line with CLI11, runs the chosen
// subcommand and turns every failure into one line on stderr and a non-zero exit code.
#include <exception>
#include <filesystem>
#include <iostream>
#include <string>
#include <vector>

#include "command.h"
#include "usage_errors.h"
#include "tessera/core/error.h"

namespace {

// Messages may span lines (nested errors); the CLI reports each failure on one line.
std::string one_line(std::string text) {
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.pop_back();
  std::string out;
  for (char c : text) {
    if (c == '\n') {
      out += "; ";
    } else {
      out += c;
    }
  }
  return out;
}

int run(int argc, char** argv) {
  using namespace tessera::cli;
  CLI::App app("Tessera: a deep-learning framework with an explicit graph IR.", "tessera");
  app.set_version_flag("--version", std::string("tessera ") + TESSERA_VERSION, "Print the version and exit");
  app.require_subcommand(0, 1);
  app.footer("Run 'tessera COMMAND --help' for the options of one command.");

  // A nested subcommand comes before its parent: the first parsed command in this list runs.
  Command bench = add_bench_command(app);
  const std::vector<Command> commands{
      add_bench_llm_command(*bench.app),
      add_inspect_command(app),
      add_ops_command(app),
      add_train_command(app),
      add_eval_command(app),
      add_quantize_command(app),
      bench,
      add_export_command(app),
      add_check_command(app),
      add_devices_command(app),
      add_tokenize_command(app),
      add_generate_command(app),
      add_init_model_command(app),
      add_convert_command(app),
      add_run_command(app),
  };

  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::cerr << "tessera: error: " << one_line(usage_error_message(app, e)) << "\n";
    return kExitUsage;
  }

  for (const Command& command : commands) {
    if (command.app->parsed()) return command.run();
  }
  std::cerr << app.help();
  return kExitUsage;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return run(argc, argv);
  } catch (const tessera::Error& e) {
    std::cerr << "tessera: error: " << one_line(e.what()) << "\n";
  } catch (const std::filesystem::filesystem_error& e) {
    // The file system refused something (a full disk, a permission): the machine's state, not a bug.
    std::cerr << "tessera: error: " << one_line(e.what()) << "\n";
  } catch (const std::exception& e) {
    std::cerr << "tessera: internal error: " << one_line(e.what()) << "\n";
  } catch (...) {
    std::cerr << "tessera: internal error: unknown exception\n";
  }
  return tessera::cli::kExitFailure;
}
