// The `nccl` backend: one GPU per rank, collectives by NCCL on device tensors.
//
//   auto pg = nccl_world();                        // under mpirun: MPI bootstraps NCCL; else a 1-rank group
//   auto work = pg->allreduce({bucket});           // bucket on cuda:<device>; returns once NCCL has enqueued it
//   ...                                            // the backward goes on on the compute stream
//   work->wait();                                  // done (or an Error naming this rank after timeout())
//
// How a collective is ordered (Note [NCCL streams and events]):
//   compute stream  = the legacy default stream: every tinyddp kernel and copy runs there (kernels/cuda/runtime.h)
//   comm stream     = one per group, created non-blocking, so NCCL never waits on unrelated compute work
//   1. record `ready` on the compute stream: the inputs' producers (the backward's kernels) are before it;
//   2. the comm stream waits on `ready`, NCCL runs there, `done` is recorded after it;
//   3. is_completed() = `done` has happened; wait() blocks the host until `done` (polling, so that it can
//      give up at timeout()), then makes the compute stream wait on `done` as PyTorch's Work::wait does.
// The caching allocator knows the compute stream only: a buffer NCCL still reads or writes must not go back to
// it. Every Work therefore holds its tensors, and the group holds every in-flight collective's tensors too, so a
// Work dropped early (a failed iteration) cannot free memory under NCCL; they are released once `done` happened.
//
// Failures: a peer that died, hung or called a different collective shows up as a collective that never
// finishes or as an NCCL async error. wait() then aborts the communicator (ncclCommAbort, so that NCCL's
// kernels stop spinning) and throws naming this rank, the collective and the world size; the group cannot be
// used afterwards. The communicator is created non-blocking (ncclConfig_t::blocking = 0) so that
// ncclCommInitRank too gives up after timeout() instead of hanging when a rank never joins.
#pragma once

#include <memory>

#include "dist/process_group.h"

namespace tinyddp::dist {

// Whether this build has the nccl backend (CUDA and NCCL found at configure time).
bool nccl_available();

// A group of `size` ranks, this one `rank`, on GPU `device`. `bootstrap` carries the ncclUniqueId from rank 0
// to the others once, at construction (a 128-byte CPU tensor broadcast): any backend with the same ranks works,
// in practice mpi_world(). It may be null only when size == 1. Every rank must call this collectively.
// Throws (naming the rank and what to check) if the device does not exist, NCCL is not built, or the
// communicator could not be created within `timeout`.
std::shared_ptr<ProcessGroup> make_nccl_process_group(int rank, int size, int device, ProcessGroup* bootstrap,
                                                      std::chrono::milliseconds timeout = kDefaultTimeout);

// The usual way in. Under mpirun (and an MPI build): MPI_COMM_WORLD's ranks, each on GPU `device`, by default
// its local rank on this machine (OMPI_COMM_WORLD_LOCAL_RANK) modulo the device count. Otherwise one rank on
// `device` (default 0).
std::shared_ptr<ProcessGroup> nccl_world(int device = -1);

}  // namespace tinyddp::dist
