#pragma once
// Numeric CSV tables: comma (or other) separated numbers, one row per line, an optional header row
// of column names. Cells may be quoted ("1.5"); blank lines are skipped; \r\n line ends and a UTF-8
// byte-order mark are accepted. Errors name the file, line and column.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "tessera/data/dataset.h"

namespace tessera::data {

// Whether the first row names the columns: present, absent, or detect (a header iff the first row has a
// cell that is not a number).
enum class CsvHeader { detect, present, absent };

// A parsed CSV file: its column names (if any) and its rows of numbers.
struct CsvTable {
  Array values;                      // f64 [rows, columns]
  std::vector<std::string> columns;  // names from the header, else "0", "1", ...
  std::vector<int64_t> row_lines;    // 1-based source line of each row, for error messages
};

// Reads and parses the file at `path`; throws tessera::Error when it cannot be read or a cell is not a
// number (naming the file, line and column) or rows differ in length.
CsvTable read_csv(const std::string& path, CsvHeader header = CsvHeader::detect, char delimiter = ',');
// Parses CSV text; `what` names it in error messages.
CsvTable parse_csv(std::string_view text, const std::string& what, CsvHeader header = CsvHeader::detect,
                   char delimiter = ',');

// How to read a CSV file as a dataset: header, delimiter, which column is the label, dtypes.
struct CsvOptions {
  CsvHeader header = CsvHeader::detect;  // whether the first row is a header
  // The cell separator (',' by default; '\t' or ';' for other dialects).
  char delimiter = ',';
  std::string label_column;          // the label column's header name; when empty, label_index is used
  int64_t label_index = -1;          // column index of the label, negative counts from the end (-1: last)
  DType label_dtype = DType::i64;    // i64 labels must be whole numbers
  DType feature_dtype = DType::f32;  // any floating dtype
};

// A CSV file as a TensorDataset, with its column names.
struct CsvDataset {
  TensorDataset dataset;                   // features [rows, columns - 1], targets [rows]
  std::vector<std::string> feature_names;  // in column order, the label column removed
  std::string label_name;                  // the label column's name (its index when there is no header)
};

// Reads `path` (read_csv) and splits it into features and labels (csv_dataset); throws tessera::Error
// naming the file when the label column does not exist or a label is not valid for label_dtype.
CsvDataset load_csv_dataset(const std::string& path, const CsvOptions& options = {});
// The same from a parsed table (`what` names it in errors).
CsvDataset csv_dataset(const CsvTable& table, const CsvOptions& options, const std::string& what);

}  // namespace tessera::data
