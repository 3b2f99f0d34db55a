// nccl-tests' command line translated to perflab's
// (workloads/collectives/nccl_tests_args.h).
#include <gtest/gtest.h>

#include "base/error.h"
#include "workloads/collectives/nccl_tests_args.h"

namespace perflab::collectives_workload {
namespace {

using Args = std::vector<std::string>;

TEST(NcclTestsArgs, SizesParseWithBinarySuffixes) {
  EXPECT_EQ(parse_nccl_tests_bytes("-b", "8"), 8u);
  EXPECT_EQ(parse_nccl_tests_bytes("-b", "64K"), 65536u);
  EXPECT_EQ(parse_nccl_tests_bytes("-e", "64M"), 64u << 20);
  EXPECT_EQ(parse_nccl_tests_bytes("-e", "1g"), 1u << 30);
  EXPECT_THROW(parse_nccl_tests_bytes("-b", "8X"), UsageError);
  EXPECT_THROW(parse_nccl_tests_bytes("-b", "M"), UsageError);
  EXPECT_THROW(parse_nccl_tests_bytes("-b", "-8"), UsageError);
}

TEST(NcclTestsArgs, SizesStepByFactorOrBytes) {
  EXPECT_EQ(nccl_tests_sizes(8, 128, 2, 0), (std::vector<size_t>{8, 16, 32, 64, 128}));
  EXPECT_EQ(nccl_tests_sizes(8, 100, 4, 0), (std::vector<size_t>{8, 32}));
  EXPECT_EQ(nccl_tests_sizes(100, 400, 1, 150), (std::vector<size_t>{100, 250, 400}));
  EXPECT_THROW(nccl_tests_sizes(64, 8, 2, 0), UsageError);
  EXPECT_THROW(nccl_tests_sizes(0, 8, 2, 0), UsageError);
  EXPECT_THROW(nccl_tests_sizes(1, 1u << 30, 1, 1), UsageError);  // far too many sizes
}

TEST(NcclTestsArgs, FlagsBecomePerflabFlags) {
  const Args out = translate_nccl_tests_args(
      {"-b", "8", "-e", "32", "-f", "2", "-n", "50", "-w", "3", "-c", "0", "-G", "1", "-o", "max", "-d", "half",
       "-a", "3", "--seeds", "2"});
  const Args want = {"--seeds", "2", "--set", "bytes=8,16,32", "--set", "in_place=0,1", "--set", "iters=50",
                     "--set", "warmup_iters=3", "--set", "check=0", "--set", "redop=max", "--set", "dtype=half",
                     "--set", "average=3", "--cuda-graphs", "on"};
  EXPECT_EQ(out, want);
}

TEST(NcclTestsArgs, LongFormsAndInlineValues) {
  const Args out = translate_nccl_tests_args({"--minbytes=1K", "--maxbytes", "1K", "--cuda_graph=0"});
  EXPECT_EQ(out, (Args{"--set", "bytes=1024", "--set", "in_place=0,1", "--cuda-graphs", "off"}));
}

TEST(NcclTestsArgs, PerflabFlagsPassThroughAndPlacementIsKept) {
  EXPECT_EQ(translate_nccl_tests_args({"--backend", "cpu", "--iterations", "5"}),
            (Args{"--backend", "cpu", "--iterations", "5"}));
  const Args out = translate_nccl_tests_args({"--set", "in_place=0", "-b", "8", "-e", "8"});
  EXPECT_EQ(out, (Args{"--set", "in_place=0", "--set", "bytes=8"}));
}

TEST(NcclTestsArgs, RefusedAndIncompleteFlagsSayWhy) {
  EXPECT_THROW(translate_nccl_tests_args({"-g", "8"}), UsageError);
  EXPECT_THROW(translate_nccl_tests_args({"-t", "2"}), UsageError);
  EXPECT_THROW(translate_nccl_tests_args({"-b"}), UsageError);
  EXPECT_THROW(translate_nccl_tests_args({"-f", "two"}), UsageError);
}

}  // namespace
}  // namespace perflab::collectives_workload
