// Numerical checks of autograd, in float64 (flashlight's AutogradTestUtils, PyTorch's gradcheck):
//
//   gradcheck:      J_num[:, j] = (f(x + eps e_j) - f(x - eps e_j)) / (2 eps)   (central differences)
//                   vs  u^T J from autograd::grad(f(x), x, grad_outputs = u), for u = each basis vector of
//                   the output (the full Jacobian) when it is small, else a few random vectors.
//   gradgradcheck:  G(x) = J(x)^T v for a fixed random v (the first-order VJP, as a function of x);
//                   its central-difference Jacobian vs autograd's second-order w^T dG/dx, from
//                   autograd::grad(G, x, w) where G was computed with create_graph.
//   f32 vs f64:     the same op on float32 copies of the inputs agrees with float64 (forward, and the VJP).
//
// Each returns a CheckResult instead of asserting, so a test can also show that a check fails on a
// wrong gradient (see gradcheck_test.cpp, CatchesAWrongBackward).
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "engine/tinyddp.h"

namespace tinyddp::test {

using OpFn = std::function<Tensor(const std::vector<Tensor>&)>;

struct CheckResult {
  bool ok = true;
  double max_abs_diff = 0.0;   // worst |analytic - numerical| seen
  std::string detail;          // where the worst difference was, on failure
};

struct GradcheckOptions {
  double eps = 1e-6;           // central-difference step; truncation error ~ eps^2, round-off ~ 1e-16 / eps
  double atol = 1e-6;
  double rtol = 1e-6;
  size_t max_full_rows = 32;   // below this many outputs probe every row of the Jacobian, else random rows
  size_t random_probes = 4;
  uint64_t seed = 0;           // for the random probe vectors
};

// inputs: contiguous float64 leaves that require grad; f is evaluated on them (their data is perturbed
// in place and restored).
CheckResult gradcheck(const OpFn& f, const std::vector<Tensor>& inputs, const GradcheckOptions& options);
CheckResult gradgradcheck(const OpFn& f, const std::vector<Tensor>& inputs, const GradcheckOptions& options);
// inputs64 as above; float32 copies are made inside. Compares the forward and the VJP with a random v.
CheckResult f32_matches_f64(const OpFn& f, const std::vector<Tensor>& inputs64, double tol, uint64_t seed);

}  // namespace tinyddp::test
