#include "models/nn/module.h"

#include <cxxabi.h>

#include <cstdlib>
#include <sstream>
#include <typeinfo>
#include <unordered_set>

namespace tinyddp::nn {

namespace {

// "tinyddp::nn::Linear" -> "Linear"; "(anonymous namespace)::TwoTask" -> "TwoTask". Template arguments are
// kept as they are: only the scope before the last top-level "::" is dropped.
std::string unqualified(const std::string& name) {
  int depth = 0;
  size_t start = 0;
  for (size_t i = 0; i + 1 < name.size(); ++i) {
    const char c = name[i];
    if (c == '<' || c == '(') ++depth;
    else if (c == '>' || c == ')') --depth;
    else if (depth == 0 && c == ':' && name[i + 1] == ':') start = i + 2;
  }
  return name.substr(start);
}

std::string demangle(const char* mangled) {
  int status = 0;
  char* readable = abi::__cxa_demangle(mangled, nullptr, nullptr, &status);
  std::string out = (status == 0 && readable != nullptr) ? readable : mangled;
  std::free(readable);
  return out;
}

// Indents every line after the first by two spaces, as PyTorch's _addindent does for nested reprs.
std::string indent_tail(const std::string& text) {
  std::string out;
  for (char c : text) {
    out += c;
    if (c == '\n') out += "  ";
  }
  return out;
}

}  // namespace

Tensor Module::forward(const Tensor&) {
  TINYDDP_CHECK(false, "Module [", type_name(), "] is missing the required \"forward\" function: it has no "
                "single-input forward(x). Call the module's own methods (losses take (input, target); multi-task "
                "models expose their parts), or override Tensor forward(const Tensor&) in ", type_name(), ".");
  return {};
}

Tensor Module::operator()(const Tensor& x) {
  Tensor y = forward(x);
  if (forward_hooks_.empty()) return y;
  // A snapshot, as PyTorch iterates one: a hook may remove itself (or another) while it runs.
  const std::vector<std::pair<int64_t, ForwardHook>> hooks = forward_hooks_;
  for (const auto& [_, hook] : hooks) hook(*this, x, y);
  return y;
}

int64_t Module::register_forward_hook(ForwardHook hook) {
  TINYDDP_CHECK(static_cast<bool>(hook), "register_forward_hook on ", type_name(), ": the hook is empty; pass a "
                "callable hook(module, input, output).");
  forward_hooks_.emplace_back(next_hook_id_, std::move(hook));
  return next_hook_id_++;
}

void Module::remove_forward_hook(int64_t id) {
  std::erase_if(forward_hooks_, [id](const auto& entry) { return entry.first == id; });
}

std::string Module::type_name() const { return unqualified(demangle(typeid(*this).name())); }

std::string Module::to_string() const {
  std::string out = type_name() + "(" + extra_repr();
  if (!children_.empty()) {
    out += "\n";
    for (const auto& [name, child] : children_) out += "  (" + name + "): " + indent_tail(child->to_string()) + "\n";
  }
  return out + ")";
}

std::ostream& operator<<(std::ostream& os, const Module& m) { return os << m.to_string(); }

void Module::check_new_name(const std::string& name, const char* kind) const {
  TINYDDP_CHECK(!name.empty(), kind, " name can't be empty string \"\" (registering on ", type_name(), ").");
  TINYDDP_CHECK(name.find('.') == std::string::npos, kind, " name can't contain \".\", got: ", name, " (on ",
                type_name(), "); '.' joins names across levels, so register it on the submodule that owns it.");
  for (const auto& [existing, _] : params_)
    TINYDDP_CHECK(existing != name, "attribute '", name, "' already exists: ", type_name(),
                  " already has a parameter of that name. Pick another name.");
  for (const auto& [existing, _] : buffers_)
    TINYDDP_CHECK(existing != name, "attribute '", name, "' already exists: ", type_name(),
                  " already has a buffer of that name. Pick another name; to change the buffer's values, copy them "
                  "into it in place (buffer.copy_(...)) so that DDP and state files keep seeing the same tensor.");
  for (const auto& [existing, _] : children_)
    TINYDDP_CHECK(existing != name, "attribute '", name, "' already exists: ", type_name(),
                  " already has a child module of that name. Pick another name.");
}

Tensor Module::register_parameter(const std::string& name, Tensor tensor) {
  check_new_name(name, "parameter");
  TINYDDP_CHECK(tensor.defined(), "register_parameter: parameter '", name, "' of ", type_name(),
                " is an undefined tensor; create it first (e.g. with zeros or randn).");
  TINYDDP_CHECK(tensor.is_leaf(), "Cannot assign non-leaf Tensor to parameter '", name,
                "'. Model parameters must be created explicitly. To express '", name,
                "' as a function of another Tensor, compute the value in the forward() method.");
  tensor.requires_grad_(true);
  params_.emplace_back(name, tensor);
  return tensor;
}

Tensor Module::register_buffer(const std::string& name, Tensor tensor) {
  check_new_name(name, "buffer");
  TINYDDP_CHECK(tensor.defined(), "register_buffer: buffer '", name, "' of ", type_name(),
                " is an undefined tensor; create it first (e.g. with zeros or ones).");
  buffers_.emplace_back(name, tensor);
  return tensor;
}

void Module::add_child(const std::string& name, std::shared_ptr<Module> module) {
  check_new_name(name, "module");
  TINYDDP_CHECK(module != nullptr, "register_module: module '", name, "' of ", type_name(),
                " is null; construct it first (e.g. std::make_shared<nn::Linear>(4, 8)).");
  TINYDDP_CHECK(module.get() != this, "register_module: ", type_name(), " cannot be its own child '", name, "'.");
  children_.emplace_back(name, std::move(module));
}

std::vector<std::pair<std::string, const Module*>> Module::named_modules() const {
  std::vector<std::pair<std::string, const Module*>> out;
  std::unordered_set<const Module*> seen;
  // Depth first, pre-order; `prefix` is the dotted path of `m`.
  auto visit = [&](auto&& self, const Module* m, const std::string& prefix) -> void {
    if (!seen.insert(m).second) return;
    out.emplace_back(prefix, m);
    for (const auto& [name, child] : m->children_)
      self(self, child.get(), prefix.empty() ? name : prefix + "." + name);
  };
  visit(visit, this, "");
  return out;
}

namespace {

// PyTorch's _named_members: every module's own tensors of one kind (`own`), depth first, each tensor once.
template <typename Own>
std::vector<std::pair<std::string, Tensor>> named_members(const Module& root, Own own) {
  std::vector<std::pair<std::string, Tensor>> out;
  std::unordered_set<const TensorImpl*> seen;   // PyTorch's memo: a shared tensor is listed once
  for (const auto& [prefix, m] : root.named_modules()) {
    for (const auto& [name, t] : own(*m)) {
      if (!seen.insert(t.impl()).second) continue;
      out.emplace_back(prefix.empty() ? name : prefix + "." + name, t);
    }
  }
  return out;
}

std::vector<Tensor> tensors_of(const std::vector<std::pair<std::string, Tensor>>& named) {
  std::vector<Tensor> out;
  for (const auto& [_, t] : named) out.push_back(t);
  return out;
}

}  // namespace

std::vector<std::pair<std::string, Tensor>> Module::named_parameters() const {
  return named_members(*this, [](const Module& m) -> const auto& { return m.named_own_parameters(); });
}

std::vector<std::pair<std::string, Tensor>> Module::named_buffers() const {
  return named_members(*this, [](const Module& m) -> const auto& { return m.named_own_buffers(); });
}

std::vector<Tensor> Module::parameters() const { return tensors_of(named_parameters()); }
std::vector<Tensor> Module::buffers() const { return tensors_of(named_buffers()); }

void Module::to(Device device) {
  NoGradGuard no_grad;
  for (const Tensor& p : parameters()) {
    if (p.device() == device) continue;
    p.set_data(p.detach().to(device));
    if (p.grad().defined()) p.set_grad(p.grad().to(device));
  }
  for (const Tensor& b : buffers())
    if (b.device() != device) b.set_data(b.detach().to(device));
}

Module& Module::requires_grad_(bool requires_grad) {
  for (Tensor p : parameters()) p.requires_grad_(requires_grad);
  return *this;
}

Tensor Module::parameter(const std::string& name) const {
  const auto named = named_parameters();
  for (const auto& [n, p] : named)
    if (n == name) return p;
  std::string names;
  for (const auto& [n, _] : named) names += (names.empty() ? "" : ", ") + n;
  TINYDDP_CHECK(false, type_name(), " has no parameter named '", name, "'. Its parameters are: [", names, "].");
  return {};
}

void zero_grad_of(const std::vector<Tensor>& params, bool set_to_none) {
  NoGradGuard no_grad;
  for (const Tensor& p : params) {
    Tensor grad = p.grad();
    if (!grad.defined()) continue;
    if (set_to_none) {
      p.set_grad(Tensor());
      continue;
    }
    // A .grad built under create_graph carries history (or requires grad): PyTorch detaches it in place
    // before zeroing so that the zeros do not feed the old graph. Detaching keeps the storage, so the
    // zeroing below still happens in the memory .grad has always used (DDP's bucket views rely on that).
    if (grad.grad_fn() != nullptr) {
      // PyTorch's detach_() refuses a view (a weight's gradient is a transpose of a product under
      // create_graph), with its text.
      TINYDDP_CHECK(!grad.is_view(),
                    "Can't detach views in-place. Use detach() instead. If you are using DistributedDataParallel "
                    "(DDP) for training, and gradient_as_bucket_view is set as True, gradients are views of DDP "
                    "buckets, and hence detach_() cannot be called on these gradients. To fix this error, please "
                    "refer to the Optimizer.zero_grad() function in torch/optim/optimizer.py as the solution.");
      grad = grad.detach();
      p.set_grad(grad);
    } else if (grad.requires_grad()) {
      grad.requires_grad_(false);
    }
    grad.zero_();
  }
}

void Module::zero_grad(bool set_to_none) { zero_grad_of(parameters(), set_to_none); }

Module& Module::train(bool mode) {
  training_ = mode;
  for (auto& [_, child] : children_) child->train(mode);
  return *this;
}

}  // namespace tinyddp::nn
