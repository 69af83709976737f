// Every entry of the op table (op_table.cpp) runs every check: gradcheck, gradgradcheck, f32 vs f64.
#include <gtest/gtest.h>

#include <set>

#include "tests/engine/op_table.h"
#include "tests/engine/test_util.h"

namespace tinyddp::test {
namespace {

class OpTableTest : public ::testing::TestWithParam<size_t> {
 protected:
  const OpCase& op_case() const { return op_table()[GetParam()]; }
  GradcheckOptions options() const {
    GradcheckOptions o;
    o.seed = case_seed(op_case().name);
    return o;
  }
};

TEST_P(OpTableTest, Gradcheck) {
  const OpCase& c = op_case();
  const CheckResult r = gradcheck(c.fn, make_inputs(c), options());
  EXPECT_TRUE(r.ok) << c.name << ": max |analytic - numerical| = " << r.max_abs_diff << "; worst: " << r.detail;
}

TEST_P(OpTableTest, Gradgradcheck) {
  const OpCase& c = op_case();
  const CheckResult r = gradgradcheck(c.fn, make_inputs(c), options());
  EXPECT_TRUE(r.ok) << c.name << ": max |analytic - numerical| = " << r.max_abs_diff << "; worst: " << r.detail;
}

// float32 has 24 bits of mantissa (~6e-8 relative); 1e-5 leaves room for a few dozen rounded operations.
TEST_P(OpTableTest, Float32MatchesFloat64) {
  const OpCase& c = op_case();
  const CheckResult r = f32_matches_f64(c.fn, make_inputs(c), 1e-5, case_seed(c.name));
  EXPECT_TRUE(r.ok) << c.name << ": max |f32 - f64| = " << r.max_abs_diff << "; worst: " << r.detail;
}

// The op's output keeps the input dtype and the gradient reaching each input has the input's shape and
// dtype (AccumulateGrad would refuse anything else).
TEST_P(OpTableTest, BackwardFillsLeafGradsWithInputShapes) {
  const OpCase& c = op_case();
  const std::vector<Tensor> inputs = make_inputs(c);
  const Tensor out = c.fn(inputs);
  ASSERT_TRUE(out.requires_grad()) << c.name;
  EXPECT_EQ(out.dtype(), DType::f64) << c.name;
  sum(out).backward();
  for (size_t i = 0; i < inputs.size(); ++i) {
    ASSERT_TRUE(inputs[i].grad().defined()) << c.name << " input " << i;
    EXPECT_EQ(inputs[i].grad().shape(), inputs[i].shape()) << c.name << " input " << i;
    EXPECT_EQ(inputs[i].grad().dtype(), DType::f64) << c.name << " input " << i;
  }
}

INSTANTIATE_TEST_SUITE_P(Ops, OpTableTest, ::testing::Range<size_t>(0, op_table().size()),
                         [](const ::testing::TestParamInfo<size_t>& info) { return op_table()[info.param].name; });

TEST(OpTable, CoversEveryDifferentiableOp) {
  std::set<std::string> ops, names;
  for (const OpCase& c : op_table()) {
    ops.insert(c.op);
    EXPECT_TRUE(names.insert(c.name).second) << "duplicate case name " << c.name;
    EXPECT_TRUE(c.domains.size() == 1 || c.domains.size() == c.shapes.size()) << c.name;
  }
  for (const std::string& op : covered_ops()) EXPECT_TRUE(ops.count(op)) << "no op-table entry covers " << op;
}

TEST(OpTable, DomainsKeepAwayFromKinksAndTies) {
  for (const OpCase& c : op_table()) {
    const std::vector<Tensor> inputs = make_inputs(c);
    for (size_t i = 0; i < inputs.size(); ++i) {
      const Domain& d = c.domains.size() == 1 ? c.domains[0] : c.domains[i];
      std::vector<double> v = inputs[i].to_vector<double>();
      for (double x : v) {
        EXPECT_GE(x, d.lo - 1e-12) << c.name;
        EXPECT_LE(x, d.hi + 1e-12) << c.name;
        for (double k : d.avoid) EXPECT_GE(std::abs(x - k), kAvoidDistance) << c.name << " value " << x;
      }
      if (d.distinct) {
        std::sort(v.begin(), v.end());
        for (size_t j = 1; j < v.size(); ++j) EXPECT_GT(v[j] - v[j - 1], 1e-3) << c.name;
      }
    }
  }
}

// ---- the checks themselves must be able to fail ----

// y = x^2 computed outside autograd, with a hand-written backward that can be wrong at first order
// (factor 3 instead of 2) or at second order (x detached: the gradient looks constant in x).
Tensor square_with_rule(const Tensor& x, double factor, bool detach_in_backward) {
  Tensor out;
  {
    NoGradGuard no_grad;
    out = x.detach() * x.detach();
  }
  auto node = autograd::make_node("TestSquareBackward", {x},
                                  [factor, detach_in_backward](const autograd::TensorList& g, autograd::OpNode& n) {
                                    Tensor xs = n.saved(0);
                                    if (detach_in_backward) xs = xs.detach();
                                    return autograd::TensorList{g[0] * xs * factor};
                                  });
  if (node) node->save(x);
  autograd::set_history(out, node);
  return out;
}

TEST(Gradcheck, AcceptsACorrectHandWrittenBackward) {
  const OpFn f = [](const std::vector<Tensor>& x) { return square_with_rule(x[0], 2.0, false); };
  const std::vector<Tensor> in = {make({0.5, -1.0, 2.0}, {3}).requires_grad_()};
  EXPECT_TRUE(gradcheck(f, in, {}).ok);
  EXPECT_TRUE(gradgradcheck(f, in, {}).ok);
}

TEST(Gradcheck, CatchesAWrongFirstDerivative) {
  const OpFn f = [](const std::vector<Tensor>& x) { return square_with_rule(x[0], 3.0, false); };
  const std::vector<Tensor> in = {make({0.5, -1.0, 2.0}, {3}).requires_grad_()};
  const CheckResult r = gradcheck(f, in, {});
  EXPECT_FALSE(r.ok);
  EXPECT_NEAR(r.max_abs_diff, 2.0, 1e-6);   // |3x - 2x| is largest at x = 2
}

TEST(Gradcheck, CatchesAWrongSecondDerivative) {
  const OpFn f = [](const std::vector<Tensor>& x) { return square_with_rule(x[0], 2.0, true); };
  const std::vector<Tensor> in = {make({0.5, -1.0, 2.0}, {3}).requires_grad_()};
  EXPECT_TRUE(gradcheck(f, in, {}).ok);
  EXPECT_FALSE(gradgradcheck(f, in, {}).ok);
}

TEST(Gradcheck, Float32CheckCatchesADtypeDependentBug) {
  // Adds 1e-3 only in float32: far above the check's tolerance.
  const OpFn f = [](const std::vector<Tensor>& x) { return x[0].dtype() == DType::f32 ? x[0] + 1e-3 : x[0] * 1.0; };
  const std::vector<Tensor> in = {make({0.5, -1.0, 2.0}, {3}).requires_grad_()};
  const CheckResult r = f32_matches_f64(f, in, 1e-5, 0);
  EXPECT_FALSE(r.ok);
  EXPECT_NEAR(r.max_abs_diff, 1e-3, 1e-6);
}

}  // namespace
}  // namespace tinyddp::test
