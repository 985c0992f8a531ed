#pragma once
// The data-selection flags `tessera train` and `tessera eval` share: --dataset, --data-dir, --data and
// --label-column (train/data_source.h reads what they name).
#include <CLI/CLI.hpp>
#include <string>

namespace tessera::cli {

void add_dataset_options(CLI::App& app, std::string& dataset, std::string& data_dir, std::string& data,
                         std::string& label_column);

}  // namespace tessera::cli
