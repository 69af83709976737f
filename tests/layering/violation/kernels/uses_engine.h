// A deliberate violation for the layering check's own test: kernels/ may not include engine/.
#pragma once
#include "engine/core/tensor.h"
