// Grad mode: whether ops record a graph. Per thread, so each rank of the `thread` process group (one thread
// per rank) has its own. The engine turns it on while running a backward with create_graph, off otherwise.
#pragma once

namespace tinyddp {

struct GradMode {
  static bool is_enabled();
  static void set_enabled(bool enabled);
};

// Sets grad mode for a scope and restores the previous mode on exit.
class AutoGradMode {
 public:
  explicit AutoGradMode(bool enabled) : prev_(GradMode::is_enabled()) { GradMode::set_enabled(enabled); }
  ~AutoGradMode() { GradMode::set_enabled(prev_); }
  AutoGradMode(const AutoGradMode&) = delete;
  AutoGradMode& operator=(const AutoGradMode&) = delete;

 private:
  bool prev_;
};

// torch.no_grad(): ops in scope record nothing; optimizers update parameters in place under it.
class NoGradGuard : public AutoGradMode {
 public:
  NoGradGuard() : AutoGradMode(false) {}
};

}  // namespace tinyddp
