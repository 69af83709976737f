// bench_python_step: the C++ half of bench/python_step.py. The MLP 784-256-10 SGD step that the Python
// script drives through tinyddp's binding, written against the same C++ objects the binding forwards to
// (models/nn's Linear, the engine's relu and cross_entropy, models/optim's SGD, Tensor::backward), so that
// python_step.py's ratio Python/C++ is the cost of the Python layer alone.
//
//   bench_python_step WEIGHTS check STEPS   # prints the loss before each of STEPS steps, one per line (%.9g)
//   bench_python_step WEIGHTS time STEPS    # 10 warm-up steps, then prints the mean seconds per step of STEPS
//
// WEIGHTS: raw little-endian arrays, back to back: x f32 (B, D), y i64 (B), w1 f32 (H, D), b1 f32 (H),
// w2 f32 (C, H), b2 f32 (C), with B = 64, D = 784, H = 256, C = 10 (python_step.py writes it).
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include "engine/tinyddp.h"
#include "models/nn/nn.h"
#include "models/optim/sgd.h"

namespace {

using namespace tinyddp;
constexpr int64_t kBatch = 64, kIn = 784, kHidden = 256, kClasses = 10;
constexpr double kLearningRate = 0.01;   // bench_autograd's: the loss decreases at every step on this batch

template <typename T>
std::vector<T> read(std::ifstream& in, int64_t n) {
  std::vector<T> v(static_cast<size_t>(n));
  in.read(reinterpret_cast<char*>(v.data()), static_cast<std::streamsize>(n * sizeof(T)));
  TINYDDP_CHECK(in.good(), "bench_python_step: the weights file is shorter than expected (", n, " more values of ",
                sizeof(T), " bytes); write it with bench/python_step.py.");
  return v;
}

struct Step {
  Tensor x, y;
  nn::Linear fc1{kIn, kHidden}, fc2{kHidden, kClasses};
  std::unique_ptr<optim::SGD> opt;

  explicit Step(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    TINYDDP_CHECK(in.is_open(), "bench_python_step: cannot open ", path, ".");
    x = from_vector(read<float>(in, kBatch * kIn), {kBatch, kIn});
    y = from_vector(read<int64_t>(in, kBatch), {kBatch});
    NoGradGuard no_grad;
    Tensor w1 = fc1.weight(), b1 = fc1.bias(), w2 = fc2.weight(), b2 = fc2.bias();
    w1.copy_(from_vector(read<float>(in, kHidden * kIn), {kHidden, kIn}));
    b1.copy_(from_vector(read<float>(in, kHidden), {kHidden}));
    w2.copy_(from_vector(read<float>(in, kClasses * kHidden), {kClasses, kHidden}));
    b2.copy_(from_vector(read<float>(in, kClasses), {kClasses}));
    opt = std::make_unique<optim::SGD>(std::vector<Tensor>{w1, b1, w2, b2}, optim::SGDOptions{.lr = kLearningRate});
  }

  // python_step.py's step: zero_grad(set_to_none=True), forward, backward, step; returns the loss tensor.
  Tensor run() {
    opt->zero_grad(/*set_to_none=*/true);
    Tensor loss = cross_entropy(fc2.forward(relu(fc1.forward(x))), y);
    loss.backward();
    opt->step();
    return loss;
  }
};

}  // namespace

int main(int argc, char** argv) {
  if (argc != 4) {
    std::fprintf(stderr, "usage: %s WEIGHTS check|time STEPS (see bench/python_step.py)\n", argv[0]);
    return 2;
  }
  Step step(argv[1]);
  const std::string mode = argv[2];
  const int steps = std::atoi(argv[3]);
  if (mode == "check") {
    for (int i = 0; i < steps; ++i) std::printf("%.9g\n", step.run().item());
    return 0;
  }
  for (int i = 0; i < 10; ++i) step.run();
  const auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < steps; ++i) step.run();
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::printf("%.9g\n", s / steps);
  return 0;
}
