#include "models/nn/sequential.h"

#include <string>

namespace tinyddp::nn {

Sequential::Sequential(std::initializer_list<std::shared_ptr<Module>> modules) {
  for (const auto& m : modules) push_back(m);
}

void Sequential::push_back(std::shared_ptr<Module> module) {
  register_module(std::to_string(size()), std::move(module));
}

std::shared_ptr<Module> Sequential::operator[](size_t i) const {
  TINYDDP_CHECK(i < size(), "Sequential: index ", i, " is out of range for a Sequential of size ", size(),
                size() == 0 ? std::string(" (it is empty; add children with push_back).")
                            : detail::concat(" (valid indices are 0..", size() - 1, ")."));
  return named_children()[i].second;
}

Tensor Sequential::forward(const Tensor& x) {
  Tensor h = x;
  // Through operator(), so that the children's forward hooks run.
  for (const auto& [_, child] : named_children()) h = (*child)(h);
  return h;
}

}  // namespace tinyddp::nn
