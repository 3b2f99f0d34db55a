// LtGemm::tune's rule for how many launches a candidate's timed graph holds
// (kernels/cuda/linear_plan.h's tune_batch), on the host: no device needed.
// The timing itself runs on a GPU in DlrmCudaStep.TunedGemmsChooseARunningCandidateAndStillMatchTheCpuModel.
#include <gtest/gtest.h>

#include <cmath>

#include "kernels/cuda/linear_plan.h"

namespace perflab::kernels::cuda {
namespace {

// The launches in a tuning candidate's timed graph (host only): about
// 0.2 ms of device time by the warm-up launch's (over)estimate, 1 to 32.
TEST(LinearTuning, TheTimedBatchCoversAboutAFifthOfAMillisecond) {
  EXPECT_EQ(tune_batch(0.015), 14);  // a small GEMM whose warm-up also timed the host's call
  EXPECT_EQ(tune_batch(0.2), 1);
  EXPECT_EQ(tune_batch(0.1), 2);
  EXPECT_EQ(tune_batch(0.6), 1);   // a large GEMM: one launch a replay
  EXPECT_EQ(tune_batch(0.001), kTuneMaxBatch);
  EXPECT_EQ(tune_batch(0.0), kTuneMaxBatch);
  EXPECT_EQ(tune_batch(-1.0), kTuneMaxBatch);
  EXPECT_EQ(tune_batch(std::nan("")), kTuneMaxBatch);
  for (double ms = 0.0005; ms < 5; ms *= 1.37) {
    const int n = tune_batch(ms);
    EXPECT_GE(n, 1);
    EXPECT_LE(n, kTuneMaxBatch);
    if (n > 1 && n < kTuneMaxBatch) {
      EXPECT_GE(n * ms, kTuneBatchMs) << ms;  // covers the target
      EXPECT_LT((n - 1) * ms, kTuneBatchMs) << ms;  // and no launch more
    }
  }
}

}  // namespace
}  // namespace perflab::kernels::cuda
