// One include for users of the engine.
#pragma once

#include "engine/autograd/anomaly_mode.h"
#include "engine/autograd/checkpoint.h"
#include "engine/autograd/custom_function.h"
#include "engine/autograd/engine.h"
#include "engine/autograd/functional.h"
#include "engine/autograd/grad_mode.h"
#include "engine/autograd/saved_tensor_hooks.h"
#include "engine/core/inference_mode.h"
#include "engine/core/tensor.h"
#include "engine/ops/composite.h"
#include "engine/ops/generator.h"
#include "engine/ops/ops.h"
