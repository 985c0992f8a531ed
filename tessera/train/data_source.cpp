#include "tessera/train/data_source.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <filesystem>

#include "tessera/data/csv.h"
#include "tessera/data/fashion_mnist.h"
#include "tessera/data/image_folder.h"
#include "tessera/train/limits.h"

namespace tessera::train {

namespace {

using Split = std::pair<std::shared_ptr<data::TensorDataset>, std::shared_ptr<data::TensorDataset>>;

std::shared_ptr<data::TensorDataset> rows_of(const data::TensorDataset& d, const std::vector<int64_t>& rows) {
  return std::make_shared<data::TensorDataset>(data::gather_rows(d.features(), rows, "hold-out split"),
                                               data::gather_rows(d.targets(), rows, "hold-out split"));
}

// Every fifth example to the test set: deterministic and spread over the file, whatever its order.
Split hold_out(const data::TensorDataset& all, const std::string& source) {
  TESSERA_CHECK(all.size() >= 5,
                "{}: {} examples are too few to hold out a test set (every fifth); give at least 5, or a test set "
                "with --test-data",
                source, all.size());
  std::vector<int64_t> train_rows, test_rows;
  for (int64_t i = 0; i < all.size(); ++i) (i % 5 == 4 ? test_rows : train_rows).push_back(i);
  return {rows_of(all, train_rows), rows_of(all, test_rows)};
}

struct CsvExamples {
  std::shared_ptr<data::TensorDataset> examples;
  int64_t classes = 0;  // the largest label + 1
};

// Labels must be class indices; `max_classes` > 0 bounds them (a checkpoint's classes).
CsvExamples load_csv(const std::string& path, const std::string& label_column, int64_t max_classes) {
  TESSERA_CHECK(std::filesystem::is_regular_file(path), "--data {}: no such CSV file", path);
  const data::CsvTable table = data::read_csv(path);
  data::CsvOptions options;
  options.label_column = label_column;
  data::CsvDataset d = data::csv_dataset(table, options, path);
  TESSERA_CHECK(d.dataset.size() > 0, "{}: no rows (a header alone); nothing to train or evaluate on", path);
  const int64_t bound = max_classes > 0 ? max_classes : kMaxClasses;
  const int64_t* y = d.dataset.targets().data<int64_t>();
  CsvExamples out;
  for (int64_t i = 0; i < d.dataset.size(); ++i) {
    TESSERA_CHECK(y[i] >= 0 && y[i] < bound, "{}:{}: column {}: label {} is not a class index (expected 0 to {}{})",
                  path, table.row_lines[static_cast<size_t>(i)], d.label_name, y[i], bound - 1,
                  max_classes > 0 ? ", the classes of the checkpoint" : "");
    out.classes = std::max(out.classes, y[i] + 1);
  }
  out.examples = std::make_shared<data::TensorDataset>(d.dataset);
  return out;
}

std::vector<std::string> numbered_classes(int64_t n) {
  std::vector<std::string> names;
  for (int64_t i = 0; i < n; ++i) names.push_back(std::to_string(i));
  return names;
}

Shape example_shape_of(const data::TensorDataset& d) {
  const Shape& s = d.features().shape();
  return Shape(s.begin() + 1, s.end());
}

data::ImageFolder load_images(const std::string& root) {
  TESSERA_CHECK(std::filesystem::is_directory(root),
                "--data {}: no such folder (expected an image folder: one sub-folder of .png images per class)", root);
  data::ImageFolder folder = data::load_image_folder(root);
  TESSERA_CHECK(folder.dataset.size() > 0, "{}: no .png images in its class sub-folders", root);
  return folder;
}

void check_same_classes(const std::vector<std::string>& want, const std::vector<std::string>& got,
                        const std::string& want_source, const std::string& got_source) {
  TESSERA_CHECK(want == got, "{} has the classes [{}], but {} has [{}]; they must be the same sub-folders", got_source,
                fmt::join(got, ", "), want_source, fmt::join(want, ", "));
}

void check_same_shape(const Shape& want, const data::TensorDataset& got, const std::string& want_source,
                      const std::string& got_source) {
  TESSERA_CHECK(example_shape_of(got) == want, "{} holds examples of shape {}, but {} holds {}", got_source,
                shape_str(example_shape_of(got)), want_source, shape_str(want));
}

void check_dataset_name(const DataOptions& o) {
  const std::vector<std::string> names = dataset_names();
  TESSERA_CHECK(std::find(names.begin(), names.end(), o.dataset) != names.end(),
                "unknown dataset '{}' (expected {})", o.dataset, fmt::join(names, ", "));
  if (o.dataset == "fashion-mnist") {
    TESSERA_CHECK(o.data.empty() && o.test_data.empty(),
                  "--data and --test-data name a csv file or an image folder; with --dataset fashion-mnist use "
                  "--data-dir");
  } else {
    TESSERA_CHECK(!o.data.empty(), "--dataset {} needs --data PATH (the {} to read)", o.dataset,
                  o.dataset == "csv" ? "CSV file" : "image folder");
  }
}

}  // namespace

std::vector<std::string> dataset_names() { return {"fashion-mnist", "csv", "image-folder"}; }

ClassificationData load_training_data(const DataOptions& o) {
  check_dataset_name(o);
  ClassificationData out;
  if (o.dataset == "fashion-mnist") {
    const std::string dir = o.data_dir.empty() ? data::kFashionMnistDir : o.data_dir;
    out.train = std::make_shared<data::TensorDataset>(data::load_fashion_mnist("train", dir));
    out.test = std::make_shared<data::TensorDataset>(data::load_fashion_mnist("test", dir));
    out.classes.assign(data::kFashionMnistClasses.begin(), data::kFashionMnistClasses.end());
    out.source = dir;
  } else if (o.dataset == "csv") {
    CsvExamples train = load_csv(o.data, o.label_column, 0);
    int64_t classes = train.classes;
    if (o.test_data.empty()) {
      std::tie(out.train, out.test) = hold_out(*train.examples, o.data);
    } else {
      CsvExamples test = load_csv(o.test_data, o.label_column, 0);
      check_same_shape(example_shape_of(*train.examples), *test.examples, o.data, o.test_data);
      classes = std::max(classes, test.classes);
      out.train = train.examples;
      out.test = test.examples;
    }
    TESSERA_CHECK(classes >= 2, "{}: every label is 0; a classifier needs at least 2 classes (labels 0, 1, ...)",
                  o.data);
    out.classes = numbered_classes(classes);
    out.source = o.data;
  } else {
    data::ImageFolder train = load_images(o.data);
    TESSERA_CHECK(train.classes.size() >= 2, "{}: one class sub-folder ('{}'); a classifier needs at least 2", o.data,
                  train.classes.front());
    out.classes = train.classes;
    if (o.test_data.empty()) {
      std::tie(out.train, out.test) = hold_out(train.dataset, o.data);
    } else {
      data::ImageFolder test = load_images(o.test_data);
      check_same_classes(train.classes, test.classes, o.data, o.test_data);
      check_same_shape(example_shape_of(train.dataset), test.dataset, o.data, o.test_data);
      out.train = std::make_shared<data::TensorDataset>(train.dataset);
      out.test = std::make_shared<data::TensorDataset>(test.dataset);
    }
    out.source = o.data;
  }
  out.example_shape = example_shape_of(*out.train);
  return out;
}

ClassificationData load_evaluation_data(const DataOptions& o, const std::vector<std::string>& classes) {
  check_dataset_name(o);
  TESSERA_CHECK(o.test_data.empty(), "--test-data is for training; evaluate on a file or folder with --data");
  ClassificationData out;
  if (o.dataset == "fashion-mnist") {
    const std::string dir = o.data_dir.empty() ? data::kFashionMnistDir : o.data_dir;
    out.test = std::make_shared<data::TensorDataset>(data::load_fashion_mnist("test", dir));
    out.classes.assign(data::kFashionMnistClasses.begin(), data::kFashionMnistClasses.end());
    out.source = dir;
  } else if (o.dataset == "csv") {
    CsvExamples all = load_csv(o.data, o.label_column, static_cast<int64_t>(classes.size()));
    out.test = all.examples;
    out.classes = classes.empty() ? numbered_classes(std::max<int64_t>(2, all.classes)) : classes;
    out.source = o.data;
  } else {
    data::ImageFolder folder = load_images(o.data);
    if (!classes.empty()) check_same_classes(classes, folder.classes, "the checkpoint", o.data);
    out.test = std::make_shared<data::TensorDataset>(folder.dataset);
    out.classes = folder.classes;
    out.source = o.data;
  }
  out.example_shape = example_shape_of(*out.test);
  return out;
}

}  // namespace tessera::train
