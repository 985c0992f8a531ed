#include "tessera/data/csv.h"

#include <fmt/ranges.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <fstream>
#include <limits>
#include <sstream>

namespace tessera::data {

namespace {

bool is_blank(char c) {
  return c == ' ' || c == '\t';
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && is_blank(s.front())) s.remove_prefix(1);
  while (!s.empty() && is_blank(s.back())) s.remove_suffix(1);
  return s;
}

// Splits one line into cells, unquoting "..." cells ("" inside stands for one quote).
std::vector<std::string> split_cells(std::string_view line, char delimiter, const std::string& what, int64_t line_no) {
  std::vector<std::string> cells;
  size_t i = 0;
  while (true) {
    while (i < line.size() && is_blank(line[i]) && line[i] != delimiter) ++i;
    std::string cell;
    if (i < line.size() && line[i] == '"') {
      const size_t quote_column = ++i;  // 1-based column of the opening quote
      bool closed = false;
      while (i < line.size()) {
        if (line[i] == '"') {
          if (i + 1 < line.size() && line[i + 1] == '"') {
            cell += '"';
            i += 2;
            continue;
          }
          closed = true;
          ++i;
          break;
        }
        cell += line[i++];
      }
      TESSERA_CHECK(closed, "{}:{}:{}: unterminated quoted cell", what, line_no, quote_column);
      while (i < line.size() && is_blank(line[i]) && line[i] != delimiter) ++i;
      TESSERA_CHECK(i == line.size() || line[i] == delimiter, "{}:{}:{}: unexpected text after a closing quote", what,
                    line_no, i + 1);
    } else {
      const size_t end = std::min(line.find(delimiter, i), line.size());
      cell = std::string(trim(line.substr(i, end - i)));
      i = end;
    }
    cells.push_back(std::move(cell));
    if (i >= line.size()) break;
    ++i;  // the delimiter; a trailing one yields a final empty cell
  }
  return cells;
}

bool parse_number(std::string_view s, double* out, bool* out_of_range) {
  *out_of_range = false;
  if (s.size() > 1 && s[0] == '+' && s[1] != '-' && s[1] != '+') s.remove_prefix(1);  // from_chars rejects '+'
  if (s.empty()) return false;
  const auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), *out);
  if (ec == std::errc::result_out_of_range && ptr == s.data() + s.size()) {
    *out_of_range = true;
    return false;
  }
  return ec == std::errc() && ptr == s.data() + s.size();
}

std::string column_label(const std::vector<std::string>& names, size_t c) {
  return names.empty() ? std::to_string(c + 1) : fmt::format("{} ('{}')", c + 1, names[c]);
}

}  // namespace

CsvTable parse_csv(std::string_view text, const std::string& what, CsvHeader header, char delimiter) {
  TESSERA_CHECK(delimiter != '"' && delimiter != '\n' && delimiter != '\r',
                "{}: the delimiter cannot be a quote or a line break", what);
  if (text.substr(0, 3) == "\xEF\xBB\xBF") text.remove_prefix(3);  // UTF-8 byte-order mark
  CsvTable table;
  std::vector<double> values;
  size_t columns = 0;
  bool first_row = true;
  int64_t line_no = 0;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t end = text.find('\n', pos);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = text.substr(pos, end - pos);
    pos = end + 1;
    ++line_no;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (trim(line).empty()) continue;
    std::vector<std::string> cells = split_cells(line, delimiter, what, line_no);
    if (first_row) {
      first_row = false;
      columns = cells.size();
      bool is_header = header == CsvHeader::present;
      if (header == CsvHeader::detect) {
        for (const std::string& cell : cells) {
          double v = 0;
          bool range = false;
          if (!parse_number(cell, &v, &range) && !range) is_header = true;
        }
      }
      if (is_header) {
        table.columns = std::move(cells);
        continue;
      }
    }
    TESSERA_CHECK(cells.size() == columns, "{}:{}: expected {} cells (as in the first row), got {}", what, line_no,
                  columns, cells.size());
    for (size_t c = 0; c < cells.size(); ++c) {
      double v = 0;
      bool out_of_range = false;
      if (!parse_number(cells[c], &v, &out_of_range)) {
        if (out_of_range)
          fail("{}:{}: column {}: '{}' is outside the range of f64", what, line_no, column_label(table.columns, c),
               cells[c]);
        if (cells[c].empty())
          fail("{}:{}: column {}: empty cell, expected a number", what, line_no, column_label(table.columns, c));
        fail("{}:{}: column {}: expected a number, got '{}'", what, line_no, column_label(table.columns, c), cells[c]);
      }
      values.push_back(v);
    }
    table.row_lines.push_back(line_no);
  }
  TESSERA_CHECK(columns > 0, "{}: empty CSV (no header and no rows)", what);
  if (table.columns.empty()) {
    for (size_t c = 0; c < columns; ++c) table.columns.push_back(std::to_string(c));
  }
  const int64_t rows = static_cast<int64_t>(table.row_lines.size());
  table.values = Array::from_vector(values, {rows, static_cast<int64_t>(columns)});
  return table;
}

