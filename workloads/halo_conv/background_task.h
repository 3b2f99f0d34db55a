// One persistent thread that runs one task at a time beside the caller: the
// overlapped variant computes a slab's interior there while the calling
// thread, the only one that calls MPI (MPI_THREAD_FUNNELED), exchanges the
// halo. An exception thrown by the task is rethrown by wait().
#pragma once

#include <condition_variable>
#include <exception>
#include <functional>
#include <mutex>
#include <thread>

namespace perflab::halo_conv {

class BackgroundTask {
 public:
  BackgroundTask() : thread_([this] { loop(); }) {}
  ~BackgroundTask() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      quit_ = true;
    }
    wake_.notify_all();
    thread_.join();
  }
  BackgroundTask(const BackgroundTask&) = delete;
  BackgroundTask& operator=(const BackgroundTask&) = delete;

  /// Starts `task` on the thread; the previous task must have been waited for.
  void start(std::function<void()> task) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      task_ = std::move(task);
      busy_ = true;
    }
    wake_.notify_all();
  }

  /// Returns when the started task has finished; rethrows what it threw.
  void wait() {
    std::unique_lock<std::mutex> lock(mutex_);
    done_.wait(lock, [this] { return !busy_; });
    if (error_) {
      std::exception_ptr e = error_;
      error_ = nullptr;
      std::rethrow_exception(e);
    }
  }

 private:
  void loop() {
    std::unique_lock<std::mutex> lock(mutex_);
    for (;;) {
      wake_.wait(lock, [this] { return quit_ || busy_; });
      if (quit_) return;
      std::function<void()> task = std::move(task_);
      lock.unlock();
      std::exception_ptr error;
      try {
        task();
      } catch (...) {
        error = std::current_exception();
      }
      lock.lock();
      error_ = error;
      busy_ = false;
      done_.notify_all();
    }
  }

  std::mutex mutex_;
  std::condition_variable wake_, done_;
  std::function<void()> task_;
  std::exception_ptr error_;
  bool busy_ = false;
  bool quit_ = false;
  std::thread thread_;  // last: started once every member above exists
};

}  // namespace perflab::halo_conv
