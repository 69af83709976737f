#pragma once
// Transitional: moved to base/error.h.
#include "base/error.h"
