#include "base/warning.h"

#include <iostream>
#include <utility>

namespace tinyddp {

namespace {
thread_local WarningHandler current_handler;   // empty: print to stderr
}

void warn(const std::string& message) {
  if (current_handler) {
    current_handler(message);
    return;
  }
  std::cerr << "Warning: " << message << std::endl;
}

WarningHandlerGuard::WarningHandlerGuard(WarningHandler handler) : previous_(std::move(current_handler)) {
  current_handler = std::move(handler);
}

WarningHandlerGuard::~WarningHandlerGuard() { current_handler = std::move(previous_); }

}  // namespace tinyddp
