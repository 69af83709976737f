// The `mpi` backend: one rank per process over Open MPI, launched as `mpirun -np N tinyddp ...`.
// Collectives are MPI's nonblocking ones (MPI_Iallreduce, ...), so a bucket's reduction proceeds while
// the backward goes on; Work::wait() polls MPI_Test until done or until the group's timeout, then throws
// naming the rank and the collective (MPI cannot cancel a collective: the caller should then abort the
// job, which `tinyddp` does with MPI_Abort).
#pragma once

#include <memory>

#include "dist/process_group.h"

namespace tinyddp::dist {

// Whether this build has the mpi backend (Open MPI found at configure time).
bool mpi_available();
// Whether this process was started by mpirun (Open MPI sets OMPI_COMM_WORLD_SIZE).
bool launched_by_mpirun();
// MPI_COMM_WORLD as a process group; initializes MPI on first use (and finalizes it at exit).
std::shared_ptr<ProcessGroup> mpi_world();
// Ends the whole job (MPI_Abort): for a rank that cannot continue and must not leave the others waiting.
[[noreturn]] void mpi_abort(int code);

}  // namespace tinyddp::dist
