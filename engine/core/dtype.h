// Element types and devices.
//   f32, f64: floating point, differentiable.
//   i64:      integer data (class indices, randint); never requires grad.
//   b8:       bool, one byte per element (what comparisons return); never requires grad.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "base/error.h"

namespace tinyddp {

enum class DType : uint8_t { f32, f64, i64, b8 };

inline size_t element_size(DType t) {
  switch (t) {
    case DType::f32: return 4;
    case DType::f64: return 8;
    case DType::i64: return 8;
    case DType::b8: return 1;
  }
  return 0;
}

// Names as PyTorch prints them (torch.float32 ...), used in error messages.
inline const char* dtype_name(DType t) {
  switch (t) {
    case DType::f32: return "float32";
    case DType::f64: return "float64";
    case DType::i64: return "int64";
    case DType::b8: return "bool";
  }
  return "?";
}

// PyTorch's legacy type names, which its autograd error messages use ("torch.FloatTensor").
inline const char* legacy_type_name(DType t) {
  switch (t) {
    case DType::f32: return "torch.FloatTensor";
    case DType::f64: return "torch.DoubleTensor";
    case DType::i64: return "torch.LongTensor";
    case DType::b8: return "torch.BoolTensor";
  }
  return "?";
}

inline bool is_floating(DType t) { return t == DType::f32 || t == DType::f64; }

template <typename T> constexpr DType dtype_of();
template <> constexpr DType dtype_of<float>() { return DType::f32; }
template <> constexpr DType dtype_of<double>() { return DType::f64; }
template <> constexpr DType dtype_of<int64_t>() { return DType::i64; }
template <> constexpr DType dtype_of<bool>() { return DType::b8; }

// Calls fn.template operator()<T>() with T the C++ type of a floating dtype.
template <typename Fn>
decltype(auto) dispatch_floating(DType t, const char* op, Fn&& fn) {
  switch (t) {
    case DType::f32: return fn.template operator()<float>();
    case DType::f64: return fn.template operator()<double>();
    default: break;
  }
  throw Error(std::string(op) + ": expected a floating tensor (float32 or float64) but got " + dtype_name(t) +
              ". Convert it first with .to(DType::f32) or .to(DType::f64).");
}

// Calls fn.template operator()<T>() with T the C++ type of a dtype with an order (not bool): comparisons.
template <typename Fn>
decltype(auto) dispatch_numeric(DType t, const char* op, Fn&& fn) {
  switch (t) {
    case DType::f32: return fn.template operator()<float>();
    case DType::f64: return fn.template operator()<double>();
    case DType::i64: return fn.template operator()<int64_t>();
    default: break;
  }
  throw Error(std::string(op) + ": expected a number tensor (float32, float64 or int64) but got " + dtype_name(t) +
              ". Convert it first with .to(DType::f32).");
}

// Every dtype: for code that only moves or converts values (copies, fills, conversions, collectives' buffers).
template <typename Fn>
decltype(auto) dispatch_all(DType t, Fn&& fn) {
  switch (t) {
    case DType::f32: return fn.template operator()<float>();
    case DType::f64: return fn.template operator()<double>();
    case DType::i64: return fn.template operator()<int64_t>();
    case DType::b8: return fn.template operator()<bool>();
  }
  throw Error("unknown dtype");
}

struct Device {
  enum class Kind : uint8_t { cpu, cuda };
  Kind kind = Kind::cpu;
  int index = 0;
  static Device cpu() { return {}; }
  static Device cuda(int i = 0) { return {Kind::cuda, i}; }
  bool is_cpu() const { return kind == Kind::cpu; }
  bool operator==(const Device&) const = default;
  std::string str() const { return kind == Kind::cpu ? "cpu" : "cuda:" + std::to_string(index); }
};

}  // namespace tinyddp
