#include "engine/autograd/anomaly_mode.h"

#include <atomic>

namespace tinyddp::autograd {

namespace {
std::atomic<bool> g_detect_anomaly{false};   // read once per backward node while on; relaxed is enough
}  // namespace

void set_detect_anomaly(bool enabled) { g_detect_anomaly.store(enabled, std::memory_order_relaxed); }
bool is_anomaly_enabled() { return g_detect_anomaly.load(std::memory_order_relaxed); }

}  // namespace tinyddp::autograd
