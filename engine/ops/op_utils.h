// Shared plumbing for op implementations (not part of the public API).
#pragma once

#include "engine/autograd/grad_mode.h"
#include "engine/autograd/node.h"
#include "engine/ops/ops.h"
#include "engine/core/backend.h"

namespace tinyddp::detail {

using autograd::OpNode;
using autograd::TensorList;

void check_defined(const Tensor& t, const char* op, const char* what = "input");
void check_floating(const Tensor& t, const char* op);
void check_same_dtype(const Tensor& a, const Tensor& b, const char* op);
// PyTorch's "Expected all tensors to be on the same device" error, naming the op.
void check_same_device(const Tensor& a, const Tensor& b, const char* op);

// Strides that read `t` as if it had shape `out` (NumPy broadcasting: 0 on new or size-1 dims).
Shape broadcast_strides(const Tensor& t, const Shape& out);

// out = op(x) elementwise; x is made contiguous first.
Tensor unary_kernel(kernels::UnaryOp op, const Tensor& x, double a = 0.0, double b = 0.0);
// out = op(a, b) with broadcasting; checks dtypes and shapes, naming `name`.
Tensor binary_kernel(kernels::BinaryOp op, const Tensor& a, const Tensor& b, const char* name);
// The bool tensor op(a, b) with broadcasting; a and b of one number dtype.
Tensor compare_kernel(kernels::CompareOp op, const Tensor& a, const Tensor& b, const char* name);

}  // namespace tinyddp::detail
