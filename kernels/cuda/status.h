// The answer of an operator's can_implement(): success, or why not, in one
// line a user can act on. Host-only; shared by every CUDA operator.
#pragma once

#include <string>
#include <utility>

namespace perflab::kernels::cuda {

/// CUTLASS-style status: ok, or a reason the problem cannot be run.
class Status {
 public:
  static Status success() { return Status(); }
  static Status invalid(std::string reason) { return Status(std::move(reason)); }

  bool ok() const { return reason_.empty(); }
  explicit operator bool() const { return ok(); }
  /// Empty when ok().
  const std::string& reason() const { return reason_; }

 private:
  Status() = default;
  explicit Status(std::string reason) : reason_(std::move(reason)) {
    if (reason_.empty()) reason_ = "invalid problem";
  }
  std::string reason_;
};

}  // namespace perflab::kernels::cuda
