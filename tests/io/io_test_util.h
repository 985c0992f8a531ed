#pragma once
// Shared by the I/O and data test suites: a scratch directory per test and byte-level helpers.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "tessera/core/array.h"

namespace tessera::test {

// A fresh directory removed at the end of the test.
class ScratchDir {
 public:
  ScratchDir() {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    path_ = std::filesystem::temp_directory_path() /
            ("tessera_" + std::string(info->test_suite_name()) + "_" + info->name() + "_" + std::to_string(::getpid()));
    std::filesystem::remove_all(path_);
    std::filesystem::create_directories(path_);
  }
  ~ScratchDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  std::string file(const std::string& name) const { return (path_ / name).string(); }
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

inline std::string read_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

inline void write_bytes(const std::string& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

inline const uint8_t* u8(const std::string& s) {
  return reinterpret_cast<const uint8_t*>(s.data());
}

// Same dtype, shape and bytes (bit-exact, so NaN payloads and -0 count).
inline void expect_same_array(const Array& got, const Array& want) {
  ASSERT_TRUE(got.defined());
  EXPECT_EQ(got.dtype(), want.dtype()) << dtype_name(got.dtype()) << " vs " << dtype_name(want.dtype());
  ASSERT_EQ(shape_str(got.shape()), shape_str(want.shape()));
  const Array a = got.contiguous(), b = want.contiguous();
  ASSERT_EQ(a.nbytes(), b.nbytes());
  if (a.nbytes() > 0) {
    EXPECT_EQ(std::memcmp(a.raw_data(), b.raw_data(), a.nbytes()), 0) << a.to_string();
  }
}

// Arrays with a mix of values for each dtype (including negative, fractional and special values).
inline Array sample_array(DType dtype, const Shape& shape, int salt = 0) {
  std::vector<double> v(static_cast<size_t>(shape_numel(shape)));
  for (size_t i = 0; i < v.size(); ++i) {
    const double k = static_cast<double>(i) + salt;
    v[i] = is_floating(dtype) ? (k - 2.5) * 0.375
                              : (dtype == DType::boolean ? static_cast<double>((i + salt) % 2)
                                                         : std::fmod(k * 37.0, 120.0) - (is_signed(dtype) ? 60 : 0));
  }
  return Array::from_vector(v, shape).astype(dtype);
}

// The fuzz seed corpus (fuzz/corpus/<name>), located relative to this source file.
inline std::filesystem::path corpus_dir(const std::string& name) {
  return std::filesystem::path(TESSERA_SOURCE_DIR) / "fuzz" / "corpus" / name;
}

}  // namespace tessera::test
