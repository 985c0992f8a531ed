#pragma once
// The whole public API: tensors, ops, transforms, the IR and backends.
#include "tessera/api/tensor.h"
#include "tessera/api/transforms.h"
#include "tessera/autodiff/grad.h"
#include "tessera/backends/backend.h"
#include "tessera/ir/graph.h"
#include "tessera/ir/op_def.h"
#include "tessera/ops/ops.h"
