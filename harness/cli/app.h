// The command line: `perflab list | run | env | data convert | --version`.
#pragma once

#include <ostream>

namespace perflab::cli {

/// Parses argv and runs the command. Returns the process exit code:
/// 0 success, 1 a run or the environment failed, 2 invalid usage or input.
/// Errors are reported as one line on `err`.
int main(int argc, char** argv);

}  // namespace perflab::cli
