#pragma once
// tessera::ops — the functional layer: every op is a plain function from tensors to tensors.
#include "tessera/api/tensor.h"
#include "tessera/ops/binary.h"
#include "tessera/ops/conv.h"
#include "tessera/ops/creation.h"
#include "tessera/ops/index.h"
#include "tessera/ops/linalg.h"
#include "tessera/ops/nn.h"
#include "tessera/ops/optim.h"
#include "tessera/ops/random.h"
#include "tessera/ops/reduce.h"
#include "tessera/ops/shape.h"
#include "tessera/ops/unary.h"
