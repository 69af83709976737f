// Parameter files: a module's named_parameters() as text, the format tests/golden/tdp_params.py writes.
//
//   nn::save_parameters(model, "mlp.params");
//   nn::load_parameters(model, "tests/golden/create_graph_mlp.params");   // copies values in place
//
// Format "tinyddp parameters v1": a header line, then two lines per parameter in named_parameters() order:
//
//   # tinyddp parameters v1
//   <name> <dtype f32|f64> <ndim> <d0> ... <d_{ndim-1}>
//   <v0> <v1> ... <v_{numel-1}>            (row-major, space separated, one line; empty for numel = 0)
//
// Values are written as the shortest decimal that reads back to the same f32/f64 value (std::to_chars,
// the C++ counterpart of Python's repr(float)), so save -> load is bit-exact.
#pragma once

#include <string>

#include "models/nn/module.h"

namespace tinyddp::nn {

inline constexpr const char* kParamsHeaderV1 = "# tinyddp parameters v1";

void save_parameters(const Module& module, const std::string& path);

// Reads `path` and copies each entry into the module's parameter of the same name, in place under
// NoGradGuard (the parameter tensors keep their identity, so optimizers and hooks holding them stay valid).
// The whole file is checked first (header, every module parameter present exactly once, no unknown names,
// dtypes, shapes, value counts), and nothing is written unless all of it is valid.
void load_parameters(Module& module, const std::string& path);

}  // namespace tinyddp::nn
