// Writes a safetensors file with one tensor per dtype holding a known pattern (value i * 0.5 - 3 at
// flat index i, cast to the dtype), for checking that other implementations read Tessera's files.
//   write_reference_safetensors OUT.safetensors
#include <cstdio>
#include <string>

#include "tessera/io/safetensors.h"

using namespace tessera;

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s OUT.safetensors\n", argv[0]);
    return 2;
  }
  StateDict tensors;
  for (DType dt : kAllDTypes) {
    const Shape shape = dt == DType::f32 ? Shape{2, 3, 4} : Shape{3, 5};
    std::vector<double> v(static_cast<size_t>(shape_numel(shape)));
    for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<double>(i) * 0.5 - 3.0;
    if (dt == DType::u8) {
      for (double& x : v) x = x + 3.0;
    }
    tensors.emplace(std::string("t_") + dtype_name(dt), Array::from_vector(v, shape).astype(dt));
  }
  tensors.emplace("scalar", Array::scalar(1.25, DType::f32));
  io::save_safetensors(argv[1], tensors, {{"producer", "tessera"}, {"pattern", "i*0.5-3"}});
  return 0;
}
