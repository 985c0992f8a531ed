#pragma once
// What the CLI says when the command line is wrong: the message of CLI11's parse error with a
// suggestion for each misspelt subcommand or flag ("did you mean 'train'?") and the --help of the
// subcommand being parsed; and validators whose messages read as numbers a person would write
// (CLI11's own PositiveNumber prints DBL_MAX in full, 309 digits).
#include <CLI/CLI.hpp>
#include <string>
#include <vector>

namespace tessera::cli {

// The closest candidate to `word` within a small edit distance, or "" when none is close.
std::string closest_match(const std::string& word, const std::vector<std::string>& candidates);

// One line for a parse error of `root`'s command line (without the "tessera: error: " prefix).
std::string usage_error_message(const CLI::App& root, const CLI::ParseError& error);

// A number > 0, and a number >= 0 (any width that converts through double).
CLI::Validator positive_number();
CLI::Validator non_negative_number();

// An output file whose folder exists and takes new files ("-" is standard output), and an output
// folder that exists or can be made and takes new files: checked while parsing, before any work.
CLI::Validator output_file();
CLI::Validator output_folder();

}  // namespace tessera::cli
