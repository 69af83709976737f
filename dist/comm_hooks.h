// Built-in DDP communication hooks (PyTorch's default_hooks.py), for Reducer/DDP::register_comm_hook.
// A hook receives each bucket's flat buffer of (undivided) gradients and must leave the average in it
// once its Work completes. (PyTorch's hook returns a Future whose value is the reduced tensor, which the
// reducer copies from in finalize_backward; tinyddp's Work carries no value, so the buffer is the result.)
//
//   ddp.register_comm_hook(dist::allreduce_hook());       // what the reducer does anyway: divide, allreduce
//   ddp.register_comm_hook(dist::fp16_compress_hook());   // halve the bytes: gradients travel as fp16
#pragma once

#include "dist/reducer.h"

namespace tinyddp::dist {

// Divides by the world size first ("to avoid overflow, especially for FP16"), then allreduces.
CommHook allreduce_hook();

// Compresses the bucket to fp16, divides by the world size in fp16 (PyTorch's order: the cast, then div_),
// allreduces, and decompresses into the bucket. tinyddp has no fp16 dtype: values are rounded to the
// nearest fp16 (round-to-nearest-even, overflow to inf), the quotient is rounded again, and the sum is
// rounded after the reduction. For two ranks that is
// exactly fp16 addition; for more, the partial sums are kept in fp32, which is at least as accurate.
CommHook fp16_compress_hook();

// Rounds a float to the nearest IEEE fp16 value, returned as a float (exposed for tests).
float round_to_fp16(float x);

}  // namespace tinyddp::dist
