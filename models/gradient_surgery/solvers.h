// The arithmetic of gradient surgery on flat f64 vectors: PCGrad's projections (Yu et al. 2020,
// Algorithm 1) and MGDA's min-norm solver (Sener & Koltun 2018, Algorithms 1 and 2). No tensors, no
// autograd, no communication: the strategies (pcgrad.h, mgda.h) gather the per-task gradients, average
// them over ranks and call these, so every rank runs the same floating-point operations on the same bits.
//
// Legend: T = tasks, P = elements of the flattened shared gradient, g_i = task i's gradient (P),
// M = the T x T Gram matrix M_ij = <g_i, g_j>.
#pragma once

#include <cstdint>
#include <vector>

namespace tinyddp::models::surgery {

// PCGrad's order of the other tasks for task i at `step`: a permutation of {0..T-1} \ {i} drawn by a
// Fisher-Yates shuffle from a splitmix64 stream keyed by (seed, step, i). A pure function, so every rank
// draws the same orders without communicating (the paper's "in random order"; public code calls
// random.shuffle, whose state differs per process unless seeded alike).
std::vector<int> pcgrad_order(int num_tasks, int task, uint64_t seed, int64_t step);

struct PCGradResult {
  std::vector<double> combined;        // sum_i g_i^PC, (P)
  std::vector<std::vector<double>> projected;   // g_i^PC, (T, P)
  int projections = 0;                 // ordered pairs (i, j) where g_i^PC conflicted with g_j and was projected
};

// Algorithm 1: for each task i, g_i^PC = g_i; for j in orders[i]: if <g_i^PC, g_j> < 0,
// g_i^PC -= <g_i^PC, g_j> / ||g_j||^2 g_j (the originals g_j, never the projected ones); then sum. A zero g_j
// never projects (it conflicts with nothing). orders[i] lists the tasks i is projected against, in order.
PCGradResult pcgrad(const std::vector<std::vector<double>>& task_grads, const std::vector<std::vector<int>>& orders);

// Algorithm 1 of Sener & Koltun: gamma in [0, 1] minimizing ||gamma u + (1 - gamma) v||^2, from
// uu = <u, u>, uv = <u, v>, vv = <v, v>.
double min_norm_line(double uu, double uv, double vv);

struct MinNormResult {
  std::vector<double> alpha;   // (T), >= 0, sum 1: the min-norm point sum_i alpha_i g_i of the convex hull
  int iterations = 0;          // Frank-Wolfe iterations run
};

// Algorithm 2 (Frank-Wolfe) on the Gram matrix: alpha = 1/T; repeat: t = argmin_r (M alpha)_r (lowest index
// on ties), gamma = min_norm_line(e_t, alpha), alpha = (1 - gamma) alpha + gamma e_t; stop when alpha moved
// by less than stop_change (L1) or after max_iterations (250 and 1e-5: the constants of the authors' public
// MinNormSolver). T = 1 gives alpha = (1). M may be scaled by any positive factor: alpha does not change.
MinNormResult min_norm_frank_wolfe(const std::vector<std::vector<double>>& gram, int max_iterations = 250,
                                   double stop_change = 1e-5);

// cos(g_i, g_j) from a Gram matrix, pairs i < j in row-major order; 0 where a norm is 0.
std::vector<double> gram_cosines(const std::vector<std::vector<double>>& gram);

}  // namespace tinyddp::models::surgery
