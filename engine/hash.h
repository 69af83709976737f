// FNV-1a (64-bit) over bytes: cheap and deterministic, for "are these values bitwise equal?" (replicas
// compared across ranks, dist/replica_sync.h) and for seeds derived from names (the op tests). Not for
// anything adversarial. Beside tensor_methods.cpp, not in core/: hashing a device tensor copies it to the host
// (Tensor::to, an op).
//
//   uint64_t h = fnv1a(name.data(), name.size());
//   h = fnv1a(v.data(), v.size() * sizeof(double), h);   // fold more bytes into h
//   uint64_t t = fnv1a_values(x);                        // x's elements, row-major, as stored
#pragma once

#include <cstddef>
#include <cstdint>

#include "engine/core/tensor.h"

namespace tinyddp {

// The start value. FNV's published offset basis is 14695981039346656037; tinyddp has always started from
// this number (one digit shorter) and the op tests draw their inputs from seeds hashed with it, so it stays.
// The basis only fixes the start state: any value mixes the bytes equally well.
inline constexpr uint64_t kFnv1aBasis = 1469598103934665603ULL;
inline constexpr uint64_t kFnv1aPrime = 1099511628211ULL;

inline uint64_t fnv1a(const void* data, size_t bytes, uint64_t h = kFnv1aBasis) {
  const auto* p = static_cast<const unsigned char*>(data);
  for (size_t i = 0; i < bytes; ++i) h = (h ^ p[i]) * kFnv1aPrime;
  return h;
}

// The bytes of t's elements in row-major order (copied to the host first when t lives on a device).
inline uint64_t fnv1a_values(const Tensor& t, uint64_t h = kFnv1aBasis) {
  const Tensor c = t.detach().to(Device::cpu()).contiguous();
  return fnv1a(c.raw_data(), static_cast<size_t>(c.numel()) * element_size(c.dtype()), h);
}

}  // namespace tinyddp
