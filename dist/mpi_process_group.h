// The `mpi` backend: one rank per process over Open MPI, launched as `mpirun -np N tinyddp ...`.
// Collectives are MPI's nonblocking ones (MPI_Iallreduce, ...), so a bucket's reduction proceeds while
// the backward goes on; when every rank runs on one machine, allreduce goes through shared memory instead,
// and the reducer's buckets live there (allocate_bucket), reduced in place as the thread backend reduces
// (Note [The mpi backend's shared-memory allreduce]). Before each collective, the ranks exchange its
// signature (count, dtype, kind: the thread backend's check), so that ranks calling different collectives
// get an error naming both instead of a crash inside Open MPI, and a rank that never arrives is named.
// Work::wait() polls until done or until the group's timeout, sleeping between polls with a bounded backoff
// so that a wait does not keep a core busy (Note [Polling MPI without a busy core]). Either failure throws
// CollectiveFailedError and fails the group for good: MPI cannot cancel a collective, so no later
// collective may start or wait, and the caller should end the job at once, which `tinyddp` does with
// MPI_Abort (exit code 3).
#pragma once

#include <memory>

#include "dist/process_group.h"

namespace tinyddp::dist {

// Whether this build has the mpi backend (Open MPI found at configure time).
bool mpi_available();
// Whether this process was started by mpirun (Open MPI sets OMPI_COMM_WORLD_SIZE, PMIx PMIX_RANK).
bool launched_by_mpirun();
// This process's rank as the launcher's environment says, without starting MPI (0 when not under mpirun).
int mpirun_rank();
// MPI_COMM_WORLD as a process group; initializes MPI on first use (and finalizes it at exit).
std::shared_ptr<ProcessGroup> mpi_world();
// Whether allreduce goes through shared memory (Note [The mpi backend's shared-memory allreduce]): every rank on
// this machine, and not turned off with TINYDDP_MPI_SHARED_MEMORY=0. Initializes MPI like mpi_world().
bool mpi_shared_memory_allreduce();
// Ends the whole job (MPI_Abort) with this exit code: for a rank that cannot continue and must not leave
// the others waiting. Before MPI started (or after it ended) it is std::exit(code).
[[noreturn]] void mpi_abort(int code);

}  // namespace tinyddp::dist
