// Anomaly detection, as torch.autograd.set_detect_anomaly: while on, the engine checks every gradient a
// backward node returns and raises PyTorch's "Function 'MulBackward0' returned nan values in its 0th
// output." at the node that produced the first NaN, instead of letting it spread into .grad. It costs a copy
// of every gradient to the host: a debugging aid, off by default. Process-wide, as PyTorch's flag is.
//
//   autograd::DetectAnomalyGuard anomaly;   // on for this scope (torch.autograd.detect_anomaly())
//   loss.backward();                        // throws at the node whose output is NaN
//
// PyTorch also prints the Python stack of the forward call that created the failing node. A C++ program has
// no such stack to record, so there the error names the node only; the Python front end records and prints
// the stack through an AnomalyObserver.
#pragma once

namespace tinyddp::autograd {

class Node;

void set_detect_anomaly(bool enabled);
bool is_anomaly_enabled();

// A front end's part in anomaly mode. While the mode is on, `node_created` runs in every node's constructor
// (Python's keeps the forward's stack in the node's metadata, 1.13's grad_fn.metadata["traceback_"]), and
// `node_failed` runs when a backward throws while it evaluates a node (its pre-hooks, rule, post-hooks or
// outputs), before the error propagates (Python's warns "Error detected in MulBackward0. Traceback of forward
// call that caused the error: ..."). Neither may throw. One observer per process; none by default.
struct AnomalyObserver {
  void (*node_created)(Node& node) = nullptr;
  void (*node_failed)(Node& node) = nullptr;
};
void set_anomaly_observer(AnomalyObserver observer);

namespace detail {
void anomaly_node_created(Node& node);   // calls the observer's node_created, if any
void anomaly_node_failed(Node& node);    // calls the observer's node_failed, if any
}  // namespace detail

// Turns anomaly detection on for a scope and restores the previous setting on exit.
class DetectAnomalyGuard {
 public:
  explicit DetectAnomalyGuard(bool enabled = true) : previous_(is_anomaly_enabled()) { set_detect_anomaly(enabled); }
  ~DetectAnomalyGuard() { set_detect_anomaly(previous_); }
  DetectAnomalyGuard(const DetectAnomalyGuard&) = delete;
  DetectAnomalyGuard& operator=(const DetectAnomalyGuard&) = delete;

 private:
  bool previous_;
};

}  // namespace tinyddp::autograd
