#include <filesystem>

#include "io/io_test_util.h"
#include "tessera/data/image_folder.h"
#include "test_util.h"

using namespace tessera;
using namespace tessera::test;
namespace fs = std::filesystem;

namespace {

// A [C, 2, 3] u8 image whose values encode (seed, channel, position).
Array tiny_image(int64_t channels, int seed) {
  std::vector<uint8_t> v;
  for (int64_t c = 0; c < channels; ++c) {
    for (int p = 0; p < 6; ++p) v.push_back(static_cast<uint8_t>(seed * 40 + c * 10 + p * 3));
  }
  return Array::from_vector(v, {channels, 2, 3});
}

}  // namespace

TEST(Png, WriteReadRoundTrip) {
  ScratchDir dir;
  for (int64_t c : {1, 3}) {
    const Array img = tiny_image(c, 2);
    data::write_png(dir.file("x.png"), img);
    const Array back = data::read_png(dir.file("x.png"));
    EXPECT_EQ(shape_str(back.shape()), shape_str(img.shape()));
    EXPECT_EQ(back.dtype(), DType::f32);
    const std::vector<int64_t> want = img.to_i64();
    const std::vector<double> got = back.to_f64();
    for (size_t i = 0; i < want.size(); ++i) EXPECT_FLOAT_EQ(got[i], static_cast<float>(want[i]) / 255.0f) << i;
  }
  // Float images in [0, 1]: values round to the nearest step, out-of-range values clamp.
  data::write_png(dir.file("f.png"), Array::from_vector<float>({0.0f, 0.5f, 1.0f, 2.0f, -1.0f, 0.2f}, {2, 3}));
  const std::vector<double> f = data::read_png(dir.file("f.png")).to_f64();
  const std::vector<float> expected = {0, 128 / 255.0f, 1, 1, 0, 51 / 255.0f};
  for (size_t i = 0; i < f.size(); ++i) EXPECT_FLOAT_EQ(f[i], expected[i]) << i;
}

TEST(Png, ChannelConversion) {
  ScratchDir dir;
  data::write_png(dir.file("g.png"), tiny_image(1, 1));
  const Array rgb = data::read_png(dir.file("g.png"), 3);
  EXPECT_EQ(shape_str(rgb.shape()), "[3, 2, 3]");
  // Gray expands to three equal channels.
  const std::vector<double> v = rgb.to_f64();
  for (int p = 0; p < 6; ++p) {
    EXPECT_EQ(v[p], v[6 + p]);
    EXPECT_EQ(v[p], v[12 + p]);
  }
  // A gray-valued RGB image converts back to the same gray levels.
  data::write_png(dir.file("rgb_gray.png"),
                  Array::from_vector<uint8_t>({0, 128, 255, 0, 128, 255, 0, 128, 255}, {3, 1, 3}));
  const std::vector<double> g = data::read_png(dir.file("rgb_gray.png"), 1).to_f64();
  EXPECT_NEAR(g[0], 0, 1e-6);
  EXPECT_NEAR(g[1], 128 / 255.0, 1.5 / 255);
  EXPECT_NEAR(g[2], 1, 1e-6);
}

TEST(Png, Errors) {
  ScratchDir dir;
  write_bytes(dir.file("bad.png"), "\x89PNG\r\n\x1a\n not really");
  EXPECT_TESSERA_ERROR(data::read_png(dir.file("bad.png")), "read_png", dir.file("bad.png"));
  EXPECT_TESSERA_ERROR(data::read_png(dir.file("missing.png")), dir.file("missing.png"));
  data::write_png(dir.file("ok.png"), tiny_image(1, 0));
  EXPECT_TESSERA_ERROR(data::read_png(dir.file("ok.png"), 2), "channels must be 0 (as stored), 1 or 3, got 2");
  EXPECT_TESSERA_ERROR(data::write_png(dir.file("w.png"), Array::zeros(DType::f32, {2, 2, 2})), "write_png",
                       "f32[2, 2, 2]");
  // Files cut anywhere before the end of the pixel data are decoding errors, never crashes. (libpng
  // accepts a file cut after the compressed pixels, in the last chunk's CRC or the IEND chunk.)
  const std::string full = read_bytes(dir.file("ok.png"));
  const size_t iend = full.find("IEND");
  ASSERT_NE(iend, std::string::npos);
  const size_t pixels_end = iend - 4 - 4;  // IEND's length field, then IDAT's CRC
  for (size_t len = 0; len < full.size(); ++len) {
    write_bytes(dir.file("t.png"), full.substr(0, len));
    if (len < pixels_end) {
      EXPECT_THROW(data::read_png(dir.file("t.png")), Error) << len;
    } else {
      try {
        data::read_png(dir.file("t.png"));
      } catch (const Error&) {
      }
    }
  }
}

