#pragma once
// Transitional: moved to base/trace.h (+ dist/comm_trace.h).
#include "base/trace.h"
#include "dist/comm_trace.h"
