// perflab's one error path: typed errors that carry a one-line message.
// Libraries and workloads throw; only main() and tests decide to exit.
//
// A leaf: this header includes only the standard library, and it is the one
// harness header that kernels/ may include (tests/lint/arrows_test.sh checks
// both). Keep it dependency-free.
#pragma once

#include <stdexcept>
#include <string>

namespace perflab {

/// The user asked for something invalid (unknown workload, bad flag value,
/// malformed input file). main() prints the message on one line, exits 2.
class UsageError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// The environment or a library failed (I/O, CUDA, BLAS, no device).
/// main() prints the message on one line, exits 1.
class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

}  // namespace perflab
