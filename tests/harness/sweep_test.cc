// Sweep expansion, run keys, and the errors a sweep file gets: file:line
// and the reason, before anything runs.
#include "harness/sweep.h"

#include <unistd.h>

#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>

#include "harness/device.h"
#include "base/error.h"
#include "harness/registry.h"

namespace perflab {
namespace {

namespace fs = std::filesystem;

// A registered workload with a batch size and a learning rate, so sweep
// files can be checked without a real workload.
const bool kRegistered = [] {
  WorkloadInfo info;
  info.name = "sweeptoy";
  info.params = {{"batch_size", ParamType::kInt, "256", "batch", 1, 1 << 20},
                 {"learning_rate", ParamType::kFloat, "1", "lr", 0, 100},
                 {"warmup_steps", ParamType::kInt, "0", "warm-up", 0, 1e6}};
  info.presets = {{"tiny", "", {}}, {"big", "", {{"batch_size", "1024"}}}};
  info.default_preset = "tiny";
  info.backends = {Backend::kCpu};
  info.batch_param = "batch_size";
  info.learning_rate_param = "learning_rate";
  info.warmup_param = "warmup_steps";
  // A trainable workload by its factory's type; the sweeps here never run it.
  info.create_trainable = [](const RunContext&) { return std::unique_ptr<TrainableBenchmark>(); };
  Registry::instance().add(info);
  // Another workload whose batch and learning rate go by other names, and
  // one that declares neither.
  WorkloadInfo other = info;
  other.name = "othertoy";
  other.params = {{"batch", ParamType::kInt, "16", "batch", 1, 1 << 20},
                  {"lr", ParamType::kFloat, "1", "lr", 0, 100}};
  other.presets = {{"tiny", "", {}}};
  other.batch_param = "batch";
  other.learning_rate_param = "lr";
  other.warmup_param = "";
  Registry::instance().add(other);
  WorkloadInfo plain = other;
  plain.name = "plaintoy";
  plain.batch_param = plain.learning_rate_param = "";
  Registry::instance().add(plain);
  return true;
}();

/// The error for sweep-file text, as "line: reason". In memory: tests of
/// this file run in parallel processes, which must not share a file.
std::string sweep_error(const std::string& yaml) {
  try {
    parse_sweep_text(yaml, "perflab_sweep_test.yaml");
  } catch (const UsageError& e) {
    std::string m = e.what();
    return m.substr(m.find(':') + 1);  // drop the file name, keep "line: reason"
  }
  return "no error";
}

/// A file of this process's own, for the tests that read one from disk.
fs::path private_file(const std::string& name) {
  const fs::path dir = fs::temp_directory_path() / ("perflab_sweep_test_" + std::to_string(getpid()));
  fs::create_directories(dir);
  return dir / name;
}

TEST(ExpandSweep, CartesianProductWithLrRule) {
  RunRequest base;
  base.workload = "sweeptoy";
  base.seeds = 3;
  SweepAxes axes;
  axes.params["batch_size"] = {"256", "1024"};
  axes.toggles[Toggle::kCudaGraphs] = {true, false};
  axes.lr_rule = LrRule{"sqrt", 256, 0.5, 10};
  auto points = expand_sweep(base, axes);
  ASSERT_EQ(points.size(), 4u);
  EXPECT_EQ(points[0].overrides.at("batch_size"), "256");  // values in the order given
  for (const auto& p : points) {
    EXPECT_EQ(p.seeds, 3);
    EXPECT_EQ(p.overrides.at("warmup_steps"), "10");
    double lr = std::stod(p.overrides.at("learning_rate"));
    EXPECT_DOUBLE_EQ(lr, p.overrides.at("batch_size") == "1024" ? 1.0 : 0.5);  // 0.5*sqrt(4)
  }
  EXPECT_DOUBLE_EQ((LrRule{"linear", 256, 0.5, {}}).learning_rate(1024), 2.0);
  EXPECT_DOUBLE_EQ((LrRule{"fixed", 256, 0.5, {}}).learning_rate(1024), 0.5);
}

TEST(ExpandSweep, LrRuleFollowsTheParametersTheWorkloadDeclares) {
  RunRequest base;
  base.workload = "othertoy";
  SweepAxes axes;
  axes.params["batch"] = {"16", "64"};
  axes.lr_rule = LrRule{"linear", 16, 0.25, {}};
  auto points = expand_sweep(base, axes);
  ASSERT_EQ(points.size(), 2u);
  EXPECT_DOUBLE_EQ(std::stod(points[1].overrides.at("lr")), 1.0);  // 0.25 * 64/16
  EXPECT_EQ(points[1].overrides.count("learning_rate"), 0u);

  axes.lr_rule = LrRule{"linear", 16, 0.25, 10};
  try {
    expand_sweep(base, axes);
    FAIL() << "warm-up steps for a workload without a warm-up parameter";
  } catch (const UsageError& e) {
    EXPECT_STREQ(e.what(), "lr_rule.warmup_steps: othertoy declares no warm-up parameter");
  }
  EXPECT_EQ(sweep_error("workload: plaintoy\nparams: {batch: [1, 2]}\n"
                        "lr_rule: {rule: sqrt, base_batch_size: 1, base_learning_rate: 1}\n"),
            "3: lr_rule: plaintoy declares no batch-size and learning-rate parameters");
}

TEST(RunKey, StableAndSensitiveToWhatMatters) {
  RunRequest r;
  r.workload = "sweeptoy";
  r.threads = 2;
  DeviceProbe none;
  none.reason = "test: no device";
  const WorkloadInfo& info = Registry::instance().get("sweeptoy");
  RunSpec a = resolve_run_spec(r, info, none);
  RunSpec b = resolve_run_spec(r, info, none);
  EXPECT_EQ(run_key(a, 1), run_key(b, 1));
  EXPECT_EQ(run_key(a, 1).size(), 16u);
  EXPECT_NE(run_key(a, 1), run_key(a, 2));
  r.overrides["batch_size"] = "512";
  EXPECT_NE(run_key(resolve_run_spec(r, info, none), 1), run_key(a, 1));
  r.overrides.clear();
  r.toggles[Toggle::kFused] = true;
  EXPECT_NE(run_key(resolve_run_spec(r, info, none), 1), run_key(a, 1));
  // A run on 2 ranks is another run (a sweep re-run under mpirun -np 2 must
  // not reuse the 1-rank results); one rank keeps the keys it always had.
  RunSpec two = a;
  two.ranks = 2;
  EXPECT_NE(run_key(two, 1), run_key(a, 1));
  RunSpec four = a;
  four.ranks = 4;
  EXPECT_NE(run_key(four, 1), run_key(two, 1));
  EXPECT_EQ(a.ranks, 1);
}

TEST(SweepFile, ReadsAValidFile) {
  fs::path path = private_file("perflab_sweep_ok.yaml");
  std::ofstream(path) << "workload: sweeptoy\npreset: [tiny, big]\nparams:\n  warmup_steps: [0, 5]\n"
                         "toggles: {cuda-graphs: [on, off]}\nseeds: 2\n";
  SweepPlan plan = read_sweep_file(path);
  fs::remove_all(path.parent_path());
  EXPECT_EQ(plan.name, "perflab_sweep_ok");
  EXPECT_EQ(plan.points.size(), 8u);
  EXPECT_EQ(plan.points[0].seeds, 2);
  EXPECT_FALSE(plan.ntasks.has_value());
  path = private_file("perflab_sweep_ntasks.yaml");
  std::ofstream(path) << "workload: sweeptoy\nntasks: 3\n";
  EXPECT_EQ(read_sweep_file(path).ntasks, 3);
  fs::remove_all(path.parent_path());
}

TEST(SweepFile, ErrorsNameTheLineAndTheReason) {
  EXPECT_EQ(sweep_error("workload: sweeptoy\nsedes: 3\n"),
            "2: unknown key 'sedes' in the sweep file; valid keys: name, out, workload, workloads, "
            "preset, presets, params, toggles, seeds, first_seed, backend, threads, warmup, lr_rule, "
            "mode, iterations, ntasks, profile, inference");
  EXPECT_EQ(sweep_error("workload: sweeptoy\nmode: fast\n"),
            "2: mode 'fast' is not valid; valid values: time-to-train, throughput, inference");
  EXPECT_EQ(sweep_error("workload: sweeptoy\nseeds: many\n"), "2: seeds must be an integer, got 'many'");
  EXPECT_EQ(sweep_error("workload: sweeptoy\nparams:\n  batch_size: []\n"),
            "3: params.batch_size is an empty list: the sweep would run nothing");
  EXPECT_EQ(sweep_error("workload: sweeptoy\nparams:\n  batch_size: [256, 12x]\n"),
            "3: sweeptoy: parameter batch_size=12x: not an integer; expected int in [1, 1048576]");
  EXPECT_EQ(sweep_error("workload: sweeptoy\nparams:\n  bach: 1\n"),
            "3: sweeptoy: unknown parameter 'bach'; valid parameters: batch_size, learning_rate, "
            "warmup_steps");
  EXPECT_EQ(sweep_error("workload: sweeptoy\ntoggles:\n  graphs: on\n"),
            "3: unknown toggle 'graphs'; valid toggles: cuda_graphs, sharp, sync_free, fused");
  EXPECT_EQ(sweep_error("workload: nosuch\n"), "1: unknown workload 'nosuch'; valid workloads: " +
                                                   [] {
                                                     std::string all;
                                                     for (const auto& n : Registry::instance().names()) {
                                                       all += (all.empty() ? "" : ", ") + n;
                                                     }
                                                     return all;
                                                   }());
  EXPECT_EQ(sweep_error("workload: sweeptoy\nlr_rule: {rule: cubic, base_batch_size: 1, base_learning_rate: 1}\n"),
            "2: lr_rule.rule 'cubic' is not valid; valid values: linear, sqrt, fixed");
  EXPECT_EQ(sweep_error("workload: sweeptoy\nlr_rule: {rule: sqrt, base_batch_size: 1, base_learning_rate: 1}\n"),
            "2: lr_rule needs a params.batch_size list to follow");
  EXPECT_NE(sweep_error("workload: [sweeptoy\n").find(": not valid YAML:"), std::string::npos);
  EXPECT_EQ(sweep_error(""), "1: the sweep file is empty");
}

/// "[first, first + step, ...]": n values for a sweep file.
std::string yaml_list(int n, int first, int step = 1) {
  std::string out = "[";
  for (int i = 0; i < n; ++i) out += (i ? ", " : "") + std::to_string(first + i * step);
  return out + "]";
}

// Issue 13 (found by an earlier round of fuzzing; tests/fuzz/
// sweep_file_fuzz.cc drives this path): counts were cast to int without a
// range check, so 4294967297 seeds became 1 and 2^31 wrapped negative; an
// infinite base learning rate passed as "positive".
TEST(SweepFile, CountsAreRangeChecked) {
  EXPECT_EQ(sweep_error("workload: sweeptoy\nseeds: 4294967297\n"), "2: seeds must be in [1, 1000], got 4294967297");
  EXPECT_EQ(sweep_error("workload: sweeptoy\nseeds: 99999999999999999999\n"),
            "2: seeds must be in [1, 1000], got 99999999999999999999");
  EXPECT_EQ(sweep_error("workload: sweeptoy\nthreads: 0\n"), "2: threads must be in [1, 4096], got 0");
  EXPECT_EQ(sweep_error("workload: sweeptoy\nntasks: 0\n"), "2: ntasks must be in [1, 4096], got 0");
  EXPECT_EQ(sweep_error("workload: sweeptoy\nntasks: [1, 2]\n"), "2: ntasks must be a single value");
  EXPECT_EQ(sweep_error("workload: sweeptoy\nwarmup: -1\n"), "2: warmup must be in [0, 1000000000], got -1");
  EXPECT_EQ(sweep_error("workload: sweeptoy\niterations: 2147483648\n"),
            "2: iterations must be in [1, 1000000000], got 2147483648");
  EXPECT_EQ(sweep_error("workload: sweeptoy\nfirst_seed: 9223372036854775807\n"),
            "2: first_seed must be in [0, 9223372036854774807], got 9223372036854775807");
  EXPECT_EQ(sweep_error("workload: sweeptoy\nparams: {batch_size: [1, 2]}\n"
                        "lr_rule: {rule: sqrt, base_batch_size: 1, base_learning_rate: .inf}\n"),
            "3: lr_rule.base_learning_rate must be a positive finite number, got '.inf'");
}

// More than kMaxSweepPoints points is refused with one line, counted before
// expanding (a hundred million points must not be built first), from a sweep file
// and from comma lists alike.
TEST(SweepFile, MoreThanTenThousandPointsIsRefusedBeforeExpanding) {
  EXPECT_EQ(sweep_error("workload: sweeptoy\nparams:\n  batch_size: " + yaml_list(101, 1) +
                        "\n  warmup_steps: " + yaml_list(100, 0) + "\n"),
            "1: the sweep has 10100 points, more than 10000: split it into smaller sweeps");
  EXPECT_EQ(sweep_error("workload: sweeptoy\nparams:\n  batch_size: " + yaml_list(1000, 1) +
                        "\n  warmup_steps: " + yaml_list(1000, 0) + "\n  learning_rate: " + yaml_list(100, 0) +
                        "\n"),
            "1: the sweep has 100000000 points, more than 10000: split it into smaller sweeps");
  EXPECT_EQ(parse_sweep_text("workload: sweeptoy\nparams:\n  batch_size: " + yaml_list(100, 1) +
                                 "\n  warmup_steps: " + yaml_list(100, 0) + "\n",
                             "max.yaml")
                .points.size(),
            kMaxSweepPoints);

  RunRequest base;
  base.workload = "sweeptoy";
  SweepAxes axes;
  for (int i = 0; i < 10001; ++i) axes.params["batch_size"].push_back(std::to_string(i + 1));
  try {
    expand_sweep(base, axes);
    FAIL() << "10001 points expanded";
  } catch (const UsageError& e) {
    EXPECT_STREQ(e.what(), "the sweep has 10001 points, more than 10000: split it into smaller sweeps");
  }
}

// A string that is not UTF-8 (a file saved as Latin-1) reached sweep.json
// and run keys, where the JSON library threw: an internal error (found by
// tests/fuzz/sweep_file_fuzz.cc).
TEST(SweepFile, ValuesMustBeUtf8) {
  EXPECT_EQ(sweep_error("workload: sweeptoy\nname: caf\xe9\n"),
            "2: name must be UTF-8 text (found byte 0xe9); save the file as UTF-8");
  EXPECT_EQ(sweep_error("workload: sweeptoy\npreset: [tiny, \xff]\n"),
            "2: preset entries must be UTF-8 text (found byte 0xff); save the file as UTF-8");
  EXPECT_EQ(sweep_error("# caf\xe9: a comment is never read\nworkload: sweeptoy\nname: caf\xc3\xa9\n"), "no error");
}

TEST(SweepFile, NameIsOneFolderUnderOut) {
  EXPECT_EQ(sweep_error("workload: sweeptoy\nname: ../elsewhere\n"),
            "2: name '../elsewhere' must be a folder name (no '/', no control characters, not '.' or '..')");
  EXPECT_EQ(sweep_error("workload: sweeptoy\nname: ''\n"),
            "2: name '' must be a folder name (no '/', no control characters, not '.' or '..')");
  // A newline in the name (issue 24: accepted, and --array then refused it
  // after writing files).
  EXPECT_EQ(sweep_error("workload: sweeptoy\nname: \"a\\nb\"\n"),
            "2: name 'a\nb' must be a folder name (no '/', no control characters, not '.' or '..')");
}

}  // namespace
}  // namespace perflab
