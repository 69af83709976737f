// The plumbing every op shares (op_utils.h): input checks with PyTorch's texts where it has them, broadcast
// strides, and the unary/binary kernel calls on the inputs' device.
#include "engine/ops/op_utils.h"

#include <algorithm>

#include "engine/core/promotion.h"

namespace tinyddp {

using kernels::BinaryOp;
using kernels::CompareOp;
using kernels::UnaryOp;

namespace detail {

void check_defined(const Tensor& t, const char* op, const char* what) {
  TINYDDP_CHECK(t.defined(), op, ": the ", what, " is an undefined tensor.");
}

void check_floating(const Tensor& t, const char* op) {
  check_defined(t, op);
  TINYDDP_CHECK(is_floating(t.dtype()), op, ": expected a floating tensor (float32 or float64) but got ",
                dtype_name(t.dtype()), " of shape ", shape_str(t.shape()),
                ". Convert it first: .to(DType::f32) (Python: .float()).");
}

void check_same_dtype(const Tensor& a, const Tensor& b, const char* op) {
  TINYDDP_CHECK(a.dtype() == b.dtype(), op, ": expected both operands to have the same dtype, but got ",
                dtype_name(a.dtype()), " ", shape_str(a.shape()), " and ", dtype_name(b.dtype()), " ",
                shape_str(b.shape()), ". This op does not promote types: convert one with .to(...).");
}

void check_same_device(const Tensor& a, const Tensor& b, const char* op) {
  // PyTorch's text first (what users search for), then where and what to do.
  TINYDDP_CHECK(a.device() == b.device(),
                "Expected all tensors to be on the same device, but found at least two devices, ", a.device().str(),
                " and ", b.device().str(), "! (in ", op, ": move one of them with .to(Device::...) first)");
}

Shape broadcast_strides(const Tensor& t, const Shape& out) {
  Shape s(out.size(), 0);
  const size_t lead = out.size() - t.shape().size();
  for (size_t i = 0; i < t.shape().size(); ++i)
    s[lead + i] = t.shape()[i] == 1 ? 0 : t.strides()[i];
  return s;
}

Tensor unary_kernel(UnaryOp op, const Tensor& x, double a, double b) {
  const Tensor xc = x.contiguous();
  Tensor out = empty(x.shape(), x.dtype(), x.device());
  dispatch_floating(x.dtype(), "unary op", [&]<typename T>() {
    backend::unary<T>(x.device(), op, xc.data_ptr<T>(), out.data_ptr<T>(), out.numel(), a, b);
  });
  return out;
}

Tensor binary_kernel(BinaryOp op, const Tensor& a, const Tensor& b, const char* name) {
  check_defined(a, name);
  check_defined(b, name);
  // The arithmetic ops promote first (elementwise.cpp); here both operands have the dtype computed in.
  check_same_dtype(a, b, name);
  check_same_device(a, b, name);
  TINYDDP_INTERNAL_ASSERT(is_floating(a.dtype()) || op == BinaryOp::add || op == BinaryOp::sub || op == BinaryOp::mul,
                          name, ": integer kernels exist for add, sub and mul only, not for op ", static_cast<int>(op));
  const Shape shape = broadcast_shapes(a.shape(), b.shape());
  Tensor out = empty(shape, a.dtype(), a.device());
  dispatch_numeric(a.dtype(), name, [&]<typename T>() {
    backend::binary<T>(a.device(), op, shape, a.data_ptr<T>(), broadcast_strides(a, shape), b.data_ptr<T>(),
                       broadcast_strides(b, shape), out.data_ptr<T>());
  });
  return out;
}

Tensor compare_kernel(CompareOp op, const Tensor& a, const Tensor& b, const char* name) {
  check_defined(a, name);
  check_defined(b, name);
  check_same_device(a, b, name);
  const Shape shape = broadcast_shapes(a.shape(), b.shape());
  // Compared in the dtype PyTorch promotes the operands to; two bools as int64 0/1 (bool has no order kernel).
  const DType promoted = result_type(a, b);
  const DType dtype = promoted == DType::b8 ? DType::i64 : promoted;
  const Tensor x = a.detach().to(dtype), y = b.detach().to(dtype);
  Tensor out = empty(shape, DType::b8, a.device());
  dispatch_numeric(dtype, name, [&]<typename T>() {
    backend::compare<T>(a.device(), op, shape, x.data_ptr<T>(), broadcast_strides(x, shape), y.data_ptr<T>(),
                        broadcast_strides(y, shape), out.data_ptr<bool>());
  });
  return out;
}

void copy_values(const Tensor& dst, const Tensor& value) {
  check_same_device(dst, value, "in-place write");
  const Tensor v = expand(value.detach(), dst.shape()).contiguous();
  dispatch_all(dst.dtype(), [&]<typename T>() {
    if (dst.is_contiguous())
      backend::copy_bytes(dst.data_ptr<T>(), dst.device(), v.data_ptr<T>(), v.device(), v.numel() * sizeof(T));
    else
      backend::copy_from_contiguous<T>(dst.device(), dst.shape(), v.data_ptr<T>(), dst.data_ptr<T>(), dst.strides());
  });
}

bool is_dense(const Tensor& t) {
  std::vector<std::pair<int64_t, int64_t>> dims;   // (stride, size) of the dims of size > 1
  for (int64_t d = 0; d < t.dim(); ++d)
    if (t.shape()[d] != 1) dims.emplace_back(t.strides()[d], t.shape()[d]);
  std::sort(dims.begin(), dims.end());
  int64_t expected = 1;
  for (const auto& [stride, size] : dims) {
    if (stride != expected) return false;
    expected *= size;
  }
  return true;
}

void check_no_partial_overlap(const Tensor& written, const Tensor& read) {
  if (!read.defined() || written.is_same(read) || written.numel() == 0 || read.numel() == 0 ||
      written.storage() != read.storage() || !is_dense(written) || !is_dense(read))
    return;
  const int64_t w_begin = written.offset(), w_end = w_begin + written.numel();
  const int64_t r_begin = read.offset(), r_end = r_begin + read.numel();
  const bool full = w_begin == r_begin && w_end == r_end && written.strides() == read.strides();
  TINYDDP_CHECK(full || w_end <= r_begin || r_end <= w_begin,
                "unsupported operation: some elements of the input tensor and the written-to tensor refer to a single "
                "memory location. Please clone() the tensor before performing the operation.");
}

}  // namespace detail

}  // namespace tinyddp
