// Runs a scope on one OpenMP thread: finite-difference loops make thousands
// of tiny calls, where waking threads would cost more than the work.
#pragma once

#include <omp.h>

namespace perflab::test_support {

class SingleThread {
 public:
  SingleThread() : saved_(omp_get_max_threads()) { omp_set_num_threads(1); }
  ~SingleThread() { omp_set_num_threads(saved_); }
  SingleThread(const SingleThread&) = delete;
  SingleThread& operator=(const SingleThread&) = delete;

 private:
  int saved_;
};

}  // namespace perflab::test_support
