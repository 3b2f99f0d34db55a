// Throughput results end to end in memory: the runner's record serialised
// by result_to_json (kind, score, gate, work and floor), accepted by
// validate_result, rendered as the per-invocation report and summary.
#include <gtest/gtest.h>

#include <string>

#include <fstream>

#include "harness/result.h"
#include "harness/runner.h"
#include "reports/throughput_report.h"

namespace perflab {
namespace {

InvocationRecord throughput_record(bool gate_passes) {
  InvocationRecord rec;
  rec.spec.workload = "transducer";
  rec.spec.preset = "mlperf";
  rec.spec.mode = RunMode::kThroughput;
  rec.spec.iterations = 50;
  rec.spec.warmup_iterations = 5;
  rec.spec.seeds = {1, 2, 3};
  rec.spec.threads = 16;
  rec.spec.backend = Backend::kCuda;
  rec.step.batch_size = 64;
  rec.step.sample_unit = "sequences";
  rec.step.work.bytes = 4e9;
  rec.step.work.floor_ms = 1.2;
  rec.step.work.floor_basis = "bytes / 3352 GB/s (test)";
  for (uint64_t seed : rec.spec.seeds) {
    RunRecord r;
    r.seed = seed;
    r.success = gate_passes || seed != 2;
    r.status = r.success ? "success" : "aborted";
    r.correctness = CorrectnessReport{r.success, r.success ? "costs within 1e-4" : "costs off by 3"};
    r.reason = (r.success ? "correctness gate passed: " : "correctness gate failed: ") + r.correctness->detail;
    r.throughput = 1000.0 * static_cast<double>(seed);
    r.iteration_ms = summarize({2.0, 2.0, 2.0});
    r.host_iteration_ms = summarize({0.05, 0.05});
    r.device_timed = true;
    r.log_file = "run_" + std::to_string(seed - 1) + ".log";
    rec.runs.push_back(r);
  }
  rec.score = score_records(rec.runs, RunMode::kThroughput);
  return rec;
}

TEST(ThroughputResult, SerialisesKindScoreGateAndFloor) {
  nlohmann::json j = result_to_json(throughput_record(true), {{"cpu_model", "test"}});
  EXPECT_EQ(validate_result(j), "");
  EXPECT_EQ(j["kind"], "throughput");
  EXPECT_TRUE(j["quality"]["target"].is_null());
  EXPECT_TRUE(j["score"]["time_to_train_s"].is_null());
  EXPECT_DOUBLE_EQ(j["score"]["throughput_samples_per_s"].get<double>(), 2000.0);  // median of 1000, 2000, 3000
  EXPECT_EQ(j["score"]["method"], "median of 3");
  EXPECT_EQ(j["runs"][0]["iteration_timer"], "cuda events");
  EXPECT_EQ(j["runs"][0]["correctness"]["passed"], true);
  EXPECT_DOUBLE_EQ(j["work"]["median_iteration_ms"].get<double>(), 2.0);
  EXPECT_DOUBLE_EQ(j["work"]["achieved_gbytes_per_s"].get<double>(), 2000.0);  // 4e9 B / 2 ms
  EXPECT_DOUBLE_EQ(j["work"]["times_floor"].get<double>(), 2.0 / 1.2);
  EXPECT_EQ(j["spec"]["mode"], "throughput");
}

TEST(ThroughputResult, FailedGateLeavesNoScoreAndSaysWhich) {
  nlohmann::json j = result_to_json(throughput_record(false), {{"cpu_model", "test"}});
  EXPECT_EQ(validate_result(j), "");
  EXPECT_TRUE(j["score"]["throughput_samples_per_s"].is_null());
  EXPECT_EQ(j["score"]["reason"], "seed 2: correctness gate failed: costs off by 3");
  std::string summary = reports::render_run_summary(j);
  EXPECT_NE(summary.find("throughput: no score: seed 2: correctness gate failed: costs off by 3"),
            std::string::npos)
      << summary;
  EXPECT_NE(summary.find("gate FAILED: costs off by 3"), std::string::npos) << summary;
}

TEST(ThroughputReport, MarkdownHasRunsGateAndFloor) {
  InvocationRecord rec = throughput_record(true);
  rec.prepare_s = 12.5;  // a slow setup is said, not hidden (issue 27)
  for (RunRecord& r : rec.runs) r.init_s = 0.25;
  nlohmann::json j = result_to_json(rec, {{"cpu_model", "test"}});
  std::string md = reports::render_run_markdown(j);
  EXPECT_NE(md.find("# perflab: transducer (preset mlperf) on cuda"), std::string::npos) << md;
  EXPECT_NE(md.find("- mode: throughput, 50 timed iterations after 5 warm-up, batch 64"), std::string::npos) << md;
  EXPECT_NE(md.find("| # | seed | status | sequences/s | iteration p50 (ms) |"), std::string::npos) << md;
  EXPECT_NE(md.find("| 1 | 2 | success | 2000 | 2.0000 | 2.0000 | cuda events | 0.0500 | passed: costs within 1e-4 |"),
            std::string::npos)
      << md;
  EXPECT_NE(md.find("**Throughput:** 2000 sequences/s (median of 3)"), std::string::npos) << md;
  EXPECT_NE(md.find("- roofline floor: 1.2000 ms (bytes / 3352 GB/s (test)); measured / floor: 1.67x"),
            std::string::npos)
      << md;
  std::string summary = reports::render_run_summary(j);
  EXPECT_NE(summary.find("roofline floor 1.2000 ms; measured 2.0000 ms = 1.67x the floor"), std::string::npos)
      << summary;
  const std::string setup = "setup: prepare 12.500 s (data and configuration, once), init 0.250 s per run (median)";
  EXPECT_NE(summary.find(setup), std::string::npos) << summary;
  EXPECT_NE(md.find("- " + setup), std::string::npos) << md;
}

TEST(ThroughputReport, RanksPlacementAndExchangeBytes) {
  InvocationRecord rec = throughput_record(true);
  rec.step.data = {
      {"placement",
       {{"strategy", "table-wise"},
        {"ranks", {{{"rank", 0}, {"tables", {0, 2}}, {"rows", 150}}, {{"rank", 1}, {"tables", {1}}, {"rows", 140}}}}}},
      {"all_to_all_bytes_per_iteration", {{"forward", 2048.0}, {"backward", 2048.0}, {"total", 4096.0}}},
      {"model_parallel_all_to_all_bytes_per_iteration", {{"total", 16384.0}}},
      {"all_to_all_reduction", 0.75}};
  nlohmann::json j = result_to_json(rec, {{"cpu_model", "test"}});
  const std::string summary = reports::render_run_summary(j);
  EXPECT_NE(summary.find("2 ranks, placement: rank 0: tables 0, 2 (150 rows); rank 1: tables 1 (140 rows)\n"),
            std::string::npos)
      << summary;
  EXPECT_NE(summary.find("all-to-all per iteration (all ranks): forward 2.0 KiB, backward 2.0 KiB (hybrid "
                         "embedding: 75.0% less than model parallel's 16.0 KiB)"),
            std::string::npos)
      << summary;
  const std::string md = reports::render_run_markdown(j);
  EXPECT_NE(md.find("## Ranks\n\n2 ranks; placement: table-wise\n\n- rank 0: tables 0, 2 (150 rows)\n"),
            std::string::npos)
      << md;
  // The projection fact: a Markdown table and one console line.
  rec.step.data["projection"] = {
      {"model", "the model"},
      {"assumptions", "weak scaling"},
      {"per_gpu_batch", 64},
      {"exchange_scale", 0.25},
      {"scales",
       {{{"gpus", 8}, {"nodes", 1}, {"gpus_per_node", 8}, {"link", "h100"}, {"global_batch", 512},
         {"all_to_all_bytes", 2048.0}, {"all_to_all_us", 12.5}, {"all_reduce_bytes", 4.0 * 1048576},
         {"all_reduce_algorithm", "RING"}, {"all_reduce_us", 30.0}, {"sharp_all_reduce_algorithm", "NVLS"},
         {"sharp_all_reduce_us", 20.0}, {"communication_us", 55.0}, {"sharp_communication_us", 45.0}}}}};
  const nlohmann::json projected = result_to_json(rec, {});
  const std::string projected_md = reports::render_run_markdown(projected);
  EXPECT_NE(projected_md.find("## Communication at 8, 64 and 512 GPUs (projected)"), std::string::npos) << projected_md;
  EXPECT_NE(projected_md.find("hybrid embedding: all-to-all bytes x 0.250 as measured"), std::string::npos);
  EXPECT_NE(projected_md.find("| 8 | 1 x 8 (h100) | 512 | 2.0 KiB / 2.0 KiB | 12.5 us / 12.5 us | 4.0 MiB | 30 us RING | 20 us NVLS | "
                              "55 us | 45 us | 11.4M |"),
            std::string::npos)
      << projected_md;
  // A result with the backward direction of its own (bf16 rows forward, fp32
  // gradients back); the row above is an older result's (one size for both).
  rec.step.data["projection"]["scales"][0]["all_to_all_backward_bytes"] = 4096.0;
  rec.step.data["projection"]["scales"][0]["all_to_all_backward_us"] = 20.0;
  const std::string directions_md = reports::render_run_markdown(result_to_json(rec, {}));
  EXPECT_NE(directions_md.find("| 512 | 2.0 KiB / 4.0 KiB | 12.5 us / 20 us | 4.0 MiB |"), std::string::npos)
      << directions_md;
  EXPECT_NE(reports::render_run_summary(projected).find(
                "projected communication per iteration (weak scaling; ring/tree, SHARP/NVLS): 8 GPUs 55 us / 45 us\n"),
            std::string::npos)
      << reports::render_run_summary(projected);
  // One rank: no placement, nothing said.
  EXPECT_EQ(reports::render_run_summary(result_to_json(throughput_record(true), {})).find("placement"),
            std::string::npos);
  // Free-form data of the wrong shape is shown as "?", never thrown on.
  rec.step.data = {{"placement", {{"ranks", {1, {{"rank", "x"}, {"tables", 3}}}}}},
                   {"all_to_all_bytes_per_iteration", {{"forward", "many"}}}};
  const std::string odd = reports::render_run_summary(result_to_json(rec, {}));
  EXPECT_NE(odd.find("2 ranks, placement: rank ?: tables ? (? rows); rank ?: tables ? (? rows)\n"),
            std::string::npos)
      << odd;
  EXPECT_EQ(odd.find("all-to-all"), std::string::npos) << odd;
}

TEST(ThroughputReport, ProfiledRunsShowTheirKernelsAndLaunches) {
  InvocationRecord rec = throughput_record(true);
  std::ifstream in(std::string(PERFLAB_SOURCE_DIR) + "/tests/harness/fixtures/dlrm_like.profile.json");
  rec.runs[0].profile = kernel_profile_from_json(nlohmann::json::parse(in));
  rec.runs[0].profile->trace = "trace_0.json";
  rec.runs[0].profile->busy_waits.push_back(
      {"relu_bias_grad_kernel", "void gemm_kernel<float>(int)", "sgd_tiles_kernel", 358.0, 1.0});
  ExecutionRecord e;
  e.kernels_per_iteration = 4;
  e.copies_per_iteration = 1;
  e.memsets_per_iteration = 1;
  e.declared_kernels_per_iteration = 5;
  e.launches_counted_at = 4;
  e.launches_note = "counted by CUPTI over iteration 4";
  rec.runs[0].execution = e;
  ExecutionRecord uncounted;
  uncounted.launches_note = "CUPTI: cuptiActivityEnable: insufficient privileges";
  rec.runs[1].execution = uncounted;
  nlohmann::json j = result_to_json(rec, {{"cpu_model", "test"}});
  EXPECT_EQ(validate_result(j), "");
  EXPECT_EQ(j["runs"][0]["profile"]["version"], 1);
  EXPECT_TRUE(j["runs"][1]["profile"].is_null());
  EXPECT_EQ(j["runs"][0]["execution"]["launches_per_iteration"]["kernels"], 4);
  EXPECT_TRUE(j["runs"][1]["execution"]["launches_per_iteration"]["kernels"].is_null());

  const std::string md = reports::render_run_markdown(j);
  EXPECT_NE(md.find("## Kernels (--profile)"), std::string::npos) << md;
  EXPECT_NE(md.find("### Run 0 (seed 1): 2 profiled iterations"), std::string::npos) << md;
  EXPECT_NE(md.find("kernels per iteration: 4 (declared 5)"), std::string::npos) << md;
  EXPECT_NE(md.find("0.052 ms profiled / 0.050 ms unprofiled = 1.040x"), std::string::npos) << md;
  EXPECT_NE(md.find("- device busy (kernels, copies, memsets): 63% of the window, 1.00 at a time"), std::string::npos) << md;
  EXPECT_NE(md.find("| `memset` | `memcpy HtoD` | 27.0 | 0.5 |"), std::string::npos) << md;
  EXPECT_NE(md.find("| `relu_bias_grad_kernel` | `void gemm_kernel<float>(int)` | `sgd_tiles_kernel` | 358.0 | 1 |"),
            std::string::npos)
      << md;
  EXPECT_NE(md.find("| embedding_forward_kernel | 2 GB/s | 5.0 | 2.0x |"), std::string::npos) << md;
  EXPECT_NE(md.find("| gemm | 2 | 2 (2) | 25.0 | 50.0% | 0.0 | 625.0x |"), std::string::npos) << md;
  EXPECT_NE(md.find("declared but not run: bce_kernel: declared 1 per iteration, none ran"), std::string::npos)
      << md;
  EXPECT_NE(md.find("| 4 (5); copies 1, memsets 1 |"), std::string::npos) << md;
  EXPECT_NE(md.find("not counted: CUPTI: cuptiActivityEnable: insufficient privileges"), std::string::npos) << md;

  const std::string summary = reports::render_run_summary(j);
  EXPECT_NE(summary.find("run 0 kernels: 4 (declared 5) per iteration, 50.0 us of device time; profiler cost 1.040x"),
            std::string::npos)
      << summary;
  EXPECT_NE(summary.find(" 40.0%       20.0 us  x1"), std::string::npos) << summary;
  EXPECT_NE(summary.find("trace: trace_0.json"), std::string::npos) << summary;
}

}  // namespace
}  // namespace perflab
