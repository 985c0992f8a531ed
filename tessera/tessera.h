#pragma once
// The whole public API: tensors, ops, transforms, the IR, backends, modules, optimisers, data, files
// and checkpoints.
#include "tessera/api/tensor.h"
#include "tessera/api/transforms.h"
#include "tessera/autodiff/grad.h"
#include "tessera/backends/backend.h"
#include "tessera/data/dataset.h"
#include "tessera/data/fashion_mnist.h"
#include "tessera/ir/graph.h"
#include "tessera/ir/op_def.h"
#include "tessera/io/safetensors.h"
#include "tessera/models/vision.h"
#include "tessera/nn/nn.h"
#include "tessera/ops/ops.h"
#include "tessera/optim/optim.h"
#include "tessera/train/checkpoint.h"
