// `tinyddp` under mpirun: what the launcher decides for the subcommands that take --backend (repro, train).
//   mpirun -np 2 tinyddp repro two-backward                   the mpi backend: one rank per process
//   mpirun -np 2 tinyddp repro two-backward --backend thread  a private thread simulation in each process
// Under the mpi backend --ranks, when given, must equal the number of processes, and every rank must run
// the same command line (mpirun's MPMD form `-np 1 A : -np 1 B` can give ranks different options, whose
// collectives would then differ: issue 14 saw --steps 3 vs 5 crash inside Open MPI).
#pragma once

#include <string>
#include <vector>

namespace CLI {
class App;
}

namespace tinyddp::dist {
class ProcessGroup;
}

namespace tinyddp::app {

// Before parsing: under mpirun, each subcommand's --backend defaults to mpi (its help shows so).
void default_backend_to_mpi_under_mpirun(CLI::App& app);

// After parsing, before the subcommand runs: for the subcommand chosen on `app` that takes --backend and
// resolved to mpi, refuses a --ranks other than the world size and checks that every rank runs `args`
// (the command line after the program name). Throws UsageError.
void check_launch(CLI::App& app, const std::vector<std::string>& args);

// Every rank's `args` equal, or a UsageError naming two ranks and the first argument where they differ.
// A collective: every rank of `pg` must call it.
void check_same_command_line(dist::ProcessGroup& pg, const std::vector<std::string>& args);

}  // namespace tinyddp::app
