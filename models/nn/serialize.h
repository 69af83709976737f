// Parameter files: a module's state (its parameters and buffers) as text, the format tests/golden/tdp_params.py
// writes.
//
//   nn::save_parameters(model, "mlp.params");
//   nn::load_parameters(model, "tests/golden/create_graph_mlp.params");   // copies values in place
//
// Format "tinyddp parameters v1": a header line, then two lines per entry in state_entries() order (for a module
// without buffers, named_parameters() order):
//
//   # tinyddp parameters v1
//   <name> <dtype f32|f64> <ndim> <d0> ... <d_{ndim-1}>
//   <v0> <v1> ... <v_{numel-1}>            (row-major, space separated, one line; empty for numel = 0)
//
// Values are written as the shortest decimal that reads back to the same f32/f64 value (std::to_chars,
// the C++ counterpart of Python's repr(float)), so save -> load is bit-exact. Buffers are entries like
// parameters (the name says which is which); f32 and f64 only.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "models/nn/module.h"

namespace tinyddp::nn {

inline constexpr const char* kParamsHeaderV1 = "# tinyddp parameters v1";

// The entries of a state file in PyTorch 1.13's state_dict order: for each module of named_modules() (depth
// first), its own parameters, then its own buffers. Unlike state_dict, a tensor reached twice (a shared
// module or parameter) is listed once, under its first name, as named_parameters() lists it: loading copies
// in place, so a second entry would only repeat the first.
std::vector<std::pair<std::string, Tensor>> state_entries(const Module& module);

void save_parameters(const Module& module, const std::string& path);

// Reads `path` and copies each entry into the module's parameter or buffer of the same name, in place under
// NoGradGuard (the tensors keep their identity, so optimizers, hooks and DDP holding them stay valid).
// The whole file is checked first (header, every module parameter and buffer present exactly once, no unknown
// names, dtypes, shapes, value counts), and nothing is written unless all of it is valid.
void load_parameters(Module& module, const std::string& path);

}  // namespace tinyddp::nn
