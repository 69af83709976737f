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

// Whether t's elements cover one block of memory, each once (ATen's is_non_overlapping_and_dense): its strides,
// sorted, are the contiguous strides of its sizes in that order.
bool is_dense(const Tensor& t);
// 1.13's assert_no_partial_overlap between the tensor an op writes and one it reads: refused ("some elements of the
// input tensor and the written-to tensor refer to a single memory location") when both are dense blocks of one
// storage that meet without being the same elements in the same order (other layouts are too hard to tell).
void check_no_partial_overlap(const Tensor& written, const Tensor& read);

// Writes `value` (broadcastable to dst, of dst's dtype and device) into dst's elements through dst's strides,
// without a version bump: for an op filling the parts of a tensor it has just made (cat), which is no in-place op
// (1.13's results start at version 0). In-place ops write with engine/ops/inplace.cpp's write_into.
void copy_values(const Tensor& dst, const Tensor& value);

// Strides that read `t` as if it had shape `out` (NumPy broadcasting: 0 on new or size-1 dims).
Shape broadcast_strides(const Tensor& t, const Shape& out);

// out = op(x) elementwise; x is made contiguous first.
Tensor unary_kernel(kernels::UnaryOp op, const Tensor& x, double a = 0.0, double b = 0.0);
// out = op(a, b) with broadcasting; checks dtypes and shapes, naming `name`.
Tensor binary_kernel(kernels::BinaryOp op, const Tensor& a, const Tensor& b, const char* name);
// The bool tensor op(a, b) with broadcasting; a and b of one number dtype.
Tensor compare_kernel(kernels::CompareOp op, const Tensor& a, const Tensor& b, const char* name);

}  // namespace tinyddp::detail
