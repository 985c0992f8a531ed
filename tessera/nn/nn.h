#pragma once
// tessera::nn — modules with named parameters.
#include "tessera/nn/activation.h"
#include "tessera/nn/attention.h"
#include "tessera/nn/conv.h"
#include "tessera/nn/incompatible_keys.h"
#include "tessera/nn/init.h"
#include "tessera/nn/layers.h"
#include "tessera/nn/module.h"
#include "tessera/nn/norm.h"
