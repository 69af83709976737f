// The op registration table: one entry per (op, shape variant), and every check in gradcheck_test.cpp
// runs on every entry (ggml's test-backend-ops `test_case` list). To cover a new op, add entries in
// op_table.cpp and its name to kCoveredOps there.
//
//   {"div_broadcast_row", "div", {{2, 3}, {3}}, [](In x) { return div(x[0], x[1]); }, {real(), nonzero()}}
//
// Input values come from each input's Domain: a range, points to stay away from (kinks of relu, abs,
// clamp, and the poles of 1/x) and, for max, pairwise distinct values so that no two elements tie.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "tests/engine/gradcheck.h"

namespace tinyddp::test {

struct Domain {
  double lo = -2.0, hi = 2.0;
  std::vector<double> avoid;   // sampled values keep at least kAvoidDistance from each of these
  bool distinct = false;       // pairwise apart by >= (hi - lo) / (2 numel): no ties for max
};

// 0.1 is 10^5 central-difference steps (eps = 1e-6): a kink that far away cannot fall inside a stencil.
constexpr double kAvoidDistance = 0.1;

inline Domain real() { return {}; }
inline Domain positive() { return {0.5, 2.0, {}, false}; }   // log, sqrt, non-integer powers
inline Domain nonzero() { return {-2.0, 2.0, {0.0}, false}; }
inline Domain away_from(std::vector<double> kinks) { return {-2.0, 2.0, std::move(kinks), false}; }
inline Domain distinct() { return {-2.0, 2.0, {}, true}; }

struct OpCase {
  std::string name;             // unique, a valid gtest name: [A-Za-z0-9_]
  std::string op;               // the engine op it covers (several cases may cover one op)
  std::vector<Shape> shapes;    // one per input; every input is a leaf that requires grad
  OpFn fn;                      // builds the output from the inputs, in whatever dtype they have
  std::vector<Domain> domains;  // one per input, or a single one for all
};

const std::vector<OpCase>& op_table();

// The differentiable ops the table must cover (checked by a test).
const std::vector<std::string>& covered_ops();

// Float64 leaves for `c`, sampled from its domains with a seed derived from the case name.
std::vector<Tensor> make_inputs(const OpCase& c);

// A stable per-case seed (FNV-1a of the name), so a failure reproduces run after run.
uint64_t case_seed(const std::string& name);

}  // namespace tinyddp::test
