#pragma once
// Image classification folders: root/<class name>/<image>.png. Classes are the sub-folders in sorted
// order (label = position), images within a class are taken in sorted order; hidden entries and files
// that are not .png are ignored. Everything is decoded up front into one TensorDataset.
#include <string>
#include <vector>

#include "tessera/data/dataset.h"

namespace tessera::data {

// Decodes a PNG (any bit depth, palette, alpha) into f32 [C, H, W] in [0, 1]. channels: 1 (gray),
// 3 (RGB) or 0 (as stored: 1 for gray files, 3 for colour ones). Alpha is dropped; 16-bit files are
// reduced to 8 bits by libpng.
Array read_png(const std::string& path, int channels = 0);
// Encodes [C, H, W] (C = 1 or 3) or [H, W]: floating values in [0, 1] (clamped) or u8, atomically.
void write_png(const std::string& path, const Array& image);

// How many channels the images of an image folder are read with.
struct ImageFolderOptions {
  int channels = 0;  // 0: as stored in the first image (every image must then agree), 1 or 3: convert
};

// A decoded image folder: its examples, class names (index = label) and files.
struct ImageFolder {
  TensorDataset dataset;             // inputs f32 [N, C, H, W], targets i64 [N]
  std::vector<std::string> classes;  // label -> sub-folder name
  std::vector<std::string> files;    // example -> image path
};

// Throws naming the file when an image cannot be decoded or its size or channel count differs from
// the first image's.
ImageFolder load_image_folder(const std::string& root, const ImageFolderOptions& options = {});

}  // namespace tessera::data
