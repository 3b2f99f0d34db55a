// Running another program (SLURM's commands) and reading what it printed.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace perflab {

/// What a program did.
struct ProgramOutput {
  int exit_status = 0;  ///< Its exit status; 128 + N when signal N ended it.
  std::string out;      ///< Its standard output.
  std::string err;      ///< Its standard error.
};

/// The full path of `name` found on PATH (a name with '/' is taken as a
/// path), if it names an executable file.
std::optional<std::string> find_program(const std::string& name);

/// Runs argv[0] (searched on PATH) with `argv`, standard input from
/// /dev/null, and waits for it. Throws perflab::Error when it cannot be
/// started.
ProgramOutput run_program(const std::vector<std::string>& argv);

}  // namespace perflab
