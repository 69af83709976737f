// Reduction CUDA kernels, the contracts of kernels/contract.h.
//
// Determinism: every output is produced by one block (or, for tiny reductions, one thread) visiting its
// inputs in an order fixed by the shapes alone, followed by a fixed-shape tree in shared memory. No
// atomics, so the same inputs give the same bits on every run. The summation order differs from the
// CPU's (which sums sequentially or with Eigen's vectorized reduction), so results agree to rounding.
// float accumulates in float and double in double, as on the CPU.
//
// Shapes: a reduction over one dimension views the contiguous input as (outer, size, inner); one
// "row" is the `size` elements p[s * inner], s = 0 .. size-1, of one (outer, inner) pair.
#include "kernels/cuda/reduce.h"

#include <algorithm>
#include <sstream>

#include "base/error.h"
#include "kernels/cuda/cuda_check.h"
#include "kernels/cuda/elementwise.h"   // kMaxDims
#include "kernels/cuda/launch.h"
#include "kernels/cuda/runtime.h"

namespace tinyddp::kernels::cuda {

namespace {

using detail::dev_exp;
using detail::dev_log;
using detail::grid_blocks;
using detail::grid_start;
using detail::grid_step;
using detail::kComputeStream;
using detail::kMaxGridBlocks;
using detail::kThreadsPerBlock;

// ---- block-level building blocks ----
// Each assumes blockDim.x is a power of two <= kThreadsPerBlock, that every thread of the block calls it
// (it contains __syncthreads), and `shared` holds kThreadsPerBlock elements. It returns the result to
// every thread and leaves `shared` free for reuse.

template <typename T>
__device__ T block_sum(T v, T* shared) {
  const unsigned tid = threadIdx.x;
  shared[tid] = v;
  __syncthreads();
  for (unsigned s = blockDim.x / 2; s > 0; s >>= 1) {
    if (tid < s) shared[tid] += shared[tid + s];   // reads tid + s >= s: no thread writes it this step
    __syncthreads();
  }
  const T total = shared[0];
  __syncthreads();   // everyone has read shared[0] before the caller writes `shared` again
  return total;
}

// std::max(a, b) exactly: (a < b) ? b : a, the CPU's operator (a NaN in b is skipped, a NaN in a kept).
template <typename T>
__device__ __forceinline__ T std_max(T a, T b) {
  return a < b ? b : a;
}

template <typename T>
__device__ T block_max(T v, T* shared) {
  const unsigned tid = threadIdx.x;
  shared[tid] = v;
  __syncthreads();
  for (unsigned s = blockDim.x / 2; s > 0; s >>= 1) {
    if (tid < s) shared[tid] = std_max(shared[tid], shared[tid + s]);
    __syncthreads();
  }
  const T best = shared[0];
  __syncthreads();
  return best;
}

// Threads for a block that reduces rows of `size` elements: the smallest power of two covering the row,
// between one warp (32) and kThreadsPerBlock, so that short rows (10 classes) do not idle 8 warps.
int reduce_threads(int64_t size) {
  int threads = 32;
  while (threads < kThreadsPerBlock && threads < size) threads *= 2;
  return threads;
}

// ---- sum_dims ----

// The input (contiguous) seen as kept dims x reduced dims, in the input's dimension order within each
// group. Output element o (row-major over the kept dims, which is the output's own contiguous order) sums
// the R = prod(reduced_shape) inputs x[kept_offset(o) + reduced_offset(r)], r = 0 .. R-1.
struct SumLayout {
  int kept_nd = 0;
  int reduced_nd = 0;
  int64_t kept_shape[kMaxDims] = {};
  int64_t kept_stride[kMaxDims] = {};
  int64_t reduced_shape[kMaxDims] = {};
  int64_t reduced_stride[kMaxDims] = {};
};

__device__ __forceinline__ int64_t offset_of(int nd, const int64_t* shape, const int64_t* stride, int64_t linear) {
  int64_t off = 0;
  for (int d = nd - 1; d >= 0; --d) {
    off += (linear % shape[d]) * stride[d];
    linear /= shape[d];
  }
  return off;
}

// Tiny reductions (R <= kThreadPerOutputMax): one thread per output, summing r = 0 .. R-1 in order.
template <typename T>
__global__ void sum_thread_per_output_kernel(SumLayout layout, const T* x, T* out, int64_t out_n, int64_t R) {
  for (int64_t o = grid_start(); o < out_n; o += grid_step()) {
    const T* base = x + offset_of(layout.kept_nd, layout.kept_shape, layout.kept_stride, o);
    T acc = T(0);
    for (int64_t r = 0; r < R; ++r)
      acc += base[offset_of(layout.reduced_nd, layout.reduced_shape, layout.reduced_stride, r)];
    out[o] = acc;
  }
}

// One block per (output o, chunk c): block b = o * chunks + c sums r in [c * chunk_len, (c+1) * chunk_len)
// clipped to R, and writes dst[b]. With chunks == 1, dst is the output itself; otherwise dst holds
// out_n x chunks partial sums, added by a second pass.
template <typename T>
__global__ void sum_block_kernel(SumLayout layout, const T* x, T* dst, int64_t out_n, int64_t R, int64_t chunks,
                                 int64_t chunk_len) {
  __shared__ T shared[kThreadsPerBlock];
  const int64_t n_blocks = out_n * chunks;
  for (int64_t b = blockIdx.x; b < n_blocks; b += gridDim.x) {   // uniform across the block
    const int64_t o = b / chunks;
    const int64_t c = b % chunks;
    const int64_t r_begin = c * chunk_len;
    const int64_t r_end = r_begin + chunk_len < R ? r_begin + chunk_len : R;
    const T* base = x + offset_of(layout.kept_nd, layout.kept_shape, layout.kept_stride, o);
    T acc = T(0);
    for (int64_t r = r_begin + threadIdx.x; r < r_end; r += blockDim.x)
      acc += base[offset_of(layout.reduced_nd, layout.reduced_shape, layout.reduced_stride, r)];
    const T total = block_sum(acc, shared);
    if (threadIdx.x == 0) dst[b] = total;
  }
}

// Up to 32 inputs per output, one thread sums them faster than a block would.
constexpr int64_t kThreadPerOutputMax = 32;
// A reduction with fewer outputs than this cannot fill an H200 (132 SMs) with one block per output, so
// each output's inputs are split into chunks of about kChunkElems (32 per thread of a 256-thread block),
// at most kMaxChunks of them: the second pass then sums <= 1024 partials per output in one block.
constexpr int64_t kFewOutputs = 1024;
constexpr int64_t kChunkElems = 8192;
constexpr int64_t kMaxChunks = 1024;

std::string dims_string(const std::vector<int64_t>& d) {
  std::ostringstream os;
  os << "[";
  for (size_t i = 0; i < d.size(); ++i) os << (i ? ", " : "") << d[i];
  os << "]";
  return os.str();
}

// Frees a scratch block when the host function leaves (also on a throw). Safe right after the launch
// that uses it: see Note [Why the caching allocator may reuse a block at once] in runtime.cu.
struct Scratch {
  void* ptr = nullptr;
  ~Scratch() { deallocate(ptr); }
};

}  // namespace

template <typename T>
void sum_dims(const std::vector<int64_t>& shape, const std::vector<bool>& reduce, const T* x, T* out) {
  TINYDDP_INTERNAL_ASSERT(reduce.size() == shape.size(), "cuda::sum_dims: shape ", dims_string(shape), " has ",
                          shape.size(), " dims but the reduce mask has ", reduce.size(), ".");
  const size_t nd = shape.size();
  int64_t out_n = 1, R = 1;
  for (size_t d = 0; d < nd; ++d) (reduce[d] ? R : out_n) *= shape[d];
  if (out_n == 0) return;

  // Group the dims: size-1 dims dropped; a dim whose previous (non-1) dim is of the same kind merges into
  // it (the input is contiguous, so the pair is one dim of the inner one's stride, as in elementwise.cu).
  SumLayout layout;
  int64_t stride = 1;
  std::vector<int64_t> strides(nd);
  for (size_t d = nd; d-- > 0;) {
    strides[d] = stride;
    stride *= shape[d];
  }
  int last_kind = -1;   // 0: kept, 1: reduced, -1: none yet
  for (size_t d = 0; d < nd; ++d) {
    if (shape[d] == 1) continue;
    const int kind = reduce[d] ? 1 : 0;
    int& group_nd = kind ? layout.reduced_nd : layout.kept_nd;
    int64_t* group_shape = kind ? layout.reduced_shape : layout.kept_shape;
    int64_t* group_stride = kind ? layout.reduced_stride : layout.kept_stride;
    if (kind == last_kind) {
      group_shape[group_nd - 1] *= shape[d];
      group_stride[group_nd - 1] = strides[d];
    } else {
      TINYDDP_CHECK(group_nd < kMaxDims, "cuda::sum_dims: a tensor of shape ", dims_string(shape),
                    " alternates kept and summed dimensions more than ", kMaxDims,
                    " times. Permute the summed dimensions next to each other (or sum in two steps).");
      group_shape[group_nd] = shape[d];
      group_stride[group_nd] = strides[d];
      ++group_nd;
    }
    last_kind = kind;
  }

  if (R <= kThreadPerOutputMax) {   // also R == 0: every output is an empty sum, 0
    sum_thread_per_output_kernel<T><<<grid_blocks(out_n), kThreadsPerBlock, 0, kComputeStream>>>(layout, x, out,
                                                                                                   out_n, R);
    check_last_launch("cuda::sum_dims");
    return;
  }
  int64_t chunks = 1;
  if (out_n < kFewOutputs) chunks = std::clamp<int64_t>((R + kChunkElems - 1) / kChunkElems, 1, kMaxChunks);
  const int64_t chunk_len = (R + chunks - 1) / chunks;
  const unsigned blocks = static_cast<unsigned>(std::min(out_n * chunks, kMaxGridBlocks));
  if (chunks == 1) {
    sum_block_kernel<T><<<blocks, kThreadsPerBlock, 0, kComputeStream>>>(layout, x, out, out_n, R, 1, chunk_len);
    check_last_launch("cuda::sum_dims");
    return;
  }
  // Two passes: partial sums (out_n, chunks), then each output's row of partials. chunks <= kMaxChunks
  // < kChunkElems, so the second pass (R = chunks) is a single-chunk reduction: no further recursion.
  Scratch partial{allocate(static_cast<size_t>(out_n * chunks) * sizeof(T), current_device())};
  T* partial_ptr = static_cast<T*>(partial.ptr);
  sum_block_kernel<T><<<blocks, kThreadsPerBlock, 0, kComputeStream>>>(layout, x, partial_ptr, out_n, R, chunks,
                                                                        chunk_len);
  check_last_launch("cuda::sum_dims (partial sums)");
  sum_dims<T>({out_n, chunks}, {false, true}, partial_ptr, out);
}

// ---- max_dim ----

namespace {

template <typename T>
__device__ __forceinline__ bool is_nan(T v) {
  return v != v;
}

// Whether candidate (vb, ib) replaces the current best (va, ia) under the CPU's rule: a NaN beats every
// number (NaN propagates, as in PyTorch), otherwise the larger value wins; between equals (or two NaNs)
// the smaller index wins, i.e. the first maximum. An index of -1 means "no element yet".
template <typename T>
__device__ __forceinline__ bool replaces(T va, int64_t ia, T vb, int64_t ib) {
  if (ib < 0) return false;
  if (ia < 0) return true;
  const bool a_nan = is_nan(va), b_nan = is_nan(vb);
  if (a_nan != b_nan) return b_nan;
  if (!a_nan && vb != va) return vb > va;
  return ib < ia;
}

template <typename T>
__global__ void max_dim_kernel(int64_t outer, int64_t size, int64_t inner, const T* x, T* values,
                               int64_t* indices) {
  __shared__ T shared_value[kThreadsPerBlock];
  __shared__ int64_t shared_index[kThreadsPerBlock];
  const unsigned tid = threadIdx.x;
  const int64_t rows = outer * inner;
  for (int64_t row = blockIdx.x; row < rows; row += gridDim.x) {   // uniform across the block
    const T* p = x + (row / inner) * size * inner + row % inner;
    // Each thread scans s = tid, tid + blockDim.x, ... in increasing order, so its own first max wins.
    T best = T(0);
    int64_t arg = -1;
    for (int64_t s = tid; s < size; s += blockDim.x) {
      const T v = p[s * inner];
      if (replaces(best, arg, v, s)) {
        best = v;
        arg = s;
      }
    }
    shared_value[tid] = best;
    shared_index[tid] = arg;
    __syncthreads();
    for (unsigned s = blockDim.x / 2; s > 0; s >>= 1) {
      if (tid < s && replaces(shared_value[tid], shared_index[tid], shared_value[tid + s], shared_index[tid + s])) {
        shared_value[tid] = shared_value[tid + s];
        shared_index[tid] = shared_index[tid + s];
      }
      __syncthreads();
    }
    if (tid == 0) {
      values[row] = shared_value[0];
      indices[row] = shared_index[0];
    }
    __syncthreads();   // thread 0 has read the result before the next row overwrites the buffers
  }
}

// ---- log_softmax ----

// y = x - (m + log(sum(exp(x - m)))), m the row's max: three passes over the row by one block.
template <typename T>
__global__ void log_softmax_kernel(int64_t outer, int64_t size, int64_t inner, const T* x, T* y) {
  __shared__ T shared[kThreadsPerBlock];
  const int64_t rows = outer * inner;
  for (int64_t row = blockIdx.x; row < rows; row += gridDim.x) {   // uniform across the block
    const int64_t base = (row / inner) * size * inner + row % inner;
    const T* p = x + base;
    T* q = y + base;
    // Every thread starts from p[0] as the CPU does (size >= 1 here), so idle threads add nothing new.
    T m = p[0];
    for (int64_t s = threadIdx.x; s < size; s += blockDim.x) m = std_max(m, p[s * inner]);
    m = block_max(m, shared);
    T sum = T(0);
    for (int64_t s = threadIdx.x; s < size; s += blockDim.x) sum += dev_exp(p[s * inner] - m);
    sum = block_sum(sum, shared);
    const T lse = m + dev_log(sum);
    // Safe when y == x: each element is read and then written by the same thread, after the block
    // finished reading the row for m and sum (block_sum ends with __syncthreads).
    for (int64_t s = threadIdx.x; s < size; s += blockDim.x) q[s * inner] = p[s * inner] - lse;
  }
}

// ---- one_hot ----

// out[(o * size + s) * inner + i] = (indices[o * inner + i] == s): one thread per output element, so
// every element is written exactly once (no zero-fill pass, no race).
template <typename T>
__global__ void one_hot_kernel(int64_t outer, int64_t size, int64_t inner, const int64_t* indices, T* out) {
  const int64_t n = outer * size * inner;
  for (int64_t e = grid_start(); e < n; e += grid_step()) {
    const int64_t i = e % inner;
    const int64_t rest = e / inner;
    const int64_t s = rest % size;
    const int64_t o = rest / size;
    out[e] = indices[o * inner + i] == s ? T(1) : T(0);
  }
}

}  // namespace

template <typename T>
void max_dim(int64_t outer, int64_t size, int64_t inner, const T* x, T* values, int64_t* indices) {
  const int64_t rows = outer * inner;
  if (rows == 0) return;
  TINYDDP_CHECK(size > 0, "max_dim: cannot take the maximum over a dimension of size 0 (input viewed as (outer=",
                outer, ", size=0, inner=", inner, ")); there is no element to return. Check the input's shape.");
  const unsigned blocks = static_cast<unsigned>(std::min(rows, kMaxGridBlocks));
  max_dim_kernel<T><<<blocks, reduce_threads(size), 0, kComputeStream>>>(outer, size, inner, x, values, indices);
  check_last_launch("cuda::max_dim");
}

template <typename T>
void log_softmax(int64_t outer, int64_t size, int64_t inner, const T* x, T* y) {
  const int64_t rows = outer * inner;
  if (rows == 0 || size == 0) return;   // no element to write
  const unsigned blocks = static_cast<unsigned>(std::min(rows, kMaxGridBlocks));
  log_softmax_kernel<T><<<blocks, reduce_threads(size), 0, kComputeStream>>>(outer, size, inner, x, y);
  check_last_launch("cuda::log_softmax");
}

template <typename T>
void one_hot(int64_t outer, int64_t size, int64_t inner, const int64_t* indices, T* out) {
  const int64_t n = outer * size * inner;
  if (n == 0) return;
  one_hot_kernel<T><<<grid_blocks(n), kThreadsPerBlock, 0, kComputeStream>>>(outer, size, inner, indices, out);
  check_last_launch("cuda::one_hot");
}

TINYDDP_REDUCE_KERNELS(TINYDDP_INSTANTIATE_KERNEL)

}  // namespace tinyddp::kernels::cuda