TEST(ImageFolder, LoadsClassesInSortedOrder) {
  ScratchDir dir;
  for (const char* cls : {"dog", "cat", "bird", ".hidden"}) fs::create_directory(dir.file(cls));
  data::write_png(dir.file("dog/b.png"), tiny_image(3, 1));
  data::write_png(dir.file("dog/a.PNG"), tiny_image(3, 2));
  data::write_png(dir.file("cat/z.png"), tiny_image(3, 3));
  data::write_png(dir.file(".hidden/x.png"), tiny_image(1, 0));  // ignored: hidden
  write_bytes(dir.file("cat/notes.txt"), "not an image");        // ignored: not .png
  write_bytes(dir.file("top_level.png"), "ignored: not in a class folder");
  const data::ImageFolder folder = data::load_image_folder(dir.path().string());
  EXPECT_EQ(folder.classes, (std::vector<std::string>{"bird", "cat", "dog"}));
  ASSERT_EQ(folder.files.size(), 3u);
  EXPECT_EQ(fs::path(folder.files[0]).filename(), "z.png");
  EXPECT_EQ(fs::path(folder.files[1]).filename(), "a.PNG");
  EXPECT_EQ(folder.dataset.targets().to_i64(), (std::vector<int64_t>{1, 2, 2}));
  EXPECT_EQ(shape_str(folder.dataset.features().shape()), "[3, 3, 2, 3]");
  // Example 1 is dog/a.PNG = tiny_image(3, 2).
  const std::vector<double> x = folder.dataset.get(1).first.to_f64();
  const std::vector<int64_t> want = tiny_image(3, 2).to_i64();
  for (size_t i = 0; i < want.size(); ++i) EXPECT_FLOAT_EQ(x[i], static_cast<float>(want[i]) / 255.0f);
}

TEST(ImageFolder, MixedChannelsAndSizes) {
  ScratchDir dir;
  fs::create_directory(dir.file("a"));
  data::write_png(dir.file("a/1.png"), tiny_image(3, 0));
  data::write_png(dir.file("a/2.png"), tiny_image(1, 0));
  EXPECT_TESSERA_ERROR(data::load_image_folder(dir.path().string()), dir.file("a/2.png"), "[1, 2, 3]", "[3, 2, 3]",
                       "same size");
  data::ImageFolderOptions gray;
  gray.channels = 1;
  EXPECT_EQ(shape_str(data::load_image_folder(dir.path().string(), gray).dataset.features().shape()), "[2, 1, 2, 3]");
  data::write_png(dir.file("a/3.png"), Array::zeros(DType::u8, {1, 3, 3}));
  EXPECT_TESSERA_ERROR(data::load_image_folder(dir.path().string(), gray), dir.file("a/3.png"), "[1, 3, 3]",
                       dir.file("a/1.png"));
}

TEST(ImageFolder, Errors) {
  ScratchDir dir;
  EXPECT_TESSERA_ERROR(data::load_image_folder(dir.file("nope")), "not a directory");
  EXPECT_TESSERA_ERROR(data::load_image_folder(dir.path().string()), "no class sub-folders");
  fs::create_directory(dir.file("empty_class"));
  EXPECT_TESSERA_ERROR(data::load_image_folder(dir.path().string()), "no .png images");
  write_bytes(dir.file("empty_class/broken.png"), "garbage");
  EXPECT_TESSERA_ERROR(data::load_image_folder(dir.path().string()), dir.file("empty_class/broken.png"));
}
