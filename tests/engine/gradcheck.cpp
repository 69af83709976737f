#include "tests/engine/gradcheck.h"

#include <cmath>
#include <random>
#include <sstream>

namespace tinyddp::test {

namespace {

using Flat = std::vector<double>;

// Uniform in [-1, 1), written out (not <random>'s distributions) so the probes are the same everywhere.
Flat random_flat(size_t n, std::mt19937_64& rng) {
  Flat v(n);
  for (auto& x : v) x = static_cast<double>(rng() >> 11) * 0x1.0p-52 - 1.0;
  return v;
}

Tensor shaped_like(const Tensor& t, const Flat& values) { return from_vector(values, t.shape(), t.dtype()); }

size_t total_numel(const std::vector<Tensor>& ts) {
  size_t n = 0;
  for (const auto& t : ts) n += static_cast<size_t>(t.numel());
  return n;
}

// Concatenates per-input gradients (undefined = zeros, as for an input the output does not depend on).
Flat flatten_grads(const std::vector<Tensor>& grads, const std::vector<Tensor>& inputs, std::string& error) {
  Flat out;
  for (size_t k = 0; k < inputs.size(); ++k) {
    if (!grads[k].defined()) {
      out.insert(out.end(), static_cast<size_t>(inputs[k].numel()), 0.0);
      continue;
    }
    if (grads[k].shape() != inputs[k].shape()) {
      error = "gradient of input " + std::to_string(k) + " has shape " + shape_str(grads[k].shape()) +
              " but the input has shape " + shape_str(inputs[k].shape());
    }
    const Flat g = grads[k].to_vector<double>();
    out.insert(out.end(), g.begin(), g.end());
  }
  return out;
}

// J[c] = dF/dx_c by central differences, c over the concatenated elements of all inputs.
std::vector<Flat> numerical_jacobian(const std::function<Flat()>& F, const std::vector<Tensor>& inputs, double eps) {
  std::vector<Flat> columns;
  for (const Tensor& x : inputs) {
    double* p = x.data_ptr<double>();
    for (int64_t j = 0; j < x.numel(); ++j) {
      const double orig = p[j];
      p[j] = orig + eps;
      const Flat plus = F();
      p[j] = orig - eps;
      const Flat minus = F();
      p[j] = orig;
      Flat col(plus.size());
      for (size_t r = 0; r < col.size(); ++r) col[r] = (plus[r] - minus[r]) / (2.0 * eps);
      columns.push_back(std::move(col));
    }
  }
  return columns;
}

// The probes u over `rows` outputs: every basis vector when few, else random vectors.
std::vector<Flat> probes(size_t rows, const GradcheckOptions& o, std::mt19937_64& rng) {
  std::vector<Flat> out;
  if (rows <= o.max_full_rows) {
    for (size_t r = 0; r < rows; ++r) {
      Flat e(rows, 0.0);
      e[r] = 1.0;
      out.push_back(std::move(e));
    }
  } else {
    for (size_t i = 0; i < o.random_probes; ++i) out.push_back(random_flat(rows, rng));
  }
  return out;
}

// Compares autograd's u^T J (analytic) with u^T J_num.
void compare(const Flat& u, const std::vector<Flat>& jac, const Flat& analytic, const GradcheckOptions& o,
             const char* what, CheckResult& result) {
  if (analytic.size() != jac.size()) {
    result.ok = false;
    result.detail = std::string(what) + ": analytic gradient has " + std::to_string(analytic.size()) +
                    " elements, expected " + std::to_string(jac.size());
    return;
  }
  for (size_t c = 0; c < jac.size(); ++c) {
    double numerical = 0.0;
    for (size_t r = 0; r < u.size(); ++r) numerical += u[r] * jac[c][r];
    const double d = std::abs(analytic[c] - numerical);
    if (!(d <= o.atol + o.rtol * std::abs(numerical))) {
      if (result.ok || d > result.max_abs_diff) {
        std::ostringstream os;
        os.precision(12);
        os << what << ": input element " << c << ": analytic " << analytic[c] << " vs numerical " << numerical;
        result.detail = os.str();
      }
      result.ok = false;
    }
    if (!(d <= result.max_abs_diff)) result.max_abs_diff = std::isnan(d) ? INFINITY : d;
  }
}

Flat eval_flat(const OpFn& f, const std::vector<Tensor>& inputs) {
  NoGradGuard no_grad;
  return f(inputs).to_vector<double>();
}

CheckResult fail(std::string why) {
  CheckResult r;
  r.ok = false;
  r.max_abs_diff = INFINITY;
  r.detail = std::move(why);
  return r;
}

}  // namespace

CheckResult gradcheck(const OpFn& f, const std::vector<Tensor>& inputs, const GradcheckOptions& o) {
  std::mt19937_64 rng(o.seed);
  const Tensor out = f(inputs);
  if (!out.requires_grad()) return fail("the output does not require grad");
  const auto jac = numerical_jacobian([&] { return eval_flat(f, inputs); }, inputs, o.eps);
  CheckResult result;
  for (const Flat& u : probes(static_cast<size_t>(out.numel()), o, rng)) {
    autograd::GradOptions go;
    go.retain_graph = true;
    go.allow_unused = true;
    std::string error;
    const Flat analytic = flatten_grads(autograd::grad({out}, inputs, {shaped_like(out, u)}, go), inputs, error);
    if (!error.empty()) return fail(error);
    compare(u, jac, analytic, o, "gradcheck", result);
  }
  return result;
}

CheckResult gradgradcheck(const OpFn& f, const std::vector<Tensor>& inputs, const GradcheckOptions& o) {
  std::mt19937_64 rng(o.seed ^ 0x9e3779b97f4a7c15ull);
  Flat v_values;
  {
    NoGradGuard no_grad;
    v_values = random_flat(static_cast<size_t>(f(inputs).numel()), rng);
  }
  // G(x) = J(x)^T v, first order only.
  auto first_order = [&](bool create_graph) {
    const Tensor out = f(inputs);
    autograd::GradOptions go;
    go.create_graph = create_graph;
    go.allow_unused = true;
    return autograd::grad({out}, inputs, {shaped_like(out, v_values)}, go);
  };
  std::string error;
  const auto jac = numerical_jacobian([&] { return flatten_grads(first_order(false), inputs, error); }, inputs, o.eps);
  if (!error.empty()) return fail(error);

  const std::vector<Tensor> g = first_order(true);
  // Gradients that carry no graph do not depend on x (a linear op): their derivative is zero.
  std::vector<size_t> differentiable;
  for (size_t k = 0; k < g.size(); ++k)
    if (g[k].defined() && g[k].requires_grad()) differentiable.push_back(k);

  CheckResult result;
  const size_t rows = total_numel(inputs);
  for (const Flat& w : probes(rows, o, rng)) {
    Flat analytic(rows, 0.0);
    if (!differentiable.empty()) {
      std::vector<Tensor> outs, ws;
      for (size_t k : differentiable) {
        size_t begin = 0;
        for (size_t i = 0; i < k; ++i) begin += static_cast<size_t>(inputs[i].numel());
        outs.push_back(g[k]);
        ws.push_back(shaped_like(g[k], Flat(w.begin() + begin, w.begin() + begin + inputs[k].numel())));
      }
      autograd::GradOptions go;
      go.retain_graph = true;
      go.allow_unused = true;
      analytic = flatten_grads(autograd::grad(outs, inputs, ws, go), inputs, error);
      if (!error.empty()) return fail(error);
    }
    compare(w, jac, analytic, o, "gradgradcheck", result);
  }
  return result;
}

CheckResult f32_matches_f64(const OpFn& f, const std::vector<Tensor>& inputs64, double tol, uint64_t seed) {
  std::vector<Tensor> inputs32;
  for (const Tensor& x : inputs64) inputs32.push_back(x.detach().to(DType::f32).requires_grad_());
  const Tensor out64 = f(inputs64), out32 = f(inputs32);
  CheckResult result;
  auto check = [&](const Tensor& a32, const Tensor& a64, const std::string& what) {
    if (a32.shape() != a64.shape()) {
      result.ok = false;
      result.max_abs_diff = INFINITY;
      result.detail = what + ": shape " + shape_str(a32.shape()) + " in float32 vs " + shape_str(a64.shape());
      return;
    }
    const Flat x = a32.to_vector<double>(), y = a64.to_vector<double>();
    for (size_t i = 0; i < x.size(); ++i) {
      const double d = std::abs(x[i] - y[i]);
      if (!(d <= tol * (1.0 + std::abs(y[i])))) {
        if (result.ok || d > result.max_abs_diff) {
          std::ostringstream os;
          os << what << " element " << i << ": float32 " << x[i] << " vs float64 " << y[i];
          result.detail = os.str();
        }
        result.ok = false;
      }
      if (!(d <= result.max_abs_diff)) result.max_abs_diff = std::isnan(d) ? INFINITY : d;
    }
  };
  check(out32, out64, "forward");
  std::mt19937_64 rng(seed);
  const Flat v = random_flat(static_cast<size_t>(out64.numel()), rng);
  autograd::GradOptions go;
  go.allow_unused = true;
  const auto g64 = autograd::grad({out64}, inputs64, {shaped_like(out64, v)}, go);
  const auto g32 = autograd::grad({out32}, inputs32, {shaped_like(out32, v)}, go);
  for (size_t k = 0; k < inputs64.size(); ++k) {
    if (g64[k].defined() != g32[k].defined()) {
      result.ok = false;
      result.detail = "gradient of input " + std::to_string(k) + " defined in one dtype only";
      continue;
    }
    if (!g64[k].defined()) continue;
    if (g32[k].dtype() != DType::f32) {
      result.ok = false;
      result.detail = "gradient of float32 input " + std::to_string(k) + " is " + dtype_name(g32[k].dtype());
    }
    check(g32[k], g64[k], "backward (input " + std::to_string(k) + ")");
  }
  return result;
}

}  // namespace tinyddp::test
