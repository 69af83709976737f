#include "dist/collectives.h"

#include <algorithm>
#include <functional>
#include <sstream>

#include "dist/combine.h"
#include "engine/autograd/grad_mode.h"

namespace tinyddp::dist {

namespace {

// The backend's Work, then this rank's local part, once.
class FinishWork : public Work {
 public:
  FinishWork(std::shared_ptr<Work> inner, std::function<void()> finish)
      : inner_(std::move(inner)), finish_(std::move(finish)) {}
  void wait() override {
    inner_->wait();
    run_finish();
  }
  bool is_completed() override {
    if (!inner_->is_completed()) return false;
    run_finish();
    return true;
  }

 private:
  void run_finish() {
    if (!finish_) return;
    auto f = std::move(finish_);
    finish_ = nullptr;
    f();
  }
  std::shared_ptr<Work> inner_;
  std::function<void()> finish_;
};

std::string describe(const Tensor& t) {
  std::ostringstream os;
  os << dtype_name(t.dtype()) << "[" << t.numel() << "]";
  return os.str();
}

void check_rank(const char* collective, const char* name, int rank, int size) {
  TINYDDP_CHECK(rank >= 0 && rank < size, collective, ": ", name, " ", rank, " is not a rank of a group of size ", size,
                ".");
}

// Every tensor of `tensors` with `like`'s numel and dtype; `what` names the list in the error.
void check_like(const char* collective, const char* what, const std::vector<Tensor>& tensors, const Tensor& like) {
  for (size_t i = 0; i < tensors.size(); ++i)
    TINYDDP_CHECK(tensors[i].numel() == like.numel() && tensors[i].dtype() == like.dtype(), collective, ": ", what,
                  "[", i, "] is ", describe(tensors[i]), " but must match ", describe(like), ".");
}

void check_count(const char* collective, const char* what, const std::vector<Tensor>& tensors, int size) {
  TINYDDP_CHECK(static_cast<int>(tensors.size()) == size, collective, ": expected one tensor in ", what,
                " per rank (", size, ") but got ", tensors.size(), ".");
}

// dst's elements [offset, offset + src.numel()) of a flat tensor = src (any device; not recorded by autograd).
void copy_in(Tensor& flat, int64_t offset, const Tensor& src) {
  if (src.numel() == 0) return;
  NoGradGuard no_grad;
  flat.narrow(0, offset, src.numel()).copy_(src.reshape({src.numel()}));
}

// dst = the flat tensor's elements [offset, offset + dst.numel()).
void copy_out(Tensor& dst, const Tensor& flat, int64_t offset) {
  if (dst.numel() == 0) return;
  NoGradGuard no_grad;
  dst.copy_(flat.narrow(0, offset, dst.numel()).reshape(dst.shape()));
}

// Note [What reduce leaves elsewhere]
// 1.13's gloo reduce (measured with tests/golden/gen_dist_collectives.py, 2 and 3 ranks) is a ring: the tensor is
// cut into n chunks of S = 2 * ceil(numel / 2n) elements (the last ones shorter or empty), and afterwards
// non-destination rank r holds, in chunk c, op over the ranks r, r+1, ..., c-1 (mod n): every rank when c == r,
// itself alone when c == r+1. That is what it leaves, and what this reduce leaves too, so that a script printing
// a non-destination tensor prints what it prints with gloo. Each such partial, and dst's full result, is folded
// in ascending rank order (allreduce's order, bitwise deterministic); gloo's ring order can round differently in
// the last bit for three or more float ranks.
template <typename T>
void fold(T* out, const std::vector<Tensor>& all, int rank, int dst, ReduceOp op) {
  const int n = static_cast<int>(all.size());
  const int64_t count = all[0].numel();
  const int64_t chunk = 2 * ((count + 2 * n - 1) / (2 * n));
  std::vector<const T*> in;
  for (const Tensor& t : all) in.push_back(static_cast<const T*>(t.raw_data()));
  for (int c = 0; c < n; ++c) {
    const int64_t begin = std::min(count, c * chunk), end = std::min(count, begin + chunk);
    // The ranks in this chunk's partial: r, r+1, ..., c-1 (mod n); all of them on dst.
    int k = ((c - rank) % n + n) % n;
    if (k == 0 || rank == dst) k = n;
    std::vector<bool> member(n, false);
    for (int j = 0; j < k; ++j) member[(rank + j) % n] = true;
    for (int64_t i = begin; i < end; ++i) {
      bool first = true;
      T acc{};
      for (int r = 0; r < n; ++r) {
        if (!member[r]) continue;
        acc = first ? in[r][i] : combine(acc, in[r][i], op);
        first = false;
      }
      out[i] = acc;
    }
  }
}

}  // namespace

std::shared_ptr<Work> reduce(ProcessGroup& pg, Tensor tensor, int dst, ReduceOp op) {
  check_collective_tensors({tensor}, "reduce");
  check_rank("reduce", "dst", dst, pg.size());
  // A device buffer is reduced in place on every rank: the non-destination values are the full result there,
  // not gloo's partials (NCCL leaves them unspecified too).
  if (!tensor.device().is_cpu()) return pg.allreduce({tensor}, op);
  std::vector<Tensor> all;
  for (int r = 0; r < pg.size(); ++r) all.push_back(empty({tensor.numel()}, tensor.dtype()));
  auto work = pg.allgather(all, tensor);
  return std::make_shared<FinishWork>(work, [tensor, all = std::move(all), rank = pg.rank(), dst, op] {
    dispatch_numeric(tensor.dtype(), "reduce", [&]<typename T>() {
      fold<T>(static_cast<T*>(tensor.raw_data()), all, rank, dst, op);
    });
  });
}

std::shared_ptr<Work> gather(ProcessGroup& pg, Tensor input, std::vector<Tensor> outputs, int dst) {
  check_collective_tensors({input}, "gather");
  check_rank("gather", "dst", dst, pg.size());
  if (pg.rank() != dst) {
    TINYDDP_CHECK(outputs.empty(), "gather: only the destination rank ", dst, " passes output tensors; rank ",
                  pg.rank(), " passed ", outputs.size(), ".");
    for (int r = 0; r < pg.size(); ++r) outputs.push_back(empty({input.numel()}, input.dtype(), input.device()));
    return pg.allgather(std::move(outputs), input);
  }
  check_count("gather", "outputs", outputs, pg.size());
  check_like("gather", "outputs", outputs, input);
  check_collective_tensors(outputs, "gather");
  return pg.allgather(std::move(outputs), input);
}

std::shared_ptr<Work> scatter(ProcessGroup& pg, Tensor output, std::vector<Tensor> inputs, int src) {
  check_collective_tensors({output}, "scatter");
  check_rank("scatter", "src", src, pg.size());
  const int64_t m = output.numel();
  Tensor staging = empty({m * pg.size()}, output.dtype(), output.device());
  if (pg.rank() == src) {
    check_count("scatter", "inputs", inputs, pg.size());
    check_like("scatter", "inputs", inputs, output);
    for (int r = 0; r < pg.size(); ++r) copy_in(staging, r * m, inputs[r]);
  } else {
    TINYDDP_CHECK(inputs.empty(), "scatter: only the source rank ", src, " passes input tensors; rank ", pg.rank(),
                  " passed ", inputs.size(), ".");
  }
  auto work = pg.broadcast({staging}, src);
  return std::make_shared<FinishWork>(work, [output, staging, offset = pg.rank() * m]() mutable {
    copy_out(output, staging, offset);
  });
}

std::shared_ptr<Work> reduce_scatter(ProcessGroup& pg, Tensor output, std::vector<Tensor> inputs, ReduceOp op) {
  check_collective_tensors({output}, "reduce_scatter");
  check_count("reduce_scatter", "inputs", inputs, pg.size());
  check_like("reduce_scatter", "inputs", inputs, output);
  const int64_t m = output.numel();
  Tensor staging = empty({m * pg.size()}, output.dtype(), output.device());
  for (int r = 0; r < pg.size(); ++r) copy_in(staging, r * m, inputs[r]);
  auto work = pg.allreduce({staging}, op);   // sums in the backend's order (the thread backend: rank order)
  return std::make_shared<FinishWork>(work, [output, staging, offset = pg.rank() * m]() mutable {
    copy_out(output, staging, offset);
  });
}

std::shared_ptr<Work> alltoall(ProcessGroup& pg, std::vector<Tensor> outputs, std::vector<Tensor> inputs) {
  const int n = pg.size();
  check_count("alltoall", "outputs", outputs, n);
  check_count("alltoall", "inputs", inputs, n);
  check_collective_tensors(inputs, "alltoall");
  for (const Tensor& o : outputs)
    TINYDDP_CHECK(o.defined() && o.dtype() == inputs[0].dtype(), "alltoall: every output must be ",
                  dtype_name(inputs[0].dtype()), " like the inputs, got ", o.defined() ? dtype_name(o.dtype()) : "undefined",
                  ".");
  // Inputs may differ in size (rank i's inputs[j] has rank j's outputs[i] numel), so every rank pads its n
  // inputs to one slot size agreed first: the largest input on any rank.
  int64_t mine = 0;
  for (const Tensor& t : inputs) mine = std::max(mine, t.numel());
  std::vector<Tensor> slots;
  for (int r = 0; r < n; ++r) slots.push_back(zeros({1}, DType::i64));
  pg.allgather(slots, full({1}, static_cast<double>(mine), DType::i64))->wait();
  int64_t slot = 0;
  for (const Tensor& s : slots) slot = std::max(slot, s.item<int64_t>());
  Tensor staging = zeros({slot * n}, inputs[0].dtype(), inputs[0].device());
  for (int r = 0; r < n; ++r) copy_in(staging, r * slot, inputs[r]);
  std::vector<Tensor> all;
  for (int r = 0; r < n; ++r) all.push_back(empty({slot * n}, staging.dtype(), staging.device()));
  auto work = pg.allgather(all, staging);
  return std::make_shared<FinishWork>(work, [outputs = std::move(outputs), all = std::move(all), slot,
                                             rank = pg.rank()]() mutable {
    for (size_t r = 0; r < outputs.size(); ++r) {
      TINYDDP_CHECK(outputs[r].numel() <= slot, "alltoall: outputs[", r, "] has ", outputs[r].numel(),
                    " elements but no rank sent more than ", slot, "; outputs[r] must match rank r's inputs[",
                    rank, "].");
      copy_out(outputs[r], all[r], static_cast<int64_t>(rank) * slot);
    }
  });
}

}  // namespace tinyddp::dist
