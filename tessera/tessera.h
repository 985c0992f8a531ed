#pragma once
// The whole public API, one include: arrays and dtypes, tensors and ops, transforms (grad, compile),
// the IR, backends and devices, modules, optimisers, data, files (safetensors, npy), checkpoints and
// compiled training steps, and language models (GGUF models, tokenizers, the sampler). The headers
// named here are the public set that docs/api and scripts/check_api_docs.sh cover; what they include
// in turn is implementation that their declarations happen to need.
#include "tessera/api/tensor.h"
#include "tessera/api/transforms.h"
#include "tessera/autodiff/grad.h"
#include "tessera/backends/backend.h"
#include "tessera/core/array.h"
#include "tessera/core/device.h"
#include "tessera/core/dtype.h"
#include "tessera/core/error.h"
#include "tessera/core/shape.h"
#include "tessera/core/state_dict.h"
#include "tessera/data/csv.h"
#include "tessera/data/dataset.h"
#include "tessera/data/fashion_mnist.h"
#include "tessera/data/image_folder.h"
#include "tessera/io/npy.h"
#include "tessera/io/safetensors.h"
#include "tessera/ir/graph.h"
#include "tessera/ir/op_def.h"
#include "tessera/models/llm/llm_model.h"
#include "tessera/models/sampling/sampler.h"
#include "tessera/models/vision.h"
#include "tessera/nn/nn.h"
#include "tessera/ops/ops.h"
#include "tessera/optim/optim.h"
#include "tessera/tokenizers/tokenizer.h"
#include "tessera/train/checkpoint.h"
#include "tessera/train/train_step.h"