CsvTable read_csv(const std::string& path, CsvHeader header, char delimiter) {
  std::ifstream in(path, std::ios::binary);
  TESSERA_CHECK(in.good(), "read_csv: cannot open '{}'", path);
  std::ostringstream text;
  text << in.rdbuf();
  TESSERA_CHECK(!in.bad(), "read_csv: error while reading '{}'", path);
  return parse_csv(text.str(), fmt::format("'{}'", path), header, delimiter);
}

CsvDataset csv_dataset(const CsvTable& table, const CsvOptions& options, const std::string& what) {
  const int64_t cols = table.values.shape()[1];
  const int64_t rows = table.values.shape()[0];
  TESSERA_CHECK(cols >= 2, "{}: a dataset needs a label column and at least one feature column, got {} column(s)", what,
                cols);
  TESSERA_CHECK(is_floating(options.feature_dtype), "{}: feature_dtype must be floating, got {}", what,
                dtype_name(options.feature_dtype));
  int64_t label = -1;
  if (!options.label_column.empty()) {
    for (int64_t c = 0; c < cols; ++c) {
      if (table.columns[c] != options.label_column) continue;
      TESSERA_CHECK(label < 0, "{}: the label column name '{}' appears more than once in the header", what,
                    options.label_column);
      label = c;
    }
    TESSERA_CHECK(label >= 0, "{}: no column named '{}' (columns: {})", what, options.label_column,
                  fmt::join(table.columns, ", "));
  } else {
    label = options.label_index < 0 ? options.label_index + cols : options.label_index;
    TESSERA_CHECK(label >= 0 && label < cols, "{}: label_index {} is out of range for {} columns", what,
                  options.label_index, cols);
  }
  const double* v = table.values.data<double>();
  std::vector<double> features;
  features.reserve(static_cast<size_t>(rows * (cols - 1)));
  Array targets = Array::empty(options.label_dtype, {rows});
  dispatch_dtype(options.label_dtype, [&](auto tag) {
    using T = decltype(tag);
    T* out = targets.data<T>();
    for (int64_t r = 0; r < rows; ++r) {
      const double y = v[r * cols + label];
      if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) {
        // Whole numbers within the type's range only: silently truncating 2.5 to 2 would corrupt labels.
        const double hi = std::ldexp(1.0, std::numeric_limits<T>::digits);  // max + 1, exact in f64
        const double lo = std::is_signed_v<T> ? -hi : 0.0;
        const bool ok = std::isfinite(y) && y == std::floor(y) && y >= lo && y < hi;
        TESSERA_CHECK(ok, "{}:{}: column {}: label {} is not a whole number representable as {}", what,
                      table.row_lines[r], column_label(table.columns, static_cast<size_t>(label)), y,
                      dtype_name(options.label_dtype));
      }
      out[r] = convert_element<T>(y);
    }
  });
  std::vector<std::string> names;
  for (int64_t c = 0; c < cols; ++c) {
    if (c != label) names.push_back(table.columns[c]);
  }
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t c = 0; c < cols; ++c) {
      if (c != label) features.push_back(v[r * cols + c]);
    }
  }
  Array x = Array::from_vector(features, {rows, cols - 1}).astype(options.feature_dtype);
  return CsvDataset{TensorDataset(x, targets), std::move(names), table.columns[label]};
}

CsvDataset load_csv_dataset(const std::string& path, const CsvOptions& options) {
  return csv_dataset(read_csv(path, options.header, options.delimiter), options, fmt::format("'{}'", path));
}

}  // namespace tessera::data
