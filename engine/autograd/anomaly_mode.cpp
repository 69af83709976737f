#include "engine/autograd/anomaly_mode.h"

#include <atomic>

namespace tinyddp::autograd {

namespace {
std::atomic<bool> g_detect_anomaly{false};   // read once per node created and run; relaxed is enough
// Set once, by the front end as it loads, before anything reads them.
std::atomic<void (*)(Node&)> g_node_created{nullptr}, g_node_failed{nullptr};
}  // namespace

void set_detect_anomaly(bool enabled) { g_detect_anomaly.store(enabled, std::memory_order_relaxed); }
bool is_anomaly_enabled() { return g_detect_anomaly.load(std::memory_order_relaxed); }

void set_anomaly_observer(AnomalyObserver observer) {
  g_node_created.store(observer.node_created);
  g_node_failed.store(observer.node_failed);
}

namespace detail {
void anomaly_node_created(Node& node) {
  if (auto* f = g_node_created.load()) f(node);
}
void anomaly_node_failed(Node& node) {
  if (auto* f = g_node_failed.load()) f(node);
}
}  // namespace detail

}  // namespace tinyddp::autograd
