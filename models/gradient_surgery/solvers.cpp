#include "models/gradient_surgery/solvers.h"

#include <cmath>
#include <utility>

#include "engine/tinyddp.h"

namespace tinyddp::models::surgery {

namespace {

// splitmix64 (Steele, Lea, Flood 2014): a counter-based stream, the same bits on every platform.
uint64_t splitmix64(uint64_t& state) {
  uint64_t z = (state += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

double dot(const std::vector<double>& a, const std::vector<double>& b) {
  double s = 0.0;
  for (size_t k = 0; k < a.size(); ++k) s += a[k] * b[k];
  return s;
}

}  // namespace

std::vector<int> pcgrad_order(int num_tasks, int task, uint64_t seed, int64_t step) {
  TINYDDP_INTERNAL_ASSERT(task >= 0 && task < num_tasks);
  std::vector<int> others;
  for (int j = 0; j < num_tasks; ++j)
    if (j != task) others.push_back(j);
  // Key the stream by (seed, step, task): one splitmix64 draw per component mixes them.
  uint64_t state = seed;
  state ^= splitmix64(state) + static_cast<uint64_t>(step);
  state ^= splitmix64(state) + static_cast<uint64_t>(task);
  for (size_t k = others.size(); k > 1; --k) {
    const size_t j = static_cast<size_t>(splitmix64(state) % k);   // modulo bias is < k / 2^64: immaterial
    std::swap(others[k - 1], others[j]);
  }
  return others;
}

PCGradResult pcgrad(const std::vector<std::vector<double>>& task_grads, const std::vector<std::vector<int>>& orders) {
  const size_t T = task_grads.size();
  TINYDDP_INTERNAL_ASSERT(T >= 1 && orders.size() == T);
  const size_t P = task_grads[0].size();
  std::vector<double> sq_norms(T);
  for (size_t j = 0; j < T; ++j) {
    TINYDDP_INTERNAL_ASSERT(task_grads[j].size() == P);
    sq_norms[j] = dot(task_grads[j], task_grads[j]);
  }
  PCGradResult out;
  out.projected = task_grads;
  out.combined.assign(P, 0.0);
  for (size_t i = 0; i < T; ++i) {
    std::vector<double>& g = out.projected[i];
    for (int j : orders[i]) {
      TINYDDP_INTERNAL_ASSERT(j >= 0 && static_cast<size_t>(j) < T && static_cast<size_t>(j) != i);
      const double d = dot(g, task_grads[j]);
      if (!(d < 0.0) || !(sq_norms[j] > 0.0)) continue;
      const double c = d / sq_norms[j];
      for (size_t k = 0; k < P; ++k) g[k] -= c * task_grads[j][k];
      ++out.projections;
    }
    for (size_t k = 0; k < P; ++k) out.combined[k] += g[k];
  }
  return out;
}

double min_norm_line(double uu, double uv, double vv) {
  if (uv >= uu) return 1.0;   // u itself is the closest point to the origin on the segment
  if (uv >= vv) return 0.0;   // v is
  return (vv - uv) / (uu + vv - 2.0 * uv);
}

MinNormResult min_norm_frank_wolfe(const std::vector<std::vector<double>>& gram, int max_iterations, double stop_change) {
  const size_t T = gram.size();
  TINYDDP_INTERNAL_ASSERT(T >= 1);
  MinNormResult out;
  out.alpha.assign(T, 1.0 / static_cast<double>(T));
  if (T == 1) return out;
  for (int it = 0; it < max_iterations; ++it) {
    std::vector<double> m_alpha(T, 0.0);   // (M alpha)_r = <g_r, theta>, theta = sum_i alpha_i g_i
    for (size_t r = 0; r < T; ++r)
      for (size_t i = 0; i < T; ++i) m_alpha[r] += gram[r][i] * out.alpha[i];
    size_t t = 0;
    for (size_t r = 1; r < T; ++r)
      if (m_alpha[r] < m_alpha[t]) t = r;
    double theta_sq = 0.0;                 // ||theta||^2 = alpha^T M alpha
    for (size_t i = 0; i < T; ++i) theta_sq += out.alpha[i] * m_alpha[i];
    // The segment from theta (gamma = 0) to g_t (gamma = 1).
    const double gamma = min_norm_line(gram[t][t], m_alpha[t], theta_sq);
    ++out.iterations;
    double change = 0.0;   // ||alpha_new - alpha||_1 = gamma ||e_t - alpha||_1
    for (size_t i = 0; i < T; ++i) change += std::abs((i == t ? 1.0 : 0.0) - out.alpha[i]);
    change *= gamma;
    for (size_t i = 0; i < T; ++i) out.alpha[i] *= 1.0 - gamma;
    out.alpha[t] += gamma;
    if (change < stop_change) break;
  }
  return out;
}

std::vector<double> gram_cosines(const std::vector<std::vector<double>>& gram) {
  std::vector<double> out;
  for (size_t i = 0; i < gram.size(); ++i)
    for (size_t j = i + 1; j < gram.size(); ++j) {
      const double n = std::sqrt(gram[i][i] * gram[j][j]);
      out.push_back(n > 0.0 ? gram[i][j] / n : 0.0);
    }
  return out;
}

}  // namespace tinyddp::models::surgery
