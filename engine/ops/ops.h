// Every tensor op of the engine. Each op lives in one place: its forward calls a kernel (kernels/cpu), and
// its backward rule, right next to it, is written with these same ops, so every op can be differentiated
// again (create_graph), to any order. Binary ops broadcast by NumPy rules; undoing a broadcast in a
// backward is one helper, sum_to().
//
// Files: elementwise.cpp (arithmetic, activations), reduce.cpp (sum, mean, max, log_softmax),
// linalg.cpp (matmul, addmm), shape.cpp (views, cat, copies), loss.cpp (mse, cross-entropy),
// inplace.cpp (add_, mul_, fill_, copy_), random.cpp (seeded RNG), normalization.cpp (batch_norm,
// layer_norm), index.cpp (embedding, where), advanced_index.cpp (index, index_put).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "engine/core/promotion.h"
#include "engine/core/tensor.h"

namespace tinyddp {

// ---- elementwise (broadcasting) ----
// add, sub, mul, div and pow(tensor, tensor) take any two dtypes and compute in PyTorch's promoted dtype
// (engine/core/promotion.h; integer division gives float32); int64 and bool results are exact and never require
// grad. The float functions (exp, log, sqrt, tanh, sigmoid) compute int64 and bool inputs in float32.
Tensor add(const Tensor& a, const Tensor& b);
Tensor sub(const Tensor& a, const Tensor& b);
Tensor mul(const Tensor& a, const Tensor& b);
Tensor div(const Tensor& a, const Tensor& b);
Tensor add(const Tensor& a, double b);
Tensor mul(const Tensor& a, double b);
Tensor neg(const Tensor& x);
Tensor pow(const Tensor& x, double exponent);         // an int64 or bool x: float32, as x ** 2.0
Tensor pow_integer(const Tensor& x, int64_t exponent);   // x ** 2: int64 for an int64 or bool x, exact
Tensor pow(const Tensor& base, const Tensor& exponent);  // promoted; int64 ** int64 exact (exponents >= 0)
Tensor exp(const Tensor& x);
Tensor log(const Tensor& x);
Tensor sqrt(const Tensor& x);
Tensor abs(const Tensor& x);   // also int64 (exact); not bool, as PyTorch
Tensor relu(const Tensor& x);
Tensor tanh(const Tensor& x);
Tensor sigmoid(const Tensor& x);
Tensor erf(const Tensor& x);
Tensor clamp(const Tensor& x, double min, double max);
// sin, cos, log1p (log(1 + x)) and expm1 (exp(x) - 1), accurate near 0: floating (integers in float32).
Tensor sin(const Tensor& x);
Tensor cos(const Tensor& x);
Tensor log1p(const Tensor& x);
Tensor expm1(const Tensor& x);
// To an integer value, in x's dtype (an int64 x is copied, as 1.13); round's halves go to even. Their
// gradient is 0 everywhere, as PyTorch's FloorBackward0 ... give.
Tensor floor(const Tensor& x);
Tensor ceil(const Tensor& x);
Tensor trunc(const Tensor& x);
Tensor round(const Tensor& x);

// Not differentiable (their result never requires grad): masks and signs as 0/1 (or -1/0/1) tensors of
// the input's dtype, used by backward rules.
Tensor sign(const Tensor& x);
Tensor gt_mask(const Tensor& x, double threshold);
Tensor in_range(const Tensor& x, double min, double max);
Tensor eq_mask(const Tensor& a, const Tensor& b);

// Comparisons (broadcasting; the operands compared in the dtype PyTorch would promote them to): bool
// tensors, never requiring grad.
Tensor eq(const Tensor& a, const Tensor& b);
Tensor ne(const Tensor& a, const Tensor& b);
Tensor lt(const Tensor& a, const Tensor& b);
Tensor le(const Tensor& a, const Tensor& b);
Tensor gt(const Tensor& a, const Tensor& b);
Tensor ge(const Tensor& a, const Tensor& b);
// Logical ops on bool tensors (broadcasting).
Tensor logical_not(const Tensor& x);
Tensor logical_and(const Tensor& a, const Tensor& b);
Tensor logical_or(const Tensor& a, const Tensor& b);
Tensor logical_xor(const Tensor& a, const Tensor& b);

Tensor operator+(const Tensor& a, const Tensor& b);
Tensor operator-(const Tensor& a, const Tensor& b);
Tensor operator*(const Tensor& a, const Tensor& b);
Tensor operator/(const Tensor& a, const Tensor& b);
Tensor operator+(const Tensor& a, double b);
Tensor operator+(double a, const Tensor& b);
Tensor operator-(const Tensor& a, double b);
Tensor operator-(double a, const Tensor& b);
Tensor operator*(const Tensor& a, double b);
Tensor operator*(double a, const Tensor& b);
Tensor operator/(const Tensor& a, double b);
Tensor operator/(double a, const Tensor& b);

// ---- reductions ----
// sum of an int64 or bool tensor is int64 (bool counts the trues), as PyTorch's; not differentiable.
Tensor sum(const Tensor& x);                                          // all elements -> shape []
Tensor sum(const Tensor& x, const std::vector<int64_t>& dims, bool keepdim = false);
Tensor mean(const Tensor& x);
Tensor mean(const Tensor& x, const std::vector<int64_t>& dims, bool keepdim = false);
Tensor max(const Tensor& x);                                          // the largest element -> shape []
struct MaxResult {
  Tensor values;    // differentiable
  Tensor indices;   // int64
};
MaxResult max(const Tensor& x, int64_t dim, bool keepdim = false);
// The indices (int64) 1.13's CPU kernels order each line along dim by, equal values included (order.cpp, Note [Why
// the order of equal elements needs 1.13's algorithms]); host computations without gradient. sort: x's shape;
// topk: dim's size k; kthvalue and mode: dim's size 1 (the k-th smallest, the most frequent value's index).
Tensor sort_indices(const Tensor& x, int64_t dim, bool descending, bool stable);
Tensor topk_indices(const Tensor& x, int64_t k, int64_t dim, bool largest, bool sorted);
Tensor kthvalue_indices(const Tensor& x, int64_t k, int64_t dim);
Tensor mode_indices(const Tensor& x, int64_t dim);
Tensor log_softmax(const Tensor& x, int64_t dim);
Tensor softmax(const Tensor& x, int64_t dim);
// Sums `grad` down to `shape`: undoes NumPy broadcasting (the one place backward rules do so).
Tensor sum_to(const Tensor& grad, const Shape& shape);

// ---- linear algebra ----
Tensor matmul(const Tensor& a, const Tensor& b);   // 1-D, 2-D and batched (batch dims broadcast)
Tensor mm(const Tensor& a, const Tensor& b);       // (m, k) @ (k, n)
Tensor addmm(const Tensor& bias, const Tensor& a, const Tensor& b);   // bias + a @ b, bias broadcast
// matmul and F.linear (bias may be undefined) with the nodes 1.13 records for each operand shape (matmul_forms.cpp):
// DotBackward0, MvBackward0, SqueezeBackward3 over MmBackward0 for a 1-D row, UnsafeViewBackward0 over
// MmBackward0 for a batch folded into rows and over BmmBackward0 for batches; linear's AddmmBackward0, and
// ViewBackward0 over it for a contiguous 3-D input. The values are matmul's (and addmm's), bitwise.
Tensor pytorch_matmul(const Tensor& a, const Tensor& b);
Tensor linear(const Tensor& x, const Tensor& weight, const Tensor& bias);

// ---- shape and copies ----
Tensor reshape(const Tensor& x, const Shape& shape);   // a view when possible, else a copy; one dim may be -1
Tensor view(const Tensor& x, const Shape& shape);      // always a view; needs a contiguous tensor
Tensor unsafe_view(const Tensor& fresh, const Shape& shape);   // 1.13's _unsafe_view: not a view (no base)
Tensor transpose(const Tensor& x, int64_t dim0, int64_t dim1);
Tensor t(const Tensor& x);                              // transpose of a 2-D tensor
Tensor permute(const Tensor& x, const std::vector<int64_t>& dims);   // dim i of the result is dim dims[i] of x
Tensor narrow(const Tensor& x, int64_t dim, int64_t start, int64_t length);
// x[..., start:end:step, ...] (a view; negative start/end count from the back, both clamped into the dim; step > 0,
// else ValueError "step must be greater than zero"). SliceBackward0, as narrow.
Tensor slice(const Tensor& x, int64_t dim, int64_t start, int64_t end, int64_t step = 1);
Tensor select(const Tensor& x, int64_t dim, int64_t index);   // x[..., index, ...]: a view without dim
// The elements (i, i + offset) of dims dim1 and dim2 as a new last dim: a view (DiagonalBackward0).
Tensor diagonal(const Tensor& x, int64_t offset = 0, int64_t dim1 = 0, int64_t dim2 = 1);
// The windows of `size` elements every `step` along dim as a new last dim: a view (UnfoldBackward0).
Tensor unfold(const Tensor& x, int64_t dim, int64_t size, int64_t step);
// A view of x's storage with these sizes, strides and storage offset (x's by default): AsStridedBackward0, whose
// gradient tinyddp computes for a contiguous x the view stays within.
Tensor as_strided(const Tensor& x, const Shape& shape, const Shape& strides,
                  std::optional<int64_t> storage_offset = std::nullopt);
Tensor alias(const Tensor& x);                                // a view of all of x (x[...])
Tensor expand(const Tensor& x, const Shape& shape);    // broadcast to shape without copying (stride 0)
Tensor unsqueeze(const Tensor& x, int64_t dim);
Tensor squeeze(const Tensor& x, std::optional<int64_t> dim = std::nullopt);   // every size-1 dim, or only dim
Tensor stack(const std::vector<Tensor>& tensors, int64_t dim);   // along a new dim; every tensor of one shape
// Views of consecutive pieces along dim, one node for all of them as 1.13's: pieces of split_size (the last one
// smaller; SplitBackward0), of the given sizes (SplitWithSizesBackward0), or every index (unbind, without dim).
std::vector<Tensor> split(const Tensor& x, int64_t split_size, int64_t dim = 0);
std::vector<Tensor> split_with_sizes(const Tensor& x, const std::vector<int64_t>& sizes, int64_t dim = 0);
std::vector<Tensor> unbind(const Tensor& x, int64_t dim = 0);
Tensor cat(const std::vector<Tensor>& tensors, int64_t dim);
Tensor clone(const Tensor& x);                          // a contiguous copy, differentiable
Tensor to_dtype(const Tensor& x, DType dtype);
// A copy on `device` (differentiable: the gradient is copied back); x itself when it is already there.
Tensor to_device(const Tensor& x, Device device);
Tensor one_hot(const Tensor& indices, int64_t num_classes, DType dtype = DType::f32);

// ---- losses (mean reduction, as PyTorch's defaults) ----
Tensor mse_loss(const Tensor& input, const Tensor& target);
Tensor cross_entropy(const Tensor& logits, const Tensor& target);   // logits (N, C), target (N,) int64
Tensor nll_loss(const Tensor& log_probs, const Tensor& target);     // cross_entropy after its log_softmax
// The value (no history) of nll_loss's sum or mean over picked, weighted row losses, in 1.13's order.
Tensor nll_reduce(const Tensor& row_losses, const Tensor& row_weights, const Tensor& valid, bool weighted, bool mean);

// ---- normalization (normalization.cpp) and indexing (index.cpp) ----
// PyTorch's native_batch_norm: input (N, C, *) normalized per channel (dim 1); weight, bias, running_mean and
// running_var (C) or undefined (no affine transform, no running stats). Training uses the batch's mean and
// biased variance and, when the running stats are defined, updates them in place without bumping their
// versions, as 1.13: running = (1 - momentum) * running + momentum * stat, the variance unbiased (n / (n - 1)).
// Evaluation uses the running stats. One node, NativeBatchNormBackward0, saving what 1.13's saves.
Tensor batch_norm(const Tensor& input, const Tensor& weight, const Tensor& bias, const Tensor& running_mean,
                  const Tensor& running_var, bool training, double momentum, double eps);
// PyTorch's native_layer_norm: each row of the trailing normalized_shape dims of input normalized with its own
// mean and biased variance, then * weight + bias (of normalized_shape, or undefined). NativeLayerNormBackward0.
Tensor layer_norm(const Tensor& input, const Shape& normalized_shape, const Tensor& weight, const Tensor& bias,
                  double eps);
// weight (V, D), indices int64 of any shape: the rows weight[indices], of shape indices.shape + (D).
// IndexError "index out of range in self" outside [0, V). EmbeddingBackward0 (a scatter-add into (V, D)).
Tensor embedding(const Tensor& weight, const Tensor& indices);
// ---- advanced indexing (advanced_index.cpp), PyTorch's at::index and index_put_ ----
// `indices` holds one tensor per leading dim of x, undefined for a dim taken whole (PyTorch's Tensor?[]): int64
// (negative entries count from the back) or bool masks (a k-dim mask stands for the coordinates of its true elements
// and takes k dims). They broadcast together to P; x's indexed dims give way to P's dims, in place when the indexed
// dims are adjacent, at the front otherwise. 1.13's IndexError texts: "too many indices for tensor of dimension 2
// (got 3)", "tensors used as indices must be long, byte or bool tensors", "The shape of the mask [3] at index 0 does
// not match ...", "shape mismatch: indexing tensors could not be broadcast together with shapes [2], [3]", "index 5
// is out of bounds for dimension 0 with size 4" (the k-th indexed dim is "dimension k", as 1.13's kernel says).
// IndexBackward0: the gradient summed into the picked positions (an accumulating index_put).
Tensor index(const Tensor& x, const std::vector<Tensor>& indices);
// x with x[indices] = values (or += with accumulate), values of x's dtype broadcast to x[indices]'s shape (RuntimeError
// "shape mismatch: value tensor of shape ..." / "Index put requires the source and destination dtypes match, ...").
// A repeated position keeps the last value (1.13's serial CPU kernel), or sums in index order. One value under a
// single mask is a masked_fill in 1.13, its dtype converted. IndexPutBackward0.
Tensor index_put(const Tensor& x, const std::vector<Tensor>& indices, const Tensor& values, bool accumulate = false);
// In place (one version bump). Under grad mode, when x or values requires grad, x's history becomes
// IndexPutBackward0 (its input: x's history before the write), or on a view CopySlices on its base.
Tensor& index_put_(Tensor& x, const std::vector<Tensor>& indices, const Tensor& values, bool accumulate = false);
// where(condition, a, b): a's element where the bool condition is true, else b's, the three broadcast to one
// shape; a and b of one dtype. Elements are picked, not blended, so infinities and NaNs in the unpicked
// operand stay out. WhereBackward0: the gradient goes to the picked operand (where(c, g, 0), where(c, 0, g)).
Tensor where(const Tensor& condition, const Tensor& a, const Tensor& b);
// PyTorch's linalg.vector_norm: (sum |x|^ord)^(1/ord) over dims (every dim when empty), ord = inf / -inf the
// largest / smallest |x|, ord = 0 the count of nonzeros; dtype: the result's (and the computation's) dtype, at
// least x's. The value is rounded once from a float64 accumulation; LinalgVectorNormBackward0 is 1.13's
// norm_backward (0 where the norm is 0). 1.13's texts for integer inputs and empty inputs of an inf/negative ord.
Tensor linalg_vector_norm(const Tensor& x, double ord, const std::vector<int64_t>& dims = {}, bool keepdim = false,
                          std::optional<DType> dtype = std::nullopt);
// torch.norm(x, p, dim): the same norm and backward recorded as NormBackward1 (NormBackward3 with a dtype, as
// 1.13's overloads); an empty input's inf norm is 0.
Tensor norm(const Tensor& x, double p, const std::vector<int64_t>& dims = {}, bool keepdim = false,
            std::optional<DType> dtype = std::nullopt);
// PyTorch's amax / amin: the largest / smallest element over dims (every dim when empty), of any dtype. Their
// gradient (AmaxBackward0 / AminBackward0) is shared evenly by the elements equal to the result.
Tensor amax(const Tensor& x, const std::vector<int64_t>& dims = {}, bool keepdim = false);
Tensor amin(const Tensor& x, const std::vector<int64_t>& dims = {}, bool keepdim = false);

// ---- in-place: bump the version counter; under autograd recorded as 1.13 records them (Note [In-place ops under
// autograd] in engine/autograd/inplace.h), refusing what 1.13 refuses (a leaf that requires grad, ...) ----
// add_, sub_, mul_ and div_ promote as their out-of-place ops and write the result into self when its dtype can
// be cast to self's (else PyTorch's "result type Float can't be cast to the desired output type Long").
Tensor& add_(Tensor& self, const Tensor& other, double alpha = 1.0);
Tensor& sub_(Tensor& self, const Tensor& other, double alpha = 1.0);
Tensor& mul_(Tensor& self, double factor);
Tensor& mul_(Tensor& self, const Tensor& other);
Tensor& div_(Tensor& self, const Tensor& other);
Tensor& fill_(Tensor& self, double value);
Tensor& fill_(Tensor& self, const Tensor& value);   // value: one element, its gradient the sum of self's
Tensor& zero_(Tensor& self);
Tensor& copy_(Tensor& self, const Tensor& src);
// Overwrites self with values() (self's shape and dtype, computed only after the checks every in-place op makes,
// so a refused write draws no random numbers): the in-place ops whose result does not depend on self's old values
// (uniform_, normal_, bernoulli_ ...). Under autograd a node named `name` becomes self's history, with self's old
// history as its input and a zero gradient for it (1.13's UniformBackward0 ...). `others`: the op's other tensor
// inputs (bernoulli_'s probabilities), edges of the node too, with zero gradients. not_implemented: for 1.13's
// NotImplemented node (name "NotImplemented"), the op it names ("aten::scatter_"): its backward raises "derivative
// for aten::scatter_ is not implemented".
Tensor& overwrite_(Tensor& self, const char* name, const std::function<Tensor()>& values,
                   const std::vector<Tensor>& others = {}, const std::string& not_implemented = "");
// In-place view ops: self takes the out-of-place view's shape and strides over its own storage (one version bump);
// under autograd 1.13's node for the in-place form (TBackward1, TransposeBackward1, SqueezeBackward2/3,
// UnsqueezeBackward1) becomes self's history.
Tensor& t_(Tensor& self);
Tensor& transpose_(Tensor& self, int64_t dim0, int64_t dim1);
Tensor& squeeze_(Tensor& self, std::optional<int64_t> dim = std::nullopt);
Tensor& unsqueeze_(Tensor& self, int64_t dim);
// The in-place form of any out-of-place op: writes op(self) into self, and under autograd gives self op's node
// as its history (op runs on a copy of self's values that carries self's history). `others`: op's other tensor
// inputs, which decide with self whether the op is recorded. How the front end makes exp_, clamp_, relu_ ...
// overlap_check: refuse, as 1.13's TensorIterator does, an expanded self and an operand sharing part of self's
// memory (false for masked_fill_, whose value 1.13 reads as a number).
Tensor& apply_inplace(Tensor& self, const std::vector<Tensor>& others, const std::function<Tensor(const Tensor&)>& op,
                      bool overlap_check = true);

// ---- random numbers (generator.h): PyTorch 1.13's values for a seed; gen = nullptr draws from the calling
// thread's default generator ----
class Generator;
void manual_seed(uint64_t seed);   // seeds this thread's default generator
// The default generator's whole state (torch.get_rng_state / set_rng_state): setting a state got earlier replays
// the same draws from there. Opaque text; only set_rng_state reads it.
std::string get_rng_state();
void set_rng_state(const std::string& state);
Tensor randn(const Shape& shape, DType dtype = DType::f32, Generator* gen = nullptr);   // standard normal
Tensor rand(const Shape& shape, DType dtype = DType::f32, Generator* gen = nullptr);    // uniform [0, 1)
// uniform integers in [low, high), int64
Tensor randint(int64_t low, int64_t high, const Shape& shape, Generator* gen = nullptr);
Tensor randperm(int64_t n, Generator* gen = nullptr);   // a random permutation of 0..n-1, int64
// In place, as the in-place ops above (a version bump; refused on a leaf that requires grad outside NoGradGuard).
Tensor& uniform_(Tensor& self, double from = 0.0, double to = 1.0, Generator* gen = nullptr);
Tensor& normal_(Tensor& self, double mean = 0.0, double stddev = 1.0, Generator* gen = nullptr);
Tensor& bernoulli_(Tensor& self, double p = 0.5, Generator* gen = nullptr);   // 1 with probability p, else 0
Tensor& random_(Tensor& self, Generator* gen = nullptr);   // integers in [0, 2^63) for int64 (PyTorch's random_())

// ---- multi-tensor (kernels/{cpu,cuda}/multi_tensor.h): one pass over a list on one device, no autograd ----
// The tensors must be contiguous, of one floating dtype and on one device. Results stay on that device:
// on CUDA nothing here waits for the GPU.
Tensor multi_tensor_norm(const std::vector<Tensor>& tensors);   // scalar: sqrt(sum of all squares)
// Scales every defined .grad of `params` by min(1, max_norm / (total_norm + 1e-6)) in place, as
// torch.nn.utils.clip_grad_norm_; returns total_norm (a scalar on the grads' device).
Tensor clip_grad_norm_(const std::vector<Tensor>& params, double max_norm);
// flat[offset_i : offset_i + numel_i] = srcs[i] * factor, offsets the running sum of numels (the order of
// a DDP bucket); and back. flat is contiguous, 1-D and holds at least the sum of numels.
void bucket_pack(const std::vector<Tensor>& srcs, Tensor& flat, double factor);
void bucket_unpack(const Tensor& flat, const std::vector<Tensor>& dsts);

}  // namespace tinyddp
