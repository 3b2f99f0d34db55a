// The per-kernel table and the Chrome trace from recorded activity
// (tests/harness/fixtures/dlrm_like.activity.json: two iterations of a
// DLRM-like step, durations chosen so every figure is worked by hand
// below), the table's JSON both ways, and the kernel floor.
#include "harness/kernel_profile.h"

#include <gtest/gtest.h>

#include <fstream>
#include <set>

#include "harness/chrome_trace.h"
#include "base/error.h"
#include "harness/phase.h"

namespace perflab {
namespace {

ActivityLog fixture() {
  std::ifstream in(std::string(PERFLAB_SOURCE_DIR) +
                   "/tests/harness/fixtures/dlrm_like.activity.json");
  return activity_from_json(nlohmann::json::parse(in));
}

/// Peaks chosen for round floors: 4 GB/s, 10 TFLOP/s FP32, 100 TF32.
kernels::DevicePeaks test_peaks() { return {"test device", 100e12, 200e12, 4e9, 10e12}; }

/// One iteration's declared launches, twice (the window's two iterations).
LaunchPlan declared_window() {
  LaunchPlan one = {
      {"embedding_forward_kernel", "lookups", "forward", {20000, 0, ""}},
      {"gemm", "bottom layer 0 forward", "forward", {0, 2e6, "tf32"}},
      {"gemm", "top layer 0 forward", "forward", {0, 2e6, "tf32"}},
      {"interaction_forward_kernel", "interaction", "forward", {8000, 1e5, "fp32"}},
      {"bce_kernel", "loss", "loss", {400, 0, ""}},
  };
  LaunchPlan two = one;
  two.insert(two.end(), one.begin(), one.end());
  return two;
}

// `part` is a plain pointer: GCC 13 flags a reference returned next to a
// temporary std::string argument (-Wdangling-reference).
const KernelRow& row(const KernelProfile& p, const char* part) {
  for (const KernelRow& r : p.rows) {
    if (r.name.find(part) != std::string::npos) return r;
  }
  throw std::runtime_error(std::string("no row ") + part);
}

TEST(KernelProfile, RowsPerKernelPerIterationMostTimeFirst) {
  const kernels::DevicePeaks peaks = test_peaks();
  // The two iterations took 50 us each on the device (CUDA events).
  const KernelProfile p = build_kernel_profile(fixture(), 2, 100, {}, &peaks, "");
  EXPECT_EQ(p.iterations, 2);
  EXPECT_DOUBLE_EQ(p.iteration_us, 50);
  EXPECT_DOUBLE_EQ(p.kernels_per_iteration, 4);
  EXPECT_DOUBLE_EQ(p.copies_per_iteration, 1);
  EXPECT_DOUBLE_EQ(p.memsets_per_iteration, 1);
  EXPECT_FALSE(p.declared_kernels_per_iteration);
  ASSERT_EQ(p.rows.size(), 6u);  // four kernels, the copies, the memsets; ranges are not rows
  EXPECT_NE(p.rows[0].name.find("tilesize128x128"), std::string::npos) << "20 us: the most time";
  EXPECT_EQ(p.rows[1].name,
            "perflab::kernels::cuda::embedding_forward_kernel(float const*, int const*, long "
            "const*, float*, long, int)")
      << "mangled names are demangled";
  const KernelRow& inter = row(p, "interaction_forward_kernel<32>");
  EXPECT_DOUBLE_EQ(inter.launches_per_iteration, 1);
  EXPECT_DOUBLE_EQ(inter.us_per_iteration, 8);
  EXPECT_DOUBLE_EQ(inter.mean_us, 8);
  EXPECT_DOUBLE_EQ(inter.share, 8.0 / 50);
  EXPECT_FALSE(inter.x_floor) << "nothing declared: no floor";
  const KernelRow& copy = row(p, "memcpy HtoD");
  EXPECT_EQ(copy.kind, "memcpy");
  EXPECT_DOUBLE_EQ(copy.us_per_iteration, 2);
}

TEST(KernelProfile, DeclaredWorkGivesRatesFloorsGroupsAndWhatDidNotRun) {
  const kernels::DevicePeaks peaks = test_peaks();
  const KernelProfile p = build_kernel_profile(fixture(), 2, 100, declared_window(), &peaks, "");
  EXPECT_DOUBLE_EQ(*p.declared_kernels_per_iteration, 5);
  EXPECT_EQ(p.peaks, "test device");

  // Embedding: 20000 B in 10 us = 2 GB/s; floor 20000 B / 4 GB/s = 5 us: 2x.
  const KernelRow& emb = row(p, "embedding_forward_kernel");
  EXPECT_EQ(emb.declared, "embedding_forward_kernel");
  EXPECT_DOUBLE_EQ(*emb.declared_launches, 1);
  EXPECT_DOUBLE_EQ(*emb.achieved_gbs, 2);
  EXPECT_FALSE(emb.achieved_tflops);
  EXPECT_DOUBLE_EQ(*emb.floor_us, 5);
  EXPECT_DOUBLE_EQ(*emb.x_floor, 2);

  // Interaction: 8000 B (2 us) and 1e5 FP32 FLOPs (0.01 us): floor 2 us, 8 us ran: 4x.
  const KernelRow& inter = row(p, "interaction_forward_kernel");
  EXPECT_DOUBLE_EQ(*inter.floor_us, 2);
  EXPECT_DOUBLE_EQ(*inter.x_floor, 4);
  EXPECT_DOUBLE_EQ(*inter.achieved_tflops, 1e5 / 8e-6 / 1e12);
  EXPECT_EQ(inter.precision, "fp32");

  // "gemm" matches two cuBLASLt kernels: a group, 4e6 TF32 FLOPs per
  // iteration (0.04 us at 100 TFLOP/s) in 25 us.
  ASSERT_EQ(p.groups.size(), 1u);
  const KernelGroup& g = p.groups[0];
  EXPECT_EQ(g.declared, "gemm");
  EXPECT_EQ(g.rows, 2);
  EXPECT_DOUBLE_EQ(g.declared_launches, 2);
  EXPECT_DOUBLE_EQ(g.launches_per_iteration, 2);
  EXPECT_DOUBLE_EQ(g.us_per_iteration, 25);
  EXPECT_DOUBLE_EQ(g.share, 0.5);
  EXPECT_NEAR(*g.floor_us, 0.04, 1e-12);
  EXPECT_NEAR(*g.x_floor, 625, 1e-6);
  EXPECT_TRUE(row(p, "tilesize64x64").declared.empty()) << "a group's rows carry no per-row floor";

  ASSERT_EQ(p.unmatched.size(), 1u);
  EXPECT_EQ(p.unmatched[0], "bce_kernel: declared 1 per iteration, none ran");
}

TEST(KernelProfile, WithoutPeaksThereAreRatesButNoFloors) {
  const KernelProfile p =
      build_kernel_profile(fixture(), 2, 100, declared_window(), nullptr, "no CUDA device");
  EXPECT_EQ(p.peaks, "no CUDA device");
  const KernelRow& emb = row(p, "embedding_forward_kernel");
  EXPECT_DOUBLE_EQ(*emb.achieved_gbs, 2);
  EXPECT_FALSE(emb.floor_us);
  EXPECT_FALSE(emb.x_floor);
}

TEST(KernelProfile, WithoutDeviceTimeTheRecordsSpanIsTheWindow) {
  // First record starts at 1,000,000 ns, the last ends at 1,146,000 ns.
  const KernelProfile p = build_kernel_profile(fixture(), 2, 0, {}, nullptr, "");
  EXPECT_DOUBLE_EQ(p.iteration_us, 146.0 / 2);
}

TEST(KernelProfile, AnUntimedRecordCountsAsALaunchButNotOnTheClock) {
  ActivityLog log = fixture();
  // CUPTI gives 0 and 0 for a kernel it could not time.
  log.records.push_back({ActivityKind::kKernel, "untimed_kernel", 0, 0, 0, 7, 0, 0, 0});
  const KernelProfile p = build_kernel_profile(log, 2, 0, {}, nullptr, "");
  EXPECT_DOUBLE_EQ(p.iteration_us, 146.0 / 2) << "the span is the timed records'";
  EXPECT_DOUBLE_EQ(p.kernels_per_iteration, 4.5);
  EXPECT_DOUBLE_EQ(row(p, "untimed_kernel").us_per_iteration, 0);
  const nlohmann::json t = chrome_trace(log, "t");
  EXPECT_EQ(t["otherData"]["untimed_records"], 1);
  for (const auto& e : t["traceEvents"]) {
    EXPECT_NE(e["name"], "untimed_kernel");
    if (e["ph"] == "X") {
      EXPECT_LT(e["ts"].get<double>(), 1e6) << "the origin is the first timed record";
    }
  }
}

// Busy time: the fixture's records follow each other, 46 us an iteration
// with no overlap, the iterations 100 us apart: 92 us of the records' 146
// us span, whatever the events' window says.
TEST(KernelProfile, BusyShareAndConcurrencyOfTheFixture) {
  const KernelProfile p = build_kernel_profile(fixture(), 2, 100, {}, nullptr, "");
  ASSERT_TRUE(p.busy_share && p.concurrency);
  EXPECT_DOUBLE_EQ(*p.busy_share, 92.0 / 146);
  EXPECT_DOUBLE_EQ(*p.concurrency, 1.0);
  EXPECT_DOUBLE_EQ(*build_kernel_profile(fixture(), 2, 0, {}, nullptr, "").busy_share, 92.0 / 146);
  // The one idle gap: the first iteration's memset to the second's copy,
  // 54 us, over two iterations.
  ASSERT_EQ(p.idle_gaps.size(), 1u);
  EXPECT_EQ(p.idle_gaps[0].before, "memset");
  EXPECT_EQ(p.idle_gaps[0].after, "memcpy HtoD");
  EXPECT_DOUBLE_EQ(p.idle_gaps[0].us_per_iteration, 27);
  EXPECT_DOUBLE_EQ(p.idle_gaps[0].gaps_per_iteration, 0.5);
}

// The last-arrival path's busy waits. One iteration, three streams (us):
// the chain A 0-10, B 10-20, C 60-70, D 80-90, E 100-110; beside it the
// update U 12-64 and a weight gradient W 50-65 (neither ends before C
// starts), and Y 95-105. From E (the last to end) back: the record that
// ended last before E started is D (90; Y is still running), and Y ran 5
// of the 10 us between: a busy wait of 5 (the idle 5 are idle_gaps'). D's
// is C: nothing ran between (idle). C's is B (20; U and W still running),
// U beside it for all 40 us, W 10 of them: 40 busy. B's is A, touching.
TEST(KernelProfile, BusyWaitsFollowTheLastArrivalPathAndNameWhatRanBeside) {
  ActivityLog log;
  const auto add = [&log](const char* name, uint32_t stream, uint64_t from_us, uint64_t to_us) {
    log.records.push_back({ActivityKind::kKernel, name, 1000000 + 1000 * from_us, 1000000 + 1000 * to_us, 0, stream,
                           0, 0, 0});
  };
  add("A", 7, 0, 10);
  add("B", 7, 10, 20);
  add("U", 8, 12, 64);
  add("W", 9, 50, 65);
  add("C", 7, 60, 70);
  add("D", 7, 80, 90);
  add("Y", 8, 95, 105);
  add("E", 7, 100, 110);
  const KernelProfile p = build_kernel_profile(log, 1, 0, {}, nullptr, "");
  ASSERT_EQ(p.busy_waits.size(), 2u);
  EXPECT_EQ(p.busy_waits[0].before, "B");
  EXPECT_EQ(p.busy_waits[0].after, "C");
  EXPECT_EQ(p.busy_waits[0].beside, "U");
  EXPECT_DOUBLE_EQ(p.busy_waits[0].us_per_iteration, 40);
  EXPECT_DOUBLE_EQ(p.busy_waits[0].waits_per_iteration, 1);
  EXPECT_EQ(p.busy_waits[1].before, "D");
  EXPECT_EQ(p.busy_waits[1].after, "E");
  EXPECT_EQ(p.busy_waits[1].beside, "Y");
  EXPECT_DOUBLE_EQ(p.busy_waits[1].us_per_iteration, 5);
  // Through JSON and back, and in a profile without the field (older results): none.
  const nlohmann::json j = kernel_profile_to_json(p);
  EXPECT_EQ(kernel_profile_to_json(kernel_profile_from_json(j)), j);
  nlohmann::json old = j;
  old.erase("busy_waits");
  EXPECT_TRUE(kernel_profile_from_json(old).busy_waits.empty());
  old["busy_waits"] = {{{"before", "B"}}};
  EXPECT_THROW(kernel_profile_from_json(old), UsageError);
  // The same step twice: the same waits per iteration, counted per iteration.
  ActivityLog twice = log;
  for (ActivityRecord r : log.records) {
    r.start_ns += 200000;
    r.end_ns += 200000;
    twice.records.push_back(r);
  }
  const KernelProfile q = build_kernel_profile(twice, 2, 0, {}, nullptr, "");
  ASSERT_GE(q.busy_waits.size(), 2u);
  EXPECT_EQ(q.busy_waits[0].after, "C");
  EXPECT_DOUBLE_EQ(q.busy_waits[0].us_per_iteration, 40);
  EXPECT_DOUBLE_EQ(q.busy_waits[0].waits_per_iteration, 1);
}

// Two streams: a kernel at 0-10 us, another at 5-15 us, a copy at 20-22
// us, an untimed kernel and a range: busy 15 + 2 of the span's 22 us,
// running 22 us in all.
TEST(KernelProfile, OverlapCountsOnceInTheBusyTimeAndRaisesTheConcurrency) {
  ActivityLog log;
  log.records.push_back({ActivityKind::kKernel, "a", 1000000, 1010000, 0, 7, 0, 0, 0});
  log.records.push_back({ActivityKind::kKernel, "b", 1005000, 1015000, 0, 8, 0, 0, 0});
  log.records.push_back({ActivityKind::kMemcpy, "memcpy HtoD", 1020000, 1022000, 0, 9, 4096, 0, 0});
  log.records.push_back({ActivityKind::kKernel, "untimed", 0, 0, 0, 7, 0, 0, 0});
  log.records.push_back({ActivityKind::kRange, "iteration", 990000, 1030000, 0, 0, 0, 0, 0});
  const KernelProfile p = build_kernel_profile(log, 1, 30, {}, nullptr, "");
  ASSERT_TRUE(p.busy_share && p.concurrency);
  EXPECT_DOUBLE_EQ(*p.busy_share, 17.0 / 22);
  EXPECT_DOUBLE_EQ(*p.concurrency, 22.0 / 17);
  // The gap is named by the record that ended the stretch last (b, not a).
  ASSERT_EQ(p.idle_gaps.size(), 1u);
  EXPECT_EQ(p.idle_gaps[0].before, "b");
  EXPECT_EQ(p.idle_gaps[0].after, "memcpy HtoD");
  EXPECT_DOUBLE_EQ(p.idle_gaps[0].us_per_iteration, 5);
  // Touching records merge: a kernel from 22 us to 30 us leaves no gap.
  log.records.push_back({ActivityKind::kKernel, "c", 1022000, 1030000, 0, 7, 0, 0, 0});
  const KernelProfile touching = build_kernel_profile(log, 1, 30, {}, nullptr, "");
  EXPECT_DOUBLE_EQ(*touching.busy_share, 25.0 / 30);
  EXPECT_DOUBLE_EQ(*touching.concurrency, 30.0 / 25);
  EXPECT_EQ(touching.idle_gaps.size(), 1u) << "no gap where c starts as the copy ends";
  // Gaps between the same two names add up; the pairs most idle first, at
  // most kIdleGapsKept of them.
  ActivityLog many;
  uint64_t t = 1000000;
  for (int i = 0; i < 12; ++i) {
    many.records.push_back({ActivityKind::kKernel, "k" + std::to_string(i), t, t + 1000, 0, 7, 0, 0, 0});
    t += 1000 + 100 * static_cast<uint64_t>(i + 1);  // a gap after k_i of (i + 1) * 0.1 us
  }
  many.records.push_back({ActivityKind::kKernel, "k0", t, t + 1000, 0, 7, 0, 0, 0});
  const KernelProfile m = build_kernel_profile(many, 2, 0, {}, nullptr, "");
  ASSERT_EQ(m.idle_gaps.size(), kIdleGapsKept);
  EXPECT_EQ(m.idle_gaps[0].before, "k11");
  EXPECT_EQ(m.idle_gaps[0].after, "k0");
  EXPECT_DOUBLE_EQ(m.idle_gaps[0].us_per_iteration, 1.2 / 2);
  EXPECT_EQ(m.idle_gaps[1].before, "k10");
  EXPECT_EQ(m.idle_gaps.back().before, "k4");
  // Nothing timed: neither.
  ActivityLog untimed;
  untimed.records.push_back({ActivityKind::kKernel, "untimed", 0, 0, 0, 7, 0, 0, 0});
  const KernelProfile u = build_kernel_profile(untimed, 1, 30, {}, nullptr, "");
  EXPECT_FALSE(u.busy_share);
  EXPECT_FALSE(u.concurrency);
  const KernelProfile back = kernel_profile_from_json(kernel_profile_to_json(u));
  EXPECT_FALSE(back.busy_share);
}

// A gap longer than a whole iteration (the span over the iterations) is a
// stall, not the step's: 10 us kernels a and b alternating with 2 us gaps,
// then a 500 us pause, in a two-iteration window of 556 us.
TEST(KernelProfile, AGapLongerThanAnIterationIsAStallLeftOutOfTheBusyShare) {
  ActivityLog log;
  const uint64_t starts[] = {1000000, 1012000, 1024000, 1036000, 1546000};
  const char* names[] = {"a", "b", "a", "b", "a"};
  for (int i = 0; i < 5; ++i) {
    log.records.push_back({ActivityKind::kKernel, names[i], starts[i], starts[i] + 10000, 0, 7, 0, 0, 0});
  }
  const KernelProfile p = build_kernel_profile(log, 2, 0, {}, nullptr, "");
  EXPECT_EQ(p.stalls, 1);
  EXPECT_DOUBLE_EQ(p.stall_us, 500);
  EXPECT_DOUBLE_EQ(*p.busy_share, 50.0 / 56);
  ASSERT_EQ(p.idle_gaps.size(), 2u);
  EXPECT_EQ(p.idle_gaps[0].before, "a");
  EXPECT_EQ(p.idle_gaps[0].after, "b");
  EXPECT_DOUBLE_EQ(p.idle_gaps[0].us_per_iteration, 2);
  EXPECT_DOUBLE_EQ(p.idle_gaps[0].gaps_per_iteration, 1);
  EXPECT_EQ(p.idle_gaps[1].before, "b");
  EXPECT_DOUBLE_EQ(p.idle_gaps[1].us_per_iteration, 1) << "the 500 us b -> a pause is not in it";
  const KernelProfile back = kernel_profile_from_json(kernel_profile_to_json(p));
  EXPECT_EQ(back.stalls, 1);
  EXPECT_DOUBLE_EQ(back.stall_us, 500);
}

TEST(KernelProfile, JsonRoundTripKeepsEveryField) {
  const kernels::DevicePeaks peaks = test_peaks();
  KernelProfile p = build_kernel_profile(fixture(), 2, 100, declared_window(), &peaks, "");
  p.profiled_iteration_ms = 0.052;
  p.unprofiled_iteration_ms = 0.050;
  p.trace = "trace_0.json";
  const nlohmann::json j = kernel_profile_to_json(p);
  EXPECT_EQ(j["version"], kKernelProfileVersion);
  EXPECT_NEAR(j["overhead"].get<double>(), 1.04, 1e-12);
  const KernelProfile back = kernel_profile_from_json(j);
  EXPECT_EQ(kernel_profile_to_json(back), j);
  EXPECT_NEAR(*back.overhead(), 1.04, 1e-12);
  EXPECT_DOUBLE_EQ(*back.busy_share, 92.0 / 146);
  EXPECT_DOUBLE_EQ(*back.concurrency, 1.0);
}

// Golden output: the table of the fixture as result.json carries it
// (tests/harness/fixtures/dlrm_like.profile.json, also what the CLI tests
// feed to report and compare). A deliberate format change rewrites it: the
// actual output is left in the build folder to compare and copy.
TEST(KernelProfile, JsonMatchesTheGoldenFile) {
  const kernels::DevicePeaks peaks = test_peaks();
  KernelProfile p = build_kernel_profile(fixture(), 2, 100, declared_window(), &peaks, "");
  p.profiled_iteration_ms = 0.052;
  p.unprofiled_iteration_ms = 0.050;
  const nlohmann::json actual = kernel_profile_to_json(p);
  const std::string golden =
      std::string(PERFLAB_SOURCE_DIR) + "/tests/harness/fixtures/dlrm_like.profile.json";
  std::ifstream in(golden);
  ASSERT_TRUE(in) << golden;
  const nlohmann::json expected = nlohmann::json::parse(in);
  if (actual != expected) {
    const std::string out = std::string(PERFLAB_BINARY_DIR) + "/dlrm_like.profile.actual.json";
    std::ofstream(out) << actual.dump(1) << "\n";
    FAIL() << "the profile JSON differs from " << golden << "; actual output in " << out;
  }
}

TEST(KernelProfile, DamagedJsonIsOneLineNamingTheField) {
  nlohmann::json j =
      kernel_profile_to_json(build_kernel_profile(fixture(), 2, 100, {}, nullptr, ""));
  nlohmann::json bad = j;
  bad["version"] = 99;
  EXPECT_THROW(
      {
        try {
          kernel_profile_from_json(bad);
        } catch (const UsageError& e) {
          EXPECT_STREQ(e.what(), "profile: version 99 is not one this perflab reads (1 to 1)");
          throw;
        }
      },
      UsageError);
  bad = j;
  bad["rows"][1]["us_per_iteration"] = "fast";
  try {
    kernel_profile_from_json(bad);
    FAIL() << "a string time must be refused";
  } catch (const UsageError& e) {
    EXPECT_STREQ(e.what(), "profile.rows[1].us_per_iteration: not a number of the expected range");
  }
  bad = j;
  bad.erase("rows");
  EXPECT_THROW(kernel_profile_from_json(bad), UsageError);
}

TEST(ActivityJson, RoundTripsAndRefusesWhatCannotBe) {
  const ActivityLog log = fixture();
  EXPECT_EQ(log.records.size(), 2u * 8);
  EXPECT_EQ(activity_to_json(activity_from_json(activity_to_json(log))), activity_to_json(log));
  nlohmann::json bad = activity_to_json(log);
  bad["records"][0]["kind"] = "event";
  EXPECT_THROW(activity_from_json(bad), UsageError);
  bad = activity_to_json(log);
  bad["records"][3]["end_ns"] = 1;  // before its start
  EXPECT_THROW(activity_from_json(bad), UsageError);
}

TEST(KernelProfile, ADeclarationMayListAlternatives) {
  EXPECT_TRUE(kernel_matches("nvjet_tst_128x64_64x4_1x1_v_bz_TNT", "gemm|gemv|nvjet|splitK"));
  EXPECT_TRUE(kernel_matches("sm90_xmma_gemm_f32f32", "gemm|gemv|nvjet|splitK"));
  EXPECT_TRUE(kernel_matches("void splitKreduce_kernel<32, 16>(...)", "gemm|gemv|nvjet|splitK"));
  EXPECT_FALSE(kernel_matches("embedding_forward_kernel", "gemm|gemv|nvjet|splitK"));
  EXPECT_FALSE(kernel_matches("anything", ""));
  EXPECT_FALSE(kernel_matches("anything", "|"));
  // Hopper's nvjet kernels join the declared GEMM group.
  ActivityLog log = fixture();
  log.records.push_back({ActivityKind::kKernel, "nvjet_tst_128x64_64x4_1x1_v_bz_TNT", 1000000, 1004000, 0, 7, 0, 0, 0});
  LaunchPlan plan = {{"gemm|gemv|nvjet|splitK", "a GEMM", "forward", {0, 1e6, "tf32"}}};
  const KernelProfile p = build_kernel_profile(log, 2, 100, plan, nullptr, "");
  ASSERT_EQ(p.groups.size(), 1u);
  EXPECT_EQ(p.groups[0].rows, 3);
  EXPECT_TRUE(p.unmatched.empty());
}

TEST(Demangle, DemanglesCxxSymbolsAndLeavesOthers) {
  EXPECT_EQ(
      demangle("_ZN7perflab7kernels4cuda26interaction_forward_kernelILi32EEEvPKfPfi"),
      "void perflab::kernels::cuda::interaction_forward_kernel<32>(float const*, float*, int)");
  EXPECT_EQ(demangle("sm90_xmma_gemm_f32f32"), "sm90_xmma_gemm_f32f32");
  EXPECT_EQ(demangle("_Znot a symbol"), "_Znot a symbol");
}

TEST(LaunchPlan, CountsPerPhaseInFirstSeenOrder) {
  LaunchPlan plan = declared_window();
  plan.resize(5);
  const auto phases = launches_per_phase(plan);
  ASSERT_EQ(phases.size(), 2u);
  EXPECT_EQ(phases[0], (std::pair<std::string, int>{"forward", 4}));
  EXPECT_EQ(phases[1], (std::pair<std::string, int>{"loss", 1}));
}

TEST(Phases, ARangeClosesInTheRecordingItOpenedIn) {
  uint64_t clock = 0;
  auto tick = [&clock] { return clock += 10; };
  PhaseRecording outer(tick);
  std::vector<ActivityRecord> inner_ranges;
  {
    ScopedPhase run("run");
    {
      PhaseRecording inner(tick);
      ScopedPhase step("step");
      { ScopedPhase forward("forward"); }
      inner_ranges = inner.take();
    }
  }
  std::vector<ActivityRecord> outer_ranges = outer.take();
  ASSERT_EQ(inner_ranges.size(), 1u) << "forward closed; step still open when taken";
  EXPECT_EQ(inner_ranges[0].name, "forward");
  EXPECT_EQ(inner_ranges[0].depth, 1);
  ASSERT_EQ(outer_ranges.size(), 1u) << "step belonged to the inner recording, not the outer";
  EXPECT_EQ(outer_ranges[0].name, "run");
  EXPECT_EQ(outer_ranges[0].depth, 0);
  EXPECT_LT(outer_ranges[0].start_ns, outer_ranges[0].end_ns);
}

TEST(ChromeTrace, EveryRecordIsACompleteEventOnItsTrack) {
  const nlohmann::json t = chrome_trace(fixture(), "perflab run test");
  // It serialises and parses back as the trace viewers read it.
  const nlohmann::json trace = nlohmann::json::parse(t.dump());
  ASSERT_TRUE(trace["traceEvents"].is_array());
  EXPECT_EQ(trace["displayTimeUnit"], "ns");
  EXPECT_EQ(trace["otherData"]["title"], "perflab run test");
  std::set<std::string> threads;
  int complete = 0;
  bool saw_demangled = false, saw_range = false;
  for (const auto& e : trace["traceEvents"]) {
    ASSERT_TRUE(e.contains("ph") && e.contains("pid") && e.contains("tid") && e.contains("name"))
        << e.dump();
    if (e["ph"] == "M") {
      if (e["name"] == "thread_name") threads.insert(e["args"]["name"].get<std::string>());
      continue;
    }
    ASSERT_EQ(e["ph"], "X") << e.dump();
    ++complete;
    EXPECT_GE(e["ts"].get<double>(), 0.0);
    EXPECT_GE(e["dur"].get<double>(), 0.0);
    if (e["cat"] == "range") {
      saw_range = true;
      EXPECT_EQ(e["pid"], 0) << "phases on the host's track";
    } else {
      EXPECT_EQ(e["pid"], 1) << "device 0 is process 1";
    }
    if (e["name"] ==
        "perflab::kernels::cuda::embedding_forward_kernel(float const*, int const*, long const*, "
        "float*, long, int)") {
      saw_demangled = true;
      EXPECT_EQ(e["tid"], 7);
      EXPECT_DOUBLE_EQ(e["dur"].get<double>(), 10.0);  // us
    }
    if (e["name"] == "memcpy HtoD") {
      EXPECT_EQ(e["args"]["bytes"], 4096);
    }
  }
  EXPECT_EQ(complete, 16);
  EXPECT_TRUE(saw_demangled);
  EXPECT_TRUE(saw_range);
  EXPECT_EQ(threads, (std::set<std::string>{"phases (NVTX)", "stream 7", "stream 14"}));
}

}  // namespace
}  // namespace perflab
