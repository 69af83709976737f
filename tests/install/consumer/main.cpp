// Built against an installed tinyddp (tests/install/check_install.cmake): the engine, autograd, nn and DDP
// over two thread ranks, through the umbrella header only. Exits non-zero on a wrong value.
#include <tinyddp/tinyddp.h>

#include <cmath>
#include <cstdio>

int main() {
  using namespace tinyddp;
  // d/dw sum(w * w) = 2w
  const Tensor w = ones({3}).requires_grad_();
  sum(w * w).backward();
  for (double g : w.grad().to_vector<double>()) {
    if (g != 2.0) {
      std::fprintf(stderr, "consumer: expected grad 2, got %g\n", g);
      return 1;
    }
  }
  // Two ranks, each y = x_r * p with its own x_r = r + 1 and loss y: DDP averages dL/dp = x_r to 1.5.
  double averaged[2] = {0, 0};
  const auto errors = dist::ThreadWorld::run(2, [&](dist::ProcessGroup& pg) {
    const Tensor p = ones({1}).requires_grad_();
    const std::shared_ptr<dist::ProcessGroup> group(&pg, [](dist::ProcessGroup*) {});   // run() owns pg
    dist::DistributedDataParallel ddp({{"p", p}}, group);
    const double x = pg.rank() + 1.0;
    auto out = ddp.forward([&] { return std::vector<Tensor>{p * x}; });
    sum(out[0]).backward();
    averaged[pg.rank()] = p.grad().item<double>();
  });
  for (const auto& e : errors) {
    if (e) {
      std::fprintf(stderr, "consumer: a rank failed\n");
      return 1;
    }
  }
  if (averaged[0] != 1.5 || averaged[1] != 1.5) {
    std::fprintf(stderr, "consumer: expected the averaged gradient 1.5 on both ranks, got %g and %g\n", averaged[0],
                 averaged[1]);
    return 1;
  }
  std::printf("consumer: tinyddp %s works (grad 2, DDP average 1.5)\n", TINYDDP_VERSION);
  return 0;
}
