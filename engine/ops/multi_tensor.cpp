// Multi-tensor ops: thin checks around kernels/{cpu,cuda}/multi_tensor.h. No autograd: they serve the
// optimizer and the reducer, which run outside the graph.
#include "engine/ops/op_utils.h"

namespace tinyddp {

using namespace detail;

namespace {

// The list's common device and dtype; every tensor contiguous. An empty list is the CPU in float32.
struct ListInfo {
  Device device;
  DType dtype = DType::f32;
  std::vector<int64_t> numels;
};

ListInfo check_list(const std::vector<Tensor>& tensors, const char* op) {
  ListInfo info;
  for (size_t i = 0; i < tensors.size(); ++i) {
    const Tensor& t = tensors[i];
    check_floating(t, op);
    if (i == 0) {
      info.device = t.device();
      info.dtype = t.dtype();
    }
    TINYDDP_CHECK(t.dtype() == info.dtype && t.device() == info.device, op, ": tensor ", i, " is ",
                  dtype_name(t.dtype()), " on ", t.device().str(), " but tensor 0 is ", dtype_name(info.dtype), " on ",
                  info.device.str(), "; one call takes one dtype on one device (group the list first).");
    TINYDDP_CHECK(t.is_contiguous(), op, ": tensor ", i, " of shape ", shape_str(t.shape()),
                  " is not contiguous; pass .contiguous() copies (gradients and bucket views always are).");
    info.numels.push_back(t.numel());
  }
  return info;
}

template <typename T>
std::vector<const T*> const_pointers(const std::vector<Tensor>& tensors) {
  std::vector<const T*> out;
  for (const Tensor& t : tensors) out.push_back(t.data_ptr<T>());
  return out;
}

template <typename T>
std::vector<T*> pointers(const std::vector<Tensor>& tensors) {
  std::vector<T*> out;
  for (const Tensor& t : tensors) out.push_back(t.data_ptr<T>());
  return out;
}

// Offsets of consecutive slots in a flat buffer, checked against its size.
std::vector<int64_t> packed_offsets(const std::vector<int64_t>& numels, const Tensor& flat, const char* op) {
  std::vector<int64_t> offsets;
  int64_t total = 0;
  for (int64_t n : numels) {
    offsets.push_back(total);
    total += n;
  }
  TINYDDP_CHECK(flat.dim() == 1 && flat.is_contiguous() && flat.numel() >= total, op,
                ": expected a contiguous 1-D flat buffer of at least ", total, " elements (the sum of the tensors' "
                "numels), got shape ", shape_str(flat.shape()), flat.is_contiguous() ? "" : " (not contiguous)", ".");
  return offsets;
}

}  // namespace

Tensor multi_tensor_norm(const std::vector<Tensor>& tensors) {
  const ListInfo info = check_list(tensors, "multi_tensor_norm");
  Tensor out = empty({}, info.dtype, info.device);
  dispatch_floating(info.dtype, "multi_tensor_norm", [&]<typename T>() {
    backend::multi_tensor_l2norm<T>(info.device, const_pointers<T>(tensors), info.numels, out.data_ptr<T>());
  });
  return out;
}

Tensor clip_grad_norm_(const std::vector<Tensor>& params, double max_norm) {
  TINYDDP_CHECK(max_norm > 0, "clip_grad_norm_: max_norm must be positive, got ", max_norm, ".");
  std::vector<Tensor> grads;
  for (const Tensor& p : params)
    if (p.defined() && p.grad().defined()) grads.push_back(p.grad());
  if (grads.empty()) return scalar_tensor(0.0);   // as PyTorch: nothing to clip, norm 0
  const ListInfo info = check_list(grads, "clip_grad_norm_");
  Tensor total_norm = empty({}, info.dtype, info.device);
  dispatch_floating(info.dtype, "clip_grad_norm_", [&]<typename T>() {
    backend::clip_by_global_norm<T>(info.device, pointers<T>(grads), info.numels, max_norm, total_norm.data_ptr<T>());
  });
  for (const Tensor& g : grads) g.bump_version();
  return total_norm;
}

void bucket_pack(const std::vector<Tensor>& srcs, Tensor& flat, double factor) {
  const ListInfo info = check_list(srcs, "bucket_pack");
  if (srcs.empty()) return;
  TINYDDP_CHECK(flat.dtype() == info.dtype && flat.device() == info.device, "bucket_pack: the flat buffer is ",
                dtype_name(flat.dtype()), " on ", flat.device().str(), " but the tensors are ", dtype_name(info.dtype),
                " on ", info.device.str(), ".");
  const std::vector<int64_t> offsets = packed_offsets(info.numels, flat, "bucket_pack");
  dispatch_floating(info.dtype, "bucket_pack", [&]<typename T>() {
    backend::bucket_pack<T>(info.device, const_pointers<T>(srcs), info.numels, offsets, static_cast<T>(factor),
                            flat.data_ptr<T>());
  });
  flat.bump_version();
}

void bucket_unpack(const Tensor& flat, const std::vector<Tensor>& dsts) {
  const ListInfo info = check_list(dsts, "bucket_unpack");
  if (dsts.empty()) return;
  TINYDDP_CHECK(flat.dtype() == info.dtype && flat.device() == info.device, "bucket_unpack: the flat buffer is ",
                dtype_name(flat.dtype()), " on ", flat.device().str(), " but the tensors are ", dtype_name(info.dtype),
                " on ", info.device.str(), ".");
  const std::vector<int64_t> offsets = packed_offsets(info.numels, flat, "bucket_unpack");
  dispatch_floating(info.dtype, "bucket_unpack", [&]<typename T>() {
    backend::bucket_unpack<T>(info.device, flat.data_ptr<T>(), offsets, info.numels, pointers<T>(dsts));
  });
  for (const Tensor& d : dsts) d.bump_version();
}

}  // namespace tinyddp
