#include "engine/autograd/saved_tensor_hooks.h"

#include <vector>

#include "base/error.h"

namespace tinyddp::autograd {

namespace {
thread_local std::vector<std::shared_ptr<const SavedTensorHooks>> hooks_stack;
}

SavedTensorHooksGuard::SavedTensorHooksGuard(PackHook pack, UnpackHook unpack) {
  TINYDDP_CHECK(pack && unpack, "saved_tensors_hooks: expected a pack and an unpack function, but got an empty ",
                pack ? "unpack" : "pack", " function; pass both (an identity pair keeps tensors as they are).");
  hooks_stack.push_back(std::make_shared<const SavedTensorHooks>(SavedTensorHooks{std::move(pack), std::move(unpack)}));
}

SavedTensorHooksGuard::~SavedTensorHooksGuard() { hooks_stack.pop_back(); }

std::shared_ptr<const SavedTensorHooks> current_saved_tensor_hooks() {
  return hooks_stack.empty() ? nullptr : hooks_stack.back();
}

}  // namespace tinyddp::autograd
