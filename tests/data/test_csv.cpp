#include "io/io_test_util.h"
#include "tessera/data/csv.h"
#include "test_util.h"

using namespace tessera;
using namespace tessera::test;
using data::CsvHeader;

TEST(Csv, ParsesNumbersAndDetectsHeader) {
  const data::CsvTable t = data::parse_csv("a,b,c\n1,2.5,-3\n\n 4 , +5e1 ,\"6\"\r\n", "t.csv");
  EXPECT_EQ(t.columns, (std::vector<std::string>{"a", "b", "c"}));
  EXPECT_EQ(shape_str(t.values.shape()), "[2, 3]");
  EXPECT_EQ(t.values.dtype(), DType::f64);
  EXPECT_EQ(t.values.to_f64(), (std::vector<double>{1, 2.5, -3, 4, 50, 6}));
  EXPECT_EQ(t.row_lines, (std::vector<int64_t>{2, 4}));

  const data::CsvTable no_header = data::parse_csv("1;2\n3;4", "t.csv", CsvHeader::detect, ';');
  EXPECT_EQ(no_header.columns, (std::vector<std::string>{"0", "1"}));
  EXPECT_EQ(no_header.values.to_f64(), (std::vector<double>{1, 2, 3, 4}));
  // A numeric first row can still be declared a header.
  const data::CsvTable forced = data::parse_csv("1,2\n3,4\n", "t.csv", CsvHeader::present);
  EXPECT_EQ(forced.columns, (std::vector<std::string>{"1", "2"}));
  EXPECT_EQ(forced.values.to_f64(), (std::vector<double>{3, 4}));
  // Header only: zero rows.
  EXPECT_EQ(shape_str(data::parse_csv("x,y\n", "t.csv").values.shape()), "[0, 2]");
}

TEST(Csv, SpecialValuesQuotesAndBom) {
  const data::CsvTable t = data::parse_csv("\xEF\xBB\xBF\"x, y\",\"q\"\"\"\nnan,inf\n-inf,1e-3\n", "t.csv");
  EXPECT_EQ(t.columns, (std::vector<std::string>{"x, y", "q\""}));
  const std::vector<double> v = t.values.to_f64();
  EXPECT_TRUE(std::isnan(v[0]));
  EXPECT_EQ(v[1], INFINITY);
  EXPECT_EQ(v[2], -INFINITY);
  EXPECT_EQ(v[3], 1e-3);
}

TEST(Csv, ErrorsNameLineAndColumn) {
  EXPECT_TESSERA_ERROR(data::parse_csv("a,b\n1,2\n3,x7\n", "t.csv"), "t.csv:3: column 2 ('b')",
                       "expected a number, got 'x7'");
  EXPECT_TESSERA_ERROR(data::parse_csv("1,2\n3,oops\n", "t.csv", CsvHeader::absent), "t.csv:2: column 2", "got 'oops'");
  EXPECT_TESSERA_ERROR(data::parse_csv("a,b\n1,2\n3\n", "t.csv"), "t.csv:3", "expected 2 cells", "got 1");
  EXPECT_TESSERA_ERROR(data::parse_csv("a,b\n1,\n", "t.csv"), "t.csv:2: column 2 ('b'): empty cell");
  EXPECT_TESSERA_ERROR(data::parse_csv("a\n1e999\n", "t.csv"), "t.csv:2", "outside the range of f64");
  EXPECT_TESSERA_ERROR(data::parse_csv("a,b\n\"1,2\n", "t.csv"), "t.csv:2:1: unterminated quoted cell");
  EXPECT_TESSERA_ERROR(data::parse_csv("a,b\n\"1\"x,2\n", "t.csv"), "t.csv:2:4: unexpected text after a closing quote");
  EXPECT_TESSERA_ERROR(data::parse_csv("", "t.csv"), "t.csv: empty CSV");
  EXPECT_TESSERA_ERROR(data::parse_csv("\n \n", "t.csv"), "empty CSV");
  EXPECT_TESSERA_ERROR(data::parse_csv("1", "t.csv", CsvHeader::detect, '"'), "delimiter");
  EXPECT_TESSERA_ERROR(data::read_csv("/nonexistent.csv"), "cannot open '/nonexistent.csv'");
  // Numbers with trailing junk and lone signs are not numbers.
  EXPECT_TESSERA_ERROR(data::parse_csv("1.5.2\n", "t.csv", CsvHeader::absent), "got '1.5.2'");
  EXPECT_TESSERA_ERROR(data::parse_csv("+\n", "t.csv", CsvHeader::absent), "got '+'");
  EXPECT_TESSERA_ERROR(data::parse_csv("+-1\n", "t.csv", CsvHeader::absent), "got '+-1'");
}

