#pragma once
// The two lines `tessera inspect --tensor` prints about a tensor's values, whatever file it came from:
// min, max, mean and rms over the finite values (and how many are not finite), then the first few.
#include <string>

#include "tessera/core/array.h"

namespace tessera::io {

std::string describe_values(const Array& values);

}  // namespace tessera::io
