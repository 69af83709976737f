// The compute roofline of one core: the most float multiply-adds per second it retires, measured rather than
// taken from a spec sheet, as memcpy is the bandwidth roofline (bench_kernels). bench_autograd reports the
// MLP step's GEMMs as a fraction of it, which says how far any GEMM library, Eigen or OpenBLAS, could still go.
//
// fma_roofline.cpp is compiled for the same instruction set as the CPU kernels (-march=native under
// TINYDDP_NATIVE), so the widest vector the kernels may use is the one measured here.
#pragma once

#include <cstdint>

namespace tinyddp::bench {

// Flops of one step of fma_chains: 2 (multiply + add) per lane per independent chain.
int64_t fma_flops_per_step();
// Runs `steps` fused multiply-adds acc = acc * 1 + 1 on every lane of every chain, starting at 0; returns the
// sum over lanes and chains, which is exactly steps * lanes * chains while steps < 2^24 (float's exact
// integers): the check that the loop ran as written.
double fma_chains(int64_t steps);
// The vector the loop runs on, in words ("AVX-512, 16 floats").
const char* fma_vector_name();

}  // namespace tinyddp::bench
