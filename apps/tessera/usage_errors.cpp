#include "usage_errors.h"

#include <algorithm>
#include <cstdlib>
#include <fmt/format.h>

#include <filesystem>

#include "file_io.h"
#include "tessera/core/error.h"

namespace tessera::cli {

namespace {

size_t edit_distance(const std::string& a, const std::string& b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diagonal = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      const size_t above = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = above;
    }
  }
  return row[b.size()];
}

// The innermost subcommand that was being parsed (root when none was reached).
const CLI::App& innermost(const CLI::App& app) {
  for (const CLI::App* sub : app.get_subcommands([](const CLI::App*) { return true; })) {
    if (sub->parsed()) return innermost(*sub);
  }
  return app;
}

std::string command_path(const CLI::App& app) {
  std::string path = app.get_name();
  for (const CLI::App* p = app.get_parent(); p != nullptr; p = p->get_parent()) path = p->get_name() + " " + path;
  return path;
}

std::vector<std::string> flag_names(const CLI::App& app) {
  std::vector<std::string> names;
  for (const CLI::App* a = &app; a != nullptr; a = a->get_parent()) {
    for (const CLI::Option* o : a->get_options()) {
      for (const std::string& n : o->get_lnames()) names.push_back("--" + n);
    }
  }
  return names;
}

std::vector<std::string> subcommand_names(const CLI::App& app) {
  std::vector<std::string> names;
  for (const CLI::App* sub : app.get_subcommands([](const CLI::App*) { return true; })) names.push_back(sub->get_name());
  return names;
}

CLI::Validator number_at_least(double floor, bool strict, const char* what) {
  return CLI::Validator(
      [floor, strict, what](std::string& value) -> std::string {
        char* end = nullptr;
        const double v = std::strtod(value.c_str(), &end);
        const bool parsed = end != value.c_str() && *end == '\0';
        if (parsed && (strict ? v > floor : v >= floor)) return "";
        return fmt::format("{} must be {}", value, what);
      },
      strict ? "> 0" : ">= 0");
}

}  // namespace

std::string closest_match(const std::string& word, const std::vector<std::string>& candidates) {
  std::string best;
  size_t best_distance = std::max<size_t>(2, word.size() / 3) + 1;
  for (const std::string& c : candidates) {
    const size_t d = edit_distance(word, c);
    if (d < best_distance) {
      best_distance = d;
      best = c;
    }
  }
  return best;
}

std::string usage_error_message(const CLI::App& root, const CLI::ParseError& error) {
  const CLI::App& app = innermost(root);
  std::string message = error.what();
  // Each word CLI11 could not place: a flag close to one of this command's, or a subcommand's name.
  std::vector<std::string> hints;
  for (const std::string& word : app.remaining()) {
    const bool flag = word.rfind("--", 0) == 0;
    const std::string name = flag ? word.substr(0, word.find('=')) : word;
    const std::string match = closest_match(name, flag ? flag_names(app) : subcommand_names(app));
    if (!match.empty()) hints.push_back(fmt::format("'{}': did you mean '{}'?", name, match));
  }
  for (const std::string& h : hints) message += "; " + h;
  return fmt::format("{} (see '{} --help')", message, command_path(app));
}

CLI::Validator positive_number() { return number_at_least(0.0, true, "a positive number"); }

CLI::Validator non_negative_number() { return number_at_least(0.0, false, "zero or a positive number"); }

CLI::Validator output_file() {
  return CLI::Validator(
      [](std::string& path) -> std::string {
        if (path == "-") return "";
        try {
          check_writable_folder(std::filesystem::path(path).parent_path().string(), false);
        } catch (const Error& e) {
          return e.what();
        }
        if (std::filesystem::is_directory(path)) return fmt::format("'{}' is a folder, not a file", path);
        return "";
      },
      "FILE");
}

CLI::Validator output_folder() {
  return CLI::Validator(
      [](std::string& path) -> std::string {
        try {
          check_writable_folder(path, true);
        } catch (const Error& e) {
          return e.what();
        }
        return "";
      },
      "DIR");
}

}  // namespace tessera::cli
