// The op table. Legend: entries are {name, op, input shapes, fn, domains}. Shapes are kept small (a few
// dozen elements) so every row of every Jacobian can be checked.
#include "tests/engine/op_table.h"

#include <algorithm>
#include <cmath>
#include <random>

#include "engine/hash.h"

namespace tinyddp::test {

namespace {

using In = const std::vector<Tensor>&;
using autograd::TensorList;

// clamp's range in the table; the inputs keep away from both ends (its kinks).
constexpr double kClampLo = -0.5, kClampHi = 0.75;

std::vector<OpCase> build() {
  std::vector<OpCase> table;
  auto add_case = [&](std::string name, std::string op, std::vector<Shape> shapes, OpFn fn,
                      std::vector<Domain> domains = {real()}) {
    table.push_back({std::move(name), std::move(op), std::move(shapes), std::move(fn), std::move(domains)});
  };

  // ---- binary elementwise, with broadcasting ----
  add_case("add", "add", {{2, 3}, {2, 3}}, [](In x) { return add(x[0], x[1]); });
  add_case("add_broadcast_row", "add", {{2, 3}, {3}}, [](In x) { return add(x[0], x[1]); });
  add_case("add_broadcast_both", "add", {{2, 1}, {1, 3}}, [](In x) { return x[0] + x[1]; });
  add_case("add_broadcast_0d", "add", {{2, 3}, {}}, [](In x) { return x[0] + x[1]; });
  add_case("add_same_tensor", "add", {{3}}, [](In x) { return x[0] + x[0]; });
  add_case("sub", "sub", {{2, 3}, {2, 3}}, [](In x) { return sub(x[0], x[1]); });
  add_case("sub_broadcast_col", "sub", {{2, 3}, {2, 1}}, [](In x) { return x[0] - x[1]; });
  add_case("sub_broadcast_lhs", "sub", {{3}, {2, 3}}, [](In x) { return x[0] - x[1]; });
  add_case("mul", "mul", {{2, 3}, {2, 3}}, [](In x) { return mul(x[0], x[1]); });
  add_case("mul_broadcast_row", "mul", {{2, 3}, {3}}, [](In x) { return x[0] * x[1]; });
  add_case("mul_broadcast_3d", "mul", {{2, 1, 3}, {2, 1}}, [](In x) { return x[0] * x[1]; });
  add_case("mul_square_self", "mul", {{4}}, [](In x) { return x[0] * x[0]; });
  add_case("div", "div", {{2, 3}, {2, 3}}, [](In x) { return div(x[0], x[1]); }, {real(), nonzero()});
  add_case("div_broadcast_row", "div", {{2, 3}, {3}}, [](In x) { return x[0] / x[1]; }, {real(), nonzero()});
  add_case("div_broadcast_lhs", "div", {{3}, {2, 3}}, [](In x) { return x[0] / x[1]; }, {real(), nonzero()});
  add_case("div_broadcast_col", "div", {{2, 3}, {2, 1}}, [](In x) { return x[0] / x[1]; }, {real(), nonzero()});

  // ---- with a scalar ----
  add_case("add_scalar", "add_scalar", {{2, 3}}, [](In x) { return x[0] + 1.5; });
  add_case("add_scalar_lhs", "add_scalar", {{2, 3}}, [](In x) { return 1.5 + x[0]; });
  add_case("sub_scalar", "add_scalar", {{2, 3}}, [](In x) { return x[0] - 0.25; });
  add_case("mul_scalar", "mul_scalar", {{2, 3}}, [](In x) { return x[0] * 2.5; });
  add_case("mul_scalar_lhs", "mul_scalar", {{2, 3}}, [](In x) { return -3.0 * x[0]; });
  add_case("div_scalar", "div_scalar", {{2, 3}}, [](In x) { return x[0] / 4.0; });
  add_case("rsub_scalar", "rsub", {{2, 3}}, [](In x) { return 1.0 - x[0]; });
  add_case("rdiv_scalar", "rdiv", {{2, 3}}, [](In x) { return 2.0 / x[0]; }, {nonzero()});

  // ---- unary ----
  add_case("neg", "neg", {{2, 3}}, [](In x) { return neg(x[0]); });
  add_case("neg_operator", "neg", {{3}}, [](In x) { return -x[0]; });
  add_case("pow_2", "pow", {{2, 3}}, [](In x) { return pow(x[0], 2.0); });
  add_case("pow_3", "pow", {{2, 3}}, [](In x) { return pow(x[0], 3.0); });
  add_case("pow_0_5", "pow", {{2, 3}}, [](In x) { return pow(x[0], 0.5); }, {positive()});
  add_case("pow_neg1", "pow", {{2, 3}}, [](In x) { return pow(x[0], -1.0); }, {nonzero()});
  add_case("pow_1_5", "pow", {{2, 3}}, [](In x) { return x[0].pow(1.5); }, {positive()});
  add_case("pow_1", "pow", {{3}}, [](In x) { return pow(x[0], 1.0); });
  add_case("pow_0", "pow", {{3}}, [](In x) { return pow(x[0], 0.0) * x[0]; });
  add_case("pow_tensor", "pow", {{2, 3}, {2, 3}}, [](In x) { return pow(x[0], x[1]); }, {positive(), real()});
  add_case("pow_tensor_broadcast", "pow", {{2, 3}, {3}}, [](In x) { return pow(x[0], x[1]); }, {positive(), real()});
  add_case("exp", "exp", {{2, 3}}, [](In x) { return exp(x[0]); });
  add_case("log", "log", {{2, 3}}, [](In x) { return log(x[0]); }, {positive()});
  add_case("sqrt", "sqrt", {{2, 3}}, [](In x) { return sqrt(x[0]); }, {positive()});
  add_case("abs", "abs", {{2, 3}}, [](In x) { return abs(x[0]); }, {away_from({0.0})});
  add_case("relu", "relu", {{2, 3}}, [](In x) { return relu(x[0]); }, {away_from({0.0})});
  // relu's second derivative is zero: multiply by x so the gradgradcheck sees a non-trivial graph.
  add_case("relu_times_x", "relu", {{2, 3}}, [](In x) { return relu(x[0]) * x[0]; }, {away_from({0.0})});
  add_case("tanh", "tanh", {{2, 3}}, [](In x) { return tanh(x[0]); });
  add_case("sigmoid", "sigmoid", {{2, 3}}, [](In x) { return sigmoid(x[0]); });
  add_case("erf", "erf", {{2, 3}}, [](In x) { return erf(x[0]); });
  add_case("sin", "sin", {{2, 3}}, [](In x) { return sin(x[0]); });
  add_case("cos", "cos", {{2, 3}}, [](In x) { return cos(x[0]); });
  add_case("log1p", "log1p", {{2, 3}}, [](In x) { return log1p(x[0]); }, {positive()});
  add_case("expm1", "expm1", {{2, 3}}, [](In x) { return expm1(x[0]); });
  add_case("clamp", "clamp", {{3, 4}}, [](In x) { return clamp(x[0], kClampLo, kClampHi); },
           {away_from({kClampLo, kClampHi})});
  add_case("clamp_times_x", "clamp", {{3, 4}}, [](In x) { return clamp(x[0], kClampLo, kClampHi) * x[0]; },
           {away_from({kClampLo, kClampHi})});

  // ---- linear algebra ----
  add_case("matmul_1d_1d", "matmul", {{3}, {3}}, [](In x) { return matmul(x[0], x[1]); });
  add_case("matmul_1d_2d", "matmul", {{3}, {3, 2}}, [](In x) { return matmul(x[0], x[1]); });
  add_case("matmul_2d_1d", "matmul", {{2, 3}, {3}}, [](In x) { return matmul(x[0], x[1]); });
  add_case("matmul_2d_2d", "matmul", {{2, 3}, {3, 4}}, [](In x) { return matmul(x[0], x[1]); });
  add_case("matmul_3d_3d", "matmul", {{2, 2, 3}, {2, 3, 2}}, [](In x) { return matmul(x[0], x[1]); });
  add_case("matmul_3d_broadcast_batch", "matmul", {{2, 2, 3}, {1, 3, 2}}, [](In x) { return matmul(x[0], x[1]); });
  add_case("matmul_3d_2d", "matmul", {{2, 2, 3}, {3, 2}}, [](In x) { return matmul(x[0], x[1]); });
  add_case("matmul_1d_3d", "matmul", {{3}, {2, 3, 2}}, [](In x) { return matmul(x[0], x[1]); });
  add_case("matmul_3d_1d", "matmul", {{2, 2, 3}, {3}}, [](In x) { return matmul(x[0], x[1]); });
  add_case("matmul_transposed_operand", "matmul", {{3, 2}, {3, 4}},
           [](In x) { return matmul(t(x[0]), x[1]); });
  add_case("mm", "mm", {{2, 3}, {3, 4}}, [](In x) { return mm(x[0], x[1]); });
  add_case("mm_transposed", "mm", {{3, 2}, {4, 3}}, [](In x) { return mm(t(x[0]), t(x[1])); });
  add_case("addmm", "addmm", {{4}, {2, 3}, {3, 4}}, [](In x) { return addmm(x[0], x[1], x[2]); });
  add_case("addmm_bias_2d", "addmm", {{2, 4}, {2, 3}, {3, 4}}, [](In x) { return addmm(x[0], x[1], x[2]); });
  add_case("addmm_linear", "addmm", {{4}, {2, 3}, {4, 3}}, [](In x) { return addmm(x[0], x[1], t(x[2])); });

  // ---- views and copies ----
  add_case("transpose", "transpose", {{2, 3, 4}}, [](In x) { return transpose(x[0], 0, 2); });
  add_case("transpose_2d", "transpose", {{2, 3}}, [](In x) { return x[0].transpose(0, 1); });
  add_case("transpose_negative_dims", "transpose", {{2, 3, 2}}, [](In x) { return transpose(x[0], -1, -3) * 2.0; });
  add_case("t", "t", {{2, 3}}, [](In x) { return t(x[0]); });
  add_case("reshape", "reshape", {{2, 3}}, [](In x) { return reshape(x[0], {3, 2}); });
  add_case("reshape_infer", "reshape", {{2, 3, 2}}, [](In x) { return reshape(x[0], {-1, 4}); });
  add_case("reshape_non_contiguous", "reshape", {{2, 3}}, [](In x) { return reshape(t(x[0]), {6}); });
  add_case("view", "view", {{2, 3, 2}}, [](In x) { return view(x[0], {6, 2}); });
  add_case("narrow", "narrow", {{4, 3}}, [](In x) { return narrow(x[0], 0, 1, 2); });
  add_case("narrow_dim1", "narrow", {{3, 5}}, [](In x) { return narrow(x[0], 1, 2, 3); });
  add_case("narrow_negative", "narrow", {{3, 5}}, [](In x) { return x[0].narrow(-1, -3, 2); });
  add_case("expand", "expand", {{3, 1}}, [](In x) { return expand(x[0], {3, 4}); });
  add_case("expand_new_dim", "expand", {{3}}, [](In x) { return expand(x[0], {2, 3}); });
  add_case("expand_keep_dim", "expand", {{2, 1}}, [](In x) { return x[0].expand({-1, 3}); });
  add_case("unsqueeze", "unsqueeze", {{2, 3}}, [](In x) { return unsqueeze(x[0], 0); });
  add_case("unsqueeze_middle", "unsqueeze", {{2, 3}}, [](In x) { return unsqueeze(x[0], 1); });
  add_case("unsqueeze_last", "unsqueeze", {{2, 3}}, [](In x) { return unsqueeze(x[0], -1); });
  add_case("select", "select", {{3, 4}}, [](In x) { return select(x[0], 0, 1); });
  add_case("select_last_negative", "select", {{2, 3, 2}}, [](In x) { return select(x[0], -1, -1); });
  add_case("select_then_narrow", "select", {{3, 4}}, [](In x) { return narrow(select(x[0], 1, 2), 0, 1, 2); });
  add_case("alias", "alias", {{2, 3}}, [](In x) { return alias(x[0]) * 2.0; });
  add_case("squeeze_all", "squeeze", {{2, 1, 3, 1}}, [](In x) { return squeeze(x[0]); });
  add_case("squeeze_dim", "squeeze", {{2, 1, 3}}, [](In x) { return squeeze(x[0], 1); });
  add_case("squeeze_dim_not_one", "squeeze", {{2, 3}}, [](In x) { return squeeze(x[0], 0); });
  add_case("stack", "stack", {{2, 3}, {2, 3}}, [](In x) { return stack({x[0], x[1]}, 0); });
  add_case("stack_last_dim_three", "stack", {{2}, {2}, {2}}, [](In x) { return stack({x[0], x[1], x[2]}, -1); });
  add_case("stack_same_tensor", "stack", {{3}}, [](In x) { return stack({x[0], x[0] * 2.0}, 1) * 1.5; });
  add_case("cat", "cat", {{2, 3}, {1, 3}}, [](In x) { return cat({x[0], x[1]}, 0); });
  add_case("cat_dim1_three", "cat", {{2, 1}, {2, 2}, {2, 3}}, [](In x) { return cat({x[0], x[1], x[2]}, 1); });
  add_case("cat_negative_dim", "cat", {{2, 2}, {2, 1}}, [](In x) { return cat({x[0], x[1]}, -1); });
  add_case("cat_same_tensor", "cat", {{3}}, [](In x) { return cat({x[0], x[0]}, 0) * 1.5; });
  add_case("clone", "clone", {{2, 3}}, [](In x) { return clone(x[0]); });
  add_case("clone_non_contiguous", "clone", {{2, 3}}, [](In x) { return clone(t(x[0])); });
  add_case("contiguous", "clone", {{2, 3}}, [](In x) { return x[0].t().contiguous(); });
  add_case("to_dtype_identity", "to_dtype", {{2, 3}}, [](In x) { return to_dtype(x[0], x[0].dtype()); });
  add_case("to_dtype_f64", "to_dtype", {{2, 3}}, [](In x) { return x[0].to(DType::f64); });

  // ---- reductions ----
  add_case("sum", "sum", {{2, 3}}, [](In x) { return sum(x[0]); });
  add_case("sum_dim0", "sum", {{2, 3}}, [](In x) { return sum(x[0], {0}); });
  add_case("sum_dim1_keepdim", "sum", {{2, 3}}, [](In x) { return sum(x[0], {1}, true); });
  add_case("sum_dims_0_2", "sum", {{2, 3, 2}}, [](In x) { return sum(x[0], {0, 2}); });
  add_case("sum_dims_keepdim", "sum", {{2, 3, 2}}, [](In x) { return x[0].sum({0, 2}, true); });
  add_case("sum_negative_dim", "sum", {{2, 3}}, [](In x) { return sum(x[0], {-1}); });
  add_case("sum_of_square", "sum", {{2, 3}}, [](In x) { return sum(x[0] * x[0], {1}); });
  add_case("mean", "mean", {{2, 3}}, [](In x) { return mean(x[0]); });
  add_case("mean_dim1", "mean", {{2, 3}}, [](In x) { return mean(x[0], {1}); });
  add_case("mean_dim0_keepdim", "mean", {{2, 3}}, [](In x) { return x[0].mean({0}, true); });
  add_case("mean_of_cube", "mean", {{2, 3}}, [](In x) { return mean(pow(x[0], 3.0), {0}); });
  add_case("max", "max", {{3, 4}}, [](In x) { return max(x[0]); }, {distinct()});
  add_case("max_times_sum", "max", {{3, 4}}, [](In x) { return max(x[0]) * sum(x[0]); }, {distinct()});
  add_case("max_dim0", "max", {{3, 4}}, [](In x) { return max(x[0], 0).values; }, {distinct()});
  add_case("max_dim1_keepdim", "max", {{3, 4}}, [](In x) { return max(x[0], 1, true).values; }, {distinct()});
  add_case("max_dim_last_3d", "max", {{2, 3, 2}}, [](In x) { return max(x[0], -1).values; }, {distinct()});
  add_case("max_dim_squared", "max", {{3, 4}}, [](In x) { return pow(max(x[0], 1).values, 2.0); }, {distinct()});
  // norms: 1, inf and the orders below 1 are kinked at 0 (and inf at ties of |x|): their inputs avoid both
  const Domain positive_distinct{0.5, 2.0, {}, true};
  add_case("vector_norm_2", "linalg_vector_norm", {{3, 4}}, [](In x) { return linalg_vector_norm(x[0], 2.0); });
  add_case("vector_norm_2_dim1", "linalg_vector_norm", {{3, 4}}, [](In x) {
    return linalg_vector_norm(x[0], 2.0, {1});
  });
  add_case("vector_norm_3_dims_keepdim", "linalg_vector_norm", {{2, 3, 2}}, [](In x) {
    return linalg_vector_norm(x[0], 3.0, {0, 2}, true);
  });
  add_case("vector_norm_1", "linalg_vector_norm", {{2, 3}}, [](In x) { return linalg_vector_norm(x[0], 1.0); },
           {nonzero()});
  add_case("vector_norm_inf_dim0", "linalg_vector_norm", {{3, 4}}, [](In x) {
    return linalg_vector_norm(x[0], INFINITY, {0});
  }, {positive_distinct});
  add_case("vector_norm_half", "linalg_vector_norm", {{2, 3}}, [](In x) {
    return linalg_vector_norm(x[0], 0.5, {1});
  }, {nonzero()});
  add_case("vector_norm_1_5", "linalg_vector_norm", {{2, 3}}, [](In x) { return linalg_vector_norm(x[0], 1.5); },
           {nonzero()});
  add_case("vector_norm_squared", "linalg_vector_norm", {{2, 3}}, [](In x) {
    return pow(linalg_vector_norm(x[0], 2.0, {1}), 2.0);
  });
  add_case("norm_2_dim1_keepdim", "norm", {{3, 4}}, [](In x) { return norm(x[0], 2.0, {1}, true); });
  add_case("norm_4", "norm", {{2, 3}}, [](In x) { return norm(x[0], 4.0); });
  add_case("amax_dims", "amax", {{2, 3, 2}}, [](In x) { return amax(x[0], {0, 2}); }, {distinct()});
  add_case("amax_all_squared", "amax", {{3, 4}}, [](In x) { return pow(amax(x[0]), 2.0); }, {distinct()});
  add_case("amin_dim1_keepdim", "amin", {{3, 4}}, [](In x) { return amin(x[0], {1}, true); }, {distinct()});
  add_case("log_softmax", "log_softmax", {{3, 4}}, [](In x) { return log_softmax(x[0], 1); });
  add_case("log_softmax_dim0", "log_softmax", {{3, 4}}, [](In x) { return log_softmax(x[0], 0); });
  add_case("log_softmax_3d_middle", "log_softmax", {{2, 3, 2}}, [](In x) { return log_softmax(x[0], 1); });
  add_case("softmax", "softmax", {{3, 4}}, [](In x) { return softmax(x[0], 1); });
  add_case("softmax_3d_last", "softmax", {{2, 2, 3}}, [](In x) { return softmax(x[0], -1); });

  // ---- losses ----
  add_case("mse_loss", "mse_loss", {{3, 4}, {3, 4}}, [](In x) { return mse_loss(x[0], x[1]); });
  add_case("cross_entropy", "cross_entropy", {{3, 4}}, [](In x) {
    return cross_entropy(x[0], from_vector(std::vector<int64_t>{0, 3, 1}, {3}).to(x[0].device()));
  });
  add_case("nll_loss_of_log_softmax", "nll_loss", {{3, 4}}, [](In x) {
    return nll_loss(log_softmax(x[0], 1), from_vector(std::vector<int64_t>{1, 1, 3}, {3}).to(x[0].device()));
  });
  add_case("cross_entropy_repeated_class", "cross_entropy", {{4, 3}}, [](In x) {
    return cross_entropy(x[0], from_vector(std::vector<int64_t>{2, 2, 0, 2}, {4}).to(x[0].device()));
  });

  // ---- normalization and indexing (normalization.cpp, index.cpp) ----
  // Running statistics are made inside fn (constants of the check, on the inputs' device and dtype); training
  // updates them in place, so each call gets fresh ones.
  auto stats = [](In x, std::vector<double> v) {
    return from_vector(v, {static_cast<int64_t>(v.size())}, x[0].dtype()).to(x[0].device());
  };
  add_case("batch_norm_train", "batch_norm", {{4, 3}, {3}, {3}}, [](In x) {
    return batch_norm(x[0], x[1], x[2], {}, {}, true, 0.1, 1e-5);
  });
  add_case("batch_norm_train_3d_running", "batch_norm", {{2, 3, 2}, {3}, {3}}, [stats](In x) {
    return batch_norm(x[0], x[1], x[2], stats(x, {0.1, -0.2, 0.3}), stats(x, {1.0, 0.5, 2.0}), true, 0.1, 1e-5);
  });
  add_case("batch_norm_train_no_affine_squared", "batch_norm", {{3, 2}}, [](In x) {
    return pow(batch_norm(x[0], {}, {}, {}, {}, true, 0.1, 1e-5), 2.0);
  });
  add_case("batch_norm_eval", "batch_norm", {{4, 3}, {3}, {3}}, [stats](In x) {
    return tanh(batch_norm(x[0], x[1], x[2], stats(x, {0.1, -0.2, 0.3}), stats(x, {1.0, 0.5, 2.0}), false, 0.1, 1e-5));
  });
  add_case("layer_norm", "layer_norm", {{3, 4}, {4}, {4}},
           [](In x) { return layer_norm(x[0], {4}, x[1], x[2], 1e-5); });
  add_case("layer_norm_2d_shape_squared", "layer_norm", {{2, 2, 3}, {2, 3}, {2, 3}}, [](In x) {
    return pow(layer_norm(x[0], {2, 3}, x[1], x[2], 1e-5), 2.0);
  });
  add_case("layer_norm_no_affine", "layer_norm", {{2, 3}}, [](In x) { return layer_norm(x[0], {3}, {}, {}, 1e-5); });
  add_case("embedding_repeated_squared", "embedding", {{4, 3}}, [](In x) {
    const Tensor idx = from_vector(std::vector<int64_t>{1, 3, 1, 0, 1, 2}, {2, 3}).to(x[0].device());
    return pow(embedding(x[0], idx), 2.0);
  });
  // ---- advanced indexing (advanced_index.cpp), squared so each backward runs inside a create_graph backward ----
  // Positions repeat in the gathers and the accumulating put (their gradients sum); a plain put writes each once
  // (1.13 gives every copy of a repeated write the gradient though only the last stays: no derivative to check).
  auto ids = [](std::vector<int64_t> v, Shape shape, const Tensor& like) {
    return from_vector(v, shape).to(like.device());
  };
  add_case("index_broadcast_squared", "index", {{3, 4, 2}}, [ids](In x) {   // P = (2, 3): (2, 3, 2)
    return pow(index(x[0], {ids({2, 0, -1}, {3}, x[0]), ids({1, 3}, {2, 1}, x[0])}), 2.0);
  });
  add_case("index_apart_squared", "index", {{3, 4, 2}}, [ids](In x) {   // P first: (3, 4)
    return pow(index(x[0], {ids({1, 1, 0}, {3}, x[0]), Tensor(), ids({1, 0, 1}, {3}, x[0])}), 2.0);
  });
  add_case("index_mask_squared", "index", {{3, 4}}, [](In x) {
    const Tensor mask = from_vector(std::vector<int64_t>{1, 0, 1, 1}, {4}, DType::b8).to(x[0].device());
    return pow(index(x[0], {Tensor(), mask}), 2.0);
  });
  add_case("index_put_accumulate_squared", "index_put", {{4, 3}, {2, 2, 3}}, [ids](In x) {
    return pow(index_put(x[0], {ids({3, 0, 3, 3}, {2, 2}, x[0])}, x[1], /*accumulate=*/true), 2.0);
  });
  add_case("index_put_broadcast_squared", "index_put", {{4, 3}, {3}}, [ids](In x) {
    return pow(index_put(x[0], {ids({2, 0}, {2}, x[0])}, x[1] * x[1]), 2.0);
  });
  add_case("index_put_inplace_squared", "index_put_", {{3, 4}, {2}}, [ids](In x) {
    Tensor y = x[0] * 2.0;
    index_put_(y, {ids({0, 2}, {2}, x[0]), ids({3, 1}, {2}, x[0])}, x[1]);
    return pow(y, 2.0);
  });
  // Through a view: recorded on the base as CopySlices (Note [In-place ops under autograd]).
  add_case("index_put_into_view_squared", "index_put_", {{3, 4}, {2}}, [ids](In x) {
    Tensor base = x[0] * 1.0;
    Tensor row = select(base, 0, 1);
    index_put_(row, {ids({3, 0}, {2}, x[0])}, x[1] * 3.0);
    return pow(base, 2.0);
  });
  // ---- in place under autograd: the op's node on the tensor, CopySlices on a view's base, AsStridedBackward0 on
  // views of a base that changed; squared so that the second-order rules of each run too ----
  add_case("inplace_mul_squared", "mul_", {{2, 3}, {3}}, [](In x) {
    Tensor y = x[0] * 2.0;
    mul_(y, x[1]);   // saves y's old values for x[1]'s gradient
    return pow(y, 2.0);
  });
  add_case("inplace_apply_exp_squared", "apply_inplace", {{2, 3}}, [](In x) {
    Tensor y = x[0] * 0.5;
    apply_inplace(y, {}, [](const Tensor& current) { return exp(current); });
    return pow(y, 2.0);
  });
  add_case("inplace_copy_into_view_squared", "copy_", {{3, 4}, {3, 2}}, [](In x) {
    Tensor base = x[0] * 1.0;
    Tensor columns = slice(base, 1, 1, 3);
    copy_(columns, x[1] * x[1]);
    return pow(base, 2.0);
  });
  add_case("inplace_add_into_view_then_view_squared", "add_", {{3, 4}, {4}}, [](In x) {
    Tensor base = x[0] * 1.0;
    Tensor row = select(base, 0, 2);
    Tensor column = select(base, 1, 1);   // made before the write: its history is rebuilt (AsStridedBackward0)
    add_(row, x[1]);
    return sum(pow(base, 2.0)) + sum(pow(column, 3.0)) + sum(pow(row, 2.0));
  });
  add_case("inplace_fill_view_with_value", "fill_", {{3, 4}, {2}}, [](In x) {
    Tensor base = x[0] * 1.0;
    Tensor row = select(base, 0, 0);
    fill_(row, sum(x[1] * x[1]));
    return pow(base, 2.0);
  });
  add_case("slice_step_squared", "slice", {{3, 7}}, [](In x) { return pow(slice(x[0], 1, 1, 7, 3), 2.0); });
  // where: both operands broadcast (one along rows), the condition fixed; squared so the backward's own where
  // runs inside the create_graph backward.
  add_case("where_broadcast_squared", "where", {{2, 3}, {3}}, [](In x) {
    const Tensor signs = from_vector(std::vector<double>{1, -1, -1, 1, 1, -1}, {2, 3}).to(x[0].device());
    const Tensor condition = gt(signs, zeros({}, DType::f64, x[0].device()));
    return pow(where(condition, x[0], x[1]), 2.0);
  });

  // ---- compositions (several ops' second-order rules interacting) ----
  add_case("mlp_tanh_mse", "composite", {{3, 2}, {4, 2}, {4}, {3, 4}}, [](In x) {
    return mse_loss(tanh(addmm(x[2], x[0], t(x[1]))), x[3]);
  });
  // Pre-activations: |x W^T| <= 2 * 0.4 * 0.4 = 0.32 and b in [1, 1.5], so columns 0 and 2 lie in [0.68, 1.82]
  // and columns 1 and 3 (shifted by -3) in [-2.32, -1.18]: both sides of relu, far from its kink.
  add_case("mlp_relu_cross_entropy", "composite", {{3, 2}, {4, 2}, {4}}, [](In x) {
    const Tensor shift = from_vector(std::vector<double>{0.0, 3.0, 0.0, 3.0}, {4}, x[0].dtype()).to(x[0].device());
    return cross_entropy(relu(addmm(x[2], x[0], t(x[1])) - shift) * 2.0,
                         from_vector(std::vector<int64_t>{1, 0, 3}, {3}).to(x[0].device()));
  }, {{-0.4, 0.4}, {-0.4, 0.4}, {1.0, 1.5}});
  // Views and copies are linear, so their own second derivative is zero; followed by a nonlinearity their
  // backward rules run inside a create_graph backward and must be differentiable themselves.
  add_case("narrow_squared", "composite", {{3, 4}}, [](In x) { return pow(narrow(x[0], 1, 1, 2), 2.0); });
  add_case("expand_times_expand", "composite", {{3, 1}}, [](In x) { return expand(x[0], {3, 2}) * expand(x[0], {3, 2}); });
  add_case("transpose_exp", "composite", {{2, 3}}, [](In x) { return exp(transpose(x[0], 0, 1)); });
  add_case("reshape_tanh", "composite", {{2, 3}}, [](In x) { return tanh(reshape(x[0], {3, 2})); });
  add_case("view_sigmoid", "composite", {{2, 3}}, [](In x) { return sigmoid(view(x[0], {6})); });
  // A view of a strided tensor (Note [Views of strided tensors]): a narrowed last dim split in two.
  add_case("view_of_narrow_tanh", "composite", {{2, 6}},
           [](In x) { return tanh(view(narrow(x[0], 1, 2, 4), {2, 2, 2})); });
  add_case("unsqueeze_outer_product", "composite", {{3}}, [](In x) { return unsqueeze(x[0], 0) * unsqueeze(x[0], 1); });
  add_case("cat_squared", "composite", {{2, 2}, {1, 2}}, [](In x) { return pow(cat({x[0], x[1]}, 0), 2.0); });
  add_case("matmul_with_own_transpose", "composite", {{2, 3}}, [](In x) { return matmul(x[0], t(x[0])); });
  add_case("batched_matmul_squared", "composite", {{2, 2, 3}, {3, 2}}, [](In x) { return pow(matmul(x[0], x[1]), 2.0); });
  add_case("clone_cube", "composite", {{2, 3}}, [](In x) { return pow(clone(t(x[0])), 3.0); });
  // ---- views with 1.13's nodes, and composite(): ops composed of others recorded as one node ----
  add_case("permute", "permute", {{2, 3, 4}}, [](In x) { return permute(x[0], {2, 0, 1}) * x[0].sum(); });
  add_case("permute_negative_dims", "permute", {{2, 3}}, [](In x) { return pow(permute(x[0], {-1, 0}), 2.0); });
  add_case("split_both_pieces", "split", {{3, 4}}, [](In x) {
    const auto p = split(x[0], 3, 1);   // (3, 3) and (3, 1)
    return p[0] * p[1];
  });
  add_case("split_one_piece_used", "split", {{4, 3}}, [](In x) { return pow(split(x[0], 3, 0)[0], 2.0); });
  add_case("split_with_sizes", "split_with_sizes", {{2, 5}}, [](In x) {
    const auto p = split_with_sizes(x[0], {2, 0, 3}, 1);
    return cat({p[0] * p[0], p[2]}, 1);
  });
  add_case("unbind", "unbind", {{3, 2}}, [](In x) {
    const auto s = unbind(x[0], 1);
    return s[0] * s[1];
  });
  add_case("unbind_last_only", "unbind", {{2, 3}}, [](In x) { return pow(unbind(x[0], 0)[1], 3.0); });
  add_case("composite_norm", "composite_node", {{2, 3}}, [](In x) {
    return composite("NormBackward1", {x[0]}, [&] { return TensorList{sqrt(sum(x[0] * x[0], {1}))}; })[0];
  }, {nonzero()});
  add_case("composite_two_outputs", "composite_node", {{2, 4}}, [](In x) {
    const auto o = composite("VarMeanBackward0", {x[0]}, [&] {
      const Tensor m = mean(x[0], {1}, true), c = x[0] - m;
      return TensorList{mean(c * c, {1}), reshape(m, {2})};
    });
    return o[0] * o[1];
  });
  add_case("composite_three_inputs", "composite_node", {{2, 3}, {2, 3}, {3}}, [](In x) {
    return composite("AddcmulBackward0", {x[0], x[1], x[2]}, [&] { return TensorList{x[0] + x[1] * x[2]}; })[0];
  });
  add_case("composite_of_composites", "composite_node", {{3, 2}}, [](In x) {
    const Tensor inner = composite("ExpBackward0", {x[0]}, [&] { return TensorList{exp(x[0])}; })[0];
    return composite("LogsumexpBackward0", {inner}, [&] { return TensorList{log(sum(inner, {0}))}; })[0];
  });
  add_case("matmul_dot", "pytorch_matmul", {{4}, {4}}, [](In x) { return pytorch_matmul(x[0], x[1]); });
  add_case("matmul_mv", "pytorch_matmul", {{3, 4}, {4}}, [](In x) { return pytorch_matmul(x[0], x[1]); });
  add_case("matmul_row", "pytorch_matmul", {{3}, {3, 2}}, [](In x) { return pytorch_matmul(x[0], x[1]); });
  add_case("matmul_folded", "pytorch_matmul", {{2, 3, 4}, {4, 2}}, [](In x) { return pytorch_matmul(x[0], x[1]); });
  add_case("matmul_folded_mv", "pytorch_matmul", {{2, 2, 3}, {3}}, [](In x) { return pytorch_matmul(x[0], x[1]); });
  add_case("matmul_batched", "pytorch_matmul", {{2, 2, 3}, {2, 3, 2}}, [](In x) {
    return pytorch_matmul(x[0], x[1]);
  });
  add_case("linear_3d", "linear", {{2, 3, 4}, {2, 4}, {2}}, [](In x) { return linear(x[0], x[1], x[2]); });
  add_case("linear_1d_no_bias", "linear", {{4}, {3, 4}}, [](In x) { return linear(x[0], x[1], Tensor()); });
  add_case("to_dtype_cube", "composite", {{2, 3}}, [](In x) { return pow(to_dtype(x[0], DType::f64), 3.0); });
  add_case("sum_dim_squared", "composite", {{2, 3}}, [](In x) { return pow(sum(x[0], {1}), 2.0); });
  add_case("sigmoid_div_exp", "composite", {{2, 3}, {3}}, [](In x) {
    return sigmoid(x[0]) / exp(x[1]) - sqrt(x[0] * x[0] + 1.0);
  });
  return table;
}

Tensor sample(const Shape& shape, const Domain& d, std::mt19937_64& rng) {
  const int64_t n = numel_of(shape);
  auto uniform = [&] { return d.lo + (d.hi - d.lo) * (static_cast<double>(rng() >> 11) * 0x1.0p-53); };
  std::vector<double> v(static_cast<size_t>(n));
  if (d.distinct) {
    // Evenly spaced, shuffled, jittered by at most a quarter step: gaps stay >= half a step.
    const double step = (d.hi - d.lo) / static_cast<double>(std::max<int64_t>(n, 1));
    for (int64_t i = 0; i < n; ++i) v[i] = d.lo + step * (static_cast<double>(i) + 0.5);
    for (int64_t i = n - 1; i > 0; --i) std::swap(v[i], v[rng() % static_cast<uint64_t>(i + 1)]);
    for (auto& x : v) x += step * 0.25 * (2.0 * (static_cast<double>(rng() >> 11) * 0x1.0p-53) - 1.0);
  } else {
    for (auto& x : v) {
      bool ok;
      do {
        x = uniform();
        ok = true;
        for (double k : d.avoid) ok &= std::abs(x - k) >= kAvoidDistance;
      } while (!ok);
    }
  }
  return from_vector(v, shape, DType::f64);
}

}  // namespace

const std::vector<OpCase>& op_table() {
  static const std::vector<OpCase> table = build();
  return table;
}

const std::vector<std::string>& covered_ops() {
  static const std::vector<std::string> ops = {
      "add", "sub", "mul", "div", "add_scalar", "mul_scalar", "div_scalar", "rsub", "rdiv", "neg", "pow", "exp",
      "log", "sqrt", "abs", "relu", "tanh", "sigmoid", "erf", "clamp", "matmul", "mm", "addmm", "transpose", "t",
      "reshape", "view", "narrow", "expand", "unsqueeze", "squeeze", "stack", "select", "alias", "cat", "sum", "mean", "max", "log_softmax", "softmax",
      "mse_loss", "cross_entropy", "clone", "to_dtype", "batch_norm", "layer_norm", "embedding", "nll_loss", "where",
      "sin", "cos", "log1p", "expm1", "index", "index_put", "index_put_", "slice", "linalg_vector_norm", "norm",
      "amax", "amin", "add_", "mul_", "copy_", "fill_", "apply_inplace", "permute", "split", "split_with_sizes",
      "unbind", "composite_node", "pytorch_matmul", "linear"};
  return ops;
}

uint64_t case_seed(const std::string& name) { return fnv1a(name.data(), name.size()); }

std::vector<Tensor> make_inputs(const OpCase& c) {
  std::mt19937_64 rng(case_seed(c.name));
  std::vector<Tensor> inputs;
  for (size_t i = 0; i < c.shapes.size(); ++i) {
    const Domain& d = c.domains.size() == 1 ? c.domains[0] : c.domains.at(i);
    inputs.push_back(sample(c.shapes[i], d, rng).requires_grad_());
  }
  return inputs;
}

}  // namespace tinyddp::test
