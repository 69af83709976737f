// Type promotion: the dtype an op on mixed dtypes computes in, as PyTorch 1.13's result_type.
//
//   promote_types(i64, f32) == f32            // the dtype lattice: b8 < i64 < f32 < f64
//   result_type(randn({3}), scalar_tensor(1.0, DType::f64)) == f32   // a 0-dim tensor does not widen
//   result_type(arange(3, DType::i64), wrapped_number(0.5)) == f32   // a Python float: the default dtype
//
// Operands rank in three tiers: tensors with dims, 0-dim tensors, wrapped numbers (the Python numbers the front
// end wraps, marked TensorImpl::is_wrapped_number). A lower tier changes the result only when its category is
// higher (bool < integral < floating); then the dtypes are promoted, except that a wrapped float counts as the
// default dtype (float32), as `int_tensor * 0.5` is float32 in PyTorch. Comparisons, arithmetic and cat all use
// result_type, so they agree on the dtype they compute in.
#pragma once

#include <string>

#include "engine/core/tensor.h"

namespace tinyddp {

// PyTorch's default floating dtype (torch.get_default_dtype()): true division of integers and a Python float
// with an integer tensor give it.
inline constexpr DType kDefaultFloatDType = DType::f32;

// 0 bool, 1 integral, 2 floating.
inline int dtype_category(DType t) { return t == DType::b8 ? 0 : t == DType::i64 ? 1 : 2; }

// The smallest dtype both a and b convert to without loss of category or width: with the four dtypes the
// engine has, the higher of the two in b8 < i64 < f32 < f64.
inline DType promote_types(DType a, DType b) {
  auto rank = [](DType t) { return t == DType::b8 ? 0 : t == DType::i64 ? 1 : t == DType::f32 ? 2 : 3; };
  return rank(a) >= rank(b) ? a : b;
}

// Whether an op whose result is `from` may write it into a tensor of dtype `to` (in-place ops, out=): never
// floating into integral or bool, never a number into bool (PyTorch's canCast).
inline bool can_cast(DType from, DType to) {
  if (is_floating(from) && !is_floating(to)) return false;
  if (from != DType::b8 && to == DType::b8) return false;
  return true;
}

// PyTorch's names of scalar types in its cast error ("result type Float can't be cast ... Long").
inline const char* scalar_type_name(DType t) {
  switch (t) {
    case DType::f32: return "Float";
    case DType::f64: return "Double";
    case DType::i64: return "Long";
    case DType::b8: return "Bool";
  }
  return "?";
}

// Accumulates operands, tier by tier (PyTorch's ResultTypeState); result() combines the tiers.
class ResultType {
 public:
  void add(const Tensor& t) {
    if (!t.defined()) return;
    const DType d = t.dtype();
    if (t.is_wrapped_number()) wrapped_ = promote(wrapped_, is_floating(d) ? kDefaultFloatDType : d);
    else if (t.dim() == 0) zero_dim_ = promote(zero_dim_, d);
    else dimmed_ = promote(dimmed_, d);
  }
  // The dtype to compute in; float32 when no operand was added.
  DType result() const {
    const int r = combine(dimmed_, combine(zero_dim_, wrapped_));
    return r < 0 ? kDefaultFloatDType : static_cast<DType>(r);
  }

 private:
  // -1: no operand in the tier yet.
  static int promote(int acc, DType d) {
    return acc < 0 ? static_cast<int>(d) : static_cast<int>(promote_types(static_cast<DType>(acc), d));
  }
  // A lower tier counts only when its category is above the higher tier's (bool is promoted with anything).
  static int combine(int higher, int lower) {
    if (higher < 0) return lower;
    if (lower < 0) return higher;
    const DType h = static_cast<DType>(higher), l = static_cast<DType>(lower);
    if (is_floating(h)) return higher;
    if (h == DType::b8 || is_floating(l)) return static_cast<int>(promote_types(h, l));
    return higher;
  }
  int dimmed_ = -1, zero_dim_ = -1, wrapped_ = -1;
};

inline DType result_type(const Tensor& a, const Tensor& b) {
  ResultType r;
  r.add(a);
  r.add(b);
  return r.result();
}

// A Python number as PyTorch wraps it for an op with tensors: a 0-dim tensor (float64, int64 or bool) on
// `device`, marked as a wrapped number so that result_type ranks it below every tensor.
Tensor wrapped_number(double value, Device device = Device::cpu());
Tensor wrapped_number(int64_t value, Device device = Device::cpu());
Tensor wrapped_number(bool value, Device device = Device::cpu());

}  // namespace tinyddp
