// Anomaly detection, as torch.autograd.set_detect_anomaly: while on, the engine checks every gradient a
// backward node returns and raises PyTorch's "Function 'MulBackward0' returned nan values in its 0th
// output." at the node that produced the first NaN, instead of letting it spread into .grad. It costs a copy
// of every gradient to the host: a debugging aid, off by default. Process-wide, as PyTorch's flag is.
//
//   autograd::DetectAnomalyGuard anomaly;   // on for this scope (torch.autograd.detect_anomaly())
//   loss.backward();                        // throws at the node whose output is NaN
//
// PyTorch also prints the Python stack of the forward call that created the failing node; a C++ program has
// no such stack to record, so tinyddp names the node only.
#pragma once

namespace tinyddp::autograd {

void set_detect_anomaly(bool enabled);
bool is_anomaly_enabled();

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
