#include "dataset_options.h"

#include "tessera/train/data_source.h"

namespace tessera::cli {

void add_dataset_options(CLI::App& app, std::string& dataset, std::string& data_dir, std::string& data,
                         std::string& label_column) {
  app.add_option("--dataset", dataset,
                 "Dataset: fashion-mnist, csv (a numeric table, labels 0, 1, ... in the last column) or "
                 "image-folder (DIR/<class>/<image>.png)")
      ->check(CLI::IsMember(train::dataset_names()))
      ->capture_default_str();
  app.add_option("--data-dir", data_dir, "fashion-mnist: where its files are (default: its Debian package's folder)");
  app.add_option("--data", data, "csv / image-folder: the CSV file or image folder to read");
  app.add_option("--label-column", label_column, "csv: the header name of the label column (default: the last column)");
}

}  // namespace tessera::cli
