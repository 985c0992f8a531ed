#pragma once
// Where `tessera train` and `tessera eval` get their examples: Fashion-MNIST (its Debian package's
// IDX files), a numeric CSV table (the last column, or --label-column, holds class indices 0, 1, ...;
// the other columns are the features, used as they are) or an image folder (root/<class>/<image>.png,
// classes in sorted order). A CSV file or image folder without a separate test set gives every fifth
// example (the 5th, 10th, ...) to the test set, the rest to training.
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "tessera/data/dataset.h"

namespace tessera::train {

struct DataOptions {
  std::string dataset = "fashion-mnist";  // fashion-mnist | csv | image-folder
  std::string data_dir;                   // fashion-mnist's folder (empty: its Debian package's)
  std::string data;                       // csv / image-folder: the file or folder
  std::string test_data;                  // csv / image-folder: a separate test set (empty: hold out)
  std::string label_column;               // csv: the label column's header name (empty: the last column)
};

struct ClassificationData {
  std::shared_ptr<data::TensorDataset> train;  // null when only the test set was asked for
  std::shared_ptr<data::TensorDataset> test;
  std::vector<std::string> classes;            // label -> name
  Shape example_shape;                         // one input, without the batch axis
  std::string source;                          // where the examples came from, for messages
};

std::vector<std::string> dataset_names();  // fashion-mnist, csv, image-folder

// Both splits. Errors name the file, line and column (CSV) or the folder and image (image folders).
ClassificationData load_training_data(const DataOptions& options);
// Only the examples to evaluate on: Fashion-MNIST's test split, or all of the csv file / image folder
// in `data` (its classes named by `classes` when given, e.g. a checkpoint's).
ClassificationData load_evaluation_data(const DataOptions& options, const std::vector<std::string>& classes = {});

}  // namespace tessera::train
