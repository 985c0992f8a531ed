#pragma once
// tessera::optim — optimisers, schedules, gradient clipping.
#include "tessera/optim/adam.h"
#include "tessera/optim/optimizer.h"
#include "tessera/optim/schedule.h"
#include "tessera/optim/sgd.h"
