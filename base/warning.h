// Warnings: messages that tell the user something is probably wrong but do not stop the program (PyTorch's
// warnings.warn / TORCH_WARN). Each thread has its own handler, so that ranks running as threads, the
// Python front end and `tinyddp repro` can each collect what their own code warned about.
//
//   tinyddp::warn("None of the inputs have requires_grad=True. Gradients will be None");
//   {
//     std::vector<std::string> seen;
//     tinyddp::WarningHandlerGuard collect([&](const std::string& m) { seen.push_back(m); });
//     ...                                   // warnings raised on this thread land in `seen`
//   }                                       // the previous handler is back
//
// Without a handler a warning is printed to stderr as "Warning: <message>", every time it is raised.
#pragma once

#include <functional>
#include <string>

namespace tinyddp {

using WarningHandler = std::function<void(const std::string& message)>;

// Sends `message` to this thread's current handler.
void warn(const std::string& message);

// Installs `handler` for this thread for the guard's lifetime, then restores the previous one. Guards nest.
class WarningHandlerGuard {
 public:
  explicit WarningHandlerGuard(WarningHandler handler);
  ~WarningHandlerGuard();
  WarningHandlerGuard(const WarningHandlerGuard&) = delete;
  WarningHandlerGuard& operator=(const WarningHandlerGuard&) = delete;

 private:
  WarningHandler previous_;
};

}  // namespace tinyddp