TEST(Csv, DatasetByLabelNameOrIndex) {
  ScratchDir dir;
  write_bytes(dir.file("iris.csv"), "len,label,width\n5.1,0,3.5\n6.2,2,2.9\n4.9,1,3.0\n");
  data::CsvOptions by_name;
  by_name.label_column = "label";
  const data::CsvDataset d = data::load_csv_dataset(dir.file("iris.csv"), by_name);
  EXPECT_EQ(d.label_name, "label");
  EXPECT_EQ(d.feature_names, (std::vector<std::string>{"len", "width"}));
  EXPECT_EQ(d.dataset.targets().dtype(), DType::i64);
  EXPECT_EQ(d.dataset.targets().to_i64(), (std::vector<int64_t>{0, 2, 1}));
  EXPECT_EQ(d.dataset.features().dtype(), DType::f32);
  expect_close(Tensor(d.dataset.features()), {5.1, 3.5, 6.2, 2.9, 4.9, 3.0}, 1e-6);

  data::CsvOptions by_index;
  by_index.label_index = 0;
  by_index.label_dtype = DType::f32;
  by_index.feature_dtype = DType::f64;
  const data::CsvDataset r = data::load_csv_dataset(dir.file("iris.csv"), by_index);
  EXPECT_EQ(r.label_name, "len");
  expect_close(Tensor(r.dataset.targets()), {5.1, 6.2, 4.9}, 1e-6);
  EXPECT_EQ(r.dataset.features().dtype(), DType::f64);
  EXPECT_EQ(r.dataset.features().to_f64(), (std::vector<double>{0, 3.5, 2, 2.9, 1, 3.0}));
  // Default: the last column.
  data::CsvOptions last;
  last.label_dtype = DType::f64;
  EXPECT_EQ(data::load_csv_dataset(dir.file("iris.csv"), last).label_name, "width");
}

TEST(Csv, DatasetErrors) {
  const data::CsvTable t = data::parse_csv("a,b\n1,0.5\n2,3\n", "t.csv");
  data::CsvOptions o;
  EXPECT_TESSERA_ERROR(data::csv_dataset(t, o, "t.csv"), "t.csv:2: column 2 ('b')", "label 0.5",
                       "not a whole number representable as i64");
  o.label_column = "nope";
  EXPECT_TESSERA_ERROR(data::csv_dataset(t, o, "t.csv"), "no column named 'nope'", "a, b");
  o.label_column.clear();
  o.label_index = 2;
  EXPECT_TESSERA_ERROR(data::csv_dataset(t, o, "t.csv"), "label_index 2 is out of range for 2 columns");
  o.label_index = 0;
  o.feature_dtype = DType::i32;
  EXPECT_TESSERA_ERROR(data::csv_dataset(t, o, "t.csv"), "feature_dtype must be floating");
  o.feature_dtype = DType::f32;
  o.label_dtype = DType::u8;
  EXPECT_TESSERA_ERROR(data::csv_dataset(data::parse_csv("y,x\n256,1\n", "t.csv"), o, "t.csv"), "label 256",
                       "representable as u8");
  EXPECT_TESSERA_ERROR(data::csv_dataset(data::parse_csv("y,x\n-1,1\n", "t.csv"), o, "t.csv"), "label -1");
  EXPECT_EQ(data::csv_dataset(data::parse_csv("y,x\n255,1\n", "t.csv"), o, "t.csv").dataset.targets().to_i64(),
            (std::vector<int64_t>{255}));
  EXPECT_TESSERA_ERROR(data::csv_dataset(data::parse_csv("y\n1\n", "t.csv"), o, "t.csv"), "at least one feature");
  data::CsvOptions dup;
  dup.label_column = "a";
  EXPECT_TESSERA_ERROR(data::csv_dataset(data::parse_csv("a,a\n1,2\n", "t.csv"), dup, "t.csv"), "more than once");
}
