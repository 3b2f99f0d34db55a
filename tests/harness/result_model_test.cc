// The result model (harness/result_model.h) on hand-built documents: a version-1 file (no
// batch_param, no execution, training plan always present), a version-2
// throughput file (null training fields, an execution record, interrupted),
// and malformed documents that get one line naming the file; the writer's
// record read back as written, and what it writes checked against
// docs/result.schema.json.
#include "harness/inference_run.h"
#include "harness/loadgen_result.h"
#include "harness/result_model.h"

#include <unistd.h>

#include <cstdlib>
#include <limits>
#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>

#include "harness/environment.h"
#include "base/error.h"
#include "harness/result.h"
#include "harness/subprocess.h"
#include "tests/reports/result_builder.h"

namespace perflab {
namespace {

using nlohmann::json;

json v2_throughput() {
  json doc = testing::make_result({}, testing::runs_with_times({1.5}));
  doc["schema_version"] = 2;
  doc["kind"] = "throughput";
  doc["interrupted"] = "SIGTERM";
  doc["spec"]["workload"] = "transducer";
  doc["spec"]["params"] = {{"batch", 64}};
  doc["spec"]["mode"] = "throughput";
  doc["spec"]["iterations"] = 50;
  doc["spec"]["batch_param"] = "batch";
  doc["spec"]["learning_rate_param"] = nullptr;
  for (const char* k : {"train_samples", "eval_samples", "iterations_per_epoch", "max_epochs", "eval_interval_epochs"}) {
    doc["plan"][k] = nullptr;
  }
  doc["plan"]["sample_unit"] = "sequences";
  doc["runs"][0]["epochs"] = nullptr;
  doc["runs"][0]["execution"] = {
      {"cuda_graphs", {{"used", true}, {"captured", 4}, {"replayed", 96}, {"note", "in use"}}},
      {"host_syncs_per_iteration", {{"min", 0}, {"max", 0}, {"expected", 0}}}};
  doc["score"] = {{"time_to_train_s", nullptr}, {"throughput_samples_per_s", 1234.5}, {"method", "median of 1"},
                  {"reason", ""}};
  return doc;
}

TEST(ResultModel, ReadsVersionOne) {
  testing::FakeSpec spec;
  spec.params = {{"batch_size", 512}, {"learning_rate", 0.5}};
  const Result v = parse_result(testing::make_result(spec, testing::runs_with_times({10, 12})), "/r/result.json");
  EXPECT_EQ(v.schema_version, 1);
  EXPECT_EQ(v.kind, RunMode::kTimeToTrain);
  EXPECT_FALSE(v.throughput());
  EXPECT_EQ(v.spec.workload, "dlrm");
  EXPECT_EQ(v.spec.batch_param, "batch_size");  // derived for version 1
  EXPECT_EQ(v.spec.learning_rate_param, "learning_rate");
  EXPECT_EQ(v.spec.param_number("batch_size"), 512);
  EXPECT_EQ(v.spec.mode, RunMode::kTimeToTrain);  // version-1 files before modes
  ASSERT_TRUE(v.plan.iterations_per_epoch);
  EXPECT_EQ(v.plan.global_batch_size, 512);
  EXPECT_EQ(v.plan.sample_unit, "samples");
  ASSERT_EQ(v.runs.size(), 2u);
  EXPECT_TRUE(v.runs[0].success());
  EXPECT_DOUBLE_EQ(v.runs[1].time_to_train_s, 12);
  EXPECT_FALSE(v.runs[0].execution);
  EXPECT_EQ(v.quality.metric, "AUC");
  EXPECT_EQ(v.environment_text("/cpu_model"), "test cpu");
  EXPECT_EQ(v.environment_text("/cuda/devices/0/name"), "");
  EXPECT_TRUE(v.interrupted.empty());
  EXPECT_EQ(v.path, "/r/result.json");
}

TEST(ResultModel, ReadsVersionTwoThroughput) {
  const Result v = parse_result(v2_throughput());
  EXPECT_EQ(v.schema_version, 2);
  EXPECT_TRUE(v.throughput());
  EXPECT_EQ(v.spec.batch_param, "batch");
  EXPECT_EQ(v.spec.learning_rate_param, "");
  EXPECT_FALSE(v.plan.train_samples);
  EXPECT_FALSE(v.plan.iterations_per_epoch);
  EXPECT_EQ(v.plan.sample_unit, "sequences");
  EXPECT_FALSE(v.runs[0].epochs);
  ASSERT_TRUE(v.runs[0].execution);
  EXPECT_TRUE(v.runs[0].execution->graphs_used);
  EXPECT_EQ(v.runs[0].execution->graph_replays, 96);
  EXPECT_EQ(v.runs[0].execution->syncs_expected, 0);
  EXPECT_EQ(v.interrupted, "SIGTERM");
  EXPECT_EQ(v.score_value(), 1234.5);
  EXPECT_FALSE(v.score.time_to_train_s);
}

std::string error_of(const json& doc) {
  try {
    parse_result(doc, "/r/x/result.json");
  } catch (const UsageError& e) {
    return e.what();
  }
  return "no error";
}

TEST(ResultModel, MalformedDocumentsGetOneLineNamingTheFile) {
  json future = v2_throughput();
  future["schema_version"] = 3;
  EXPECT_EQ(error_of(future), "/r/x/result.json: not a perflab result: schema_version 3 (this perflab reads 1 to 2)");
  json no_runs = v2_throughput();
  no_runs.erase("runs");
  EXPECT_EQ(error_of(no_runs), "/r/x/result.json: not a perflab result: missing 'runs'");
  json bad_type = v2_throughput();
  bad_type["plan"]["global_batch_size"] = "many";
  EXPECT_EQ(error_of(bad_type), "/r/x/result.json: not a perflab result: plan.global_batch_size has the wrong type (string)");
  json future_mode = v2_throughput();
  future_mode["spec"]["mode"] = "serving";  // not read as one this perflab knows
  EXPECT_EQ(error_of(future_mode),
            "/r/x/result.json: not a perflab result: spec.mode is 'serving', not time-to-train, throughput or inference");
  json toggle = v2_throughput();
  toggle["spec"]["toggles_requested"]["fused"] = "yes";
  EXPECT_EQ(error_of(toggle),
            "/r/x/result.json: not a perflab result: spec.toggles_requested.fused is \"yes\", not true or false");
  json bad_exec = v2_throughput();
  bad_exec["runs"][0]["execution"]["cuda_graphs"]["used"] = "yes";
  EXPECT_EQ(error_of(bad_exec),
            "/r/x/result.json: not a perflab result: execution.cuda_graphs.used has the wrong type (string)");
}

// Numbers a hand-edited or damaged file may hold: each is one line, never a
// cast that is undefined (1e300 to an integer) or wraps (2^32 + 2 read as
// version 2). tests/fuzz/result_fuzz.cc, run on the code before this
// check, hit the summary count (4e+94 cast to size_t) in 156 executions.
TEST(ResultModel, NumbersOutOfRangeAreOneLineNotACrash) {
  json wrapped = v2_throughput();
  wrapped["schema_version"] = 4294967298;
  EXPECT_EQ(error_of(wrapped),
            "/r/x/result.json: not a perflab result: schema_version 4294967298 (this perflab reads 1 to 2)");
  json huge = v2_throughput();
  huge["runs"][0]["iterations"] = 1e300;
  EXPECT_EQ(error_of(huge), "/r/x/result.json: not a perflab result: run.iterations is out of range or not an "
                            "integer (1e+300)");
  json negative_n = v2_throughput();
  negative_n["runs"][0]["iteration_ms"]["n"] = -1;
  EXPECT_EQ(error_of(negative_n),
            "/r/x/result.json: not a perflab result: summary.n is out of range or not an integer (-1)");
  json threads = v2_throughput();
  threads["spec"]["threads"] = 1e300;
  EXPECT_EQ(error_of(threads),
            "/r/x/result.json: not a perflab result: spec.threads is 1e+300, not a count");
  json fraction = v2_throughput();
  fraction["plan"]["global_batch_size"] = 2.5;
  EXPECT_EQ(error_of(fraction), "/r/x/result.json: not a perflab result: plan.global_batch_size is out of range "
                                "or not an integer (2.5)");
  json integral = v2_throughput();
  integral["runs"][0]["iterations"] = 5.0;  // an integral float is the integer
  EXPECT_EQ(parse_result(integral).runs[0].iterations, 5);
}

/// An invocation with every optional part present: a trained run with its
/// curve, a device step's execution record and a kernel profile.
InvocationRecord full_record(RunMode mode) {
  InvocationRecord rec;
  rec.spec.workload = "dlrm";
  rec.spec.preset = "tiny";
  rec.spec.overrides = {{"batch_size", "512"}};
  rec.spec.backend_requested = "auto";
  rec.spec.backend = Backend::kCuda;
  rec.spec.backend_reason = "a GPU is present";
  rec.spec.toggles[Toggle::kCudaGraphs] = {true, true, ""};
  rec.spec.seeds = {7, 8};
  rec.spec.threads = 2;
  rec.spec.ranks = 1;
  rec.spec.mode = mode;
  rec.spec.iterations = 50;
  rec.spec.profile = mode == RunMode::kThroughput ? ProfileMode::kKernels : ProfileMode::kOff;
  rec.spec.check_launches = mode == RunMode::kThroughput;
  rec.spec.batch_param = "batch_size";
  rec.toggles = rec.spec.toggles;
  rec.step.batch_size = 512;
  rec.step.precision = "tf32";
  rec.step.hyperparameters = {{"learning_rate", 0.5}};
  rec.step.data = {{"kind", "synthetic"}};
  rec.step.work.flops = 2e9;
  rec.step.work.bytes = 3e8;
  rec.step.work.floor_ms = 0.25;
  rec.step.work.floor_basis = "test peaks";
  if (mode == RunMode::kTimeToTrain) {
    TrainingPlan t;
    t.train_samples = 65536;
    t.eval_samples = 4096;
    t.iterations_per_epoch = 128;
    t.max_epochs = 4;
    t.eval_interval_epochs = 0.5;
    t.quality_metric = "AUC";
    t.quality_target = 0.74;
    t.quality_ceiling = 0.8;
    rec.training = t;
  }
  rec.prepare_s = 1.5;
  for (uint64_t seed : rec.spec.seeds) {
    RunRecord r;
    r.seed = seed;
    r.success = seed == 7;
    r.status = r.success ? "success" : "aborted";
    r.reason = r.success ? "" : "target not reached";
    r.init_s = 0.1;
    r.time_to_train_s = 12.5;
    r.train_s = 10;
    r.eval_s = 2;
    r.iterations = 256;
    r.samples = 131072;
    r.epochs = 2.0;
    r.throughput = 10485.76;
    r.iteration_ms = summarize({1.0, 1.5, 2.0});
    r.host_iteration_ms = summarize({0.1, 0.2});
    r.device_timed = true;
    r.measured_s = 0.5;
    r.correctness = CorrectnessReport{r.success, "max |error| 1e-6"};
    ExecutionRecord e;
    e.graphs_used = true;
    e.graphs_captured = 2;
    e.graph_replays = 98;
    e.graphs_note = "replayed";
    e.expected_syncs = 0;
    e.kernels_per_iteration = 34;
    e.copies_per_iteration = 0;
    e.memsets_per_iteration = 1;
    e.declared_kernels_per_iteration = 34;
    e.launches_counted_at = 2;
    e.launches_note = "counted by CUPTI";
    r.execution = e;
    r.facts = {{"algorithm", "ring"}};
    KernelProfile profile;
    profile.iterations = 50;
    profile.iteration_us = 1500;
    profile.kernels_per_iteration = 34;
    KernelRow row;
    row.name = "gemm";
    row.kind = "kernel";
    row.launches_per_iteration = 1;
    row.us_per_iteration = 1000;
    row.mean_us = 1000;
    row.share = 2.0 / 3.0;
    profile.rows.push_back(row);
    r.profile = profile;
    r.quality_curve = {{0.5, 65536, 0.71, 0.45, 5.0}, {1.0, 131072, 0.745, 0.44, 10.0}};
    r.log_file = "run_" + std::to_string(seed) + ".log";
    r.parts = {{"transfer", 0.25, 3, "cuda events"}, {"exposed communication", 1.5, 97, "host clock"}};
    rec.runs.push_back(r);
  }
  rec.score = score_records(rec.runs, mode);
  return rec;
}

/// An inference invocation (--mode inference): LoadGen's settings in the
/// spec, each run LoadGen's outcome with every field it can have.
InvocationRecord inference_record() {
  InvocationRecord rec = full_record(RunMode::kInference);
  rec.spec.profile = ProfileMode::kOff;
  rec.spec.check_launches = false;
  rec.spec.inference.scenario = "server";
  rec.spec.inference.max_wait_ms = 1;
  for (RunRecord& r : rec.runs) {
    LoadgenOutcome o;
    o.loadgen_version = "6.0.17 @ d6147c7eb7";
    o.scenario = "Server";
    o.mode = "PerformanceOnly";
    o.verdict = r.success ? "VALID" : "INVALID";
    o.invalid_reason = r.success ? "" : "Reduce target QPS to improve latency.";
    o.min_duration_met = o.min_queries_met = o.early_stopping_met = true;
    o.performance_constraints_met = r.success;
    o.early_stopping_detail = "* Processed at least 64 queries (941).";
    o.query_count = 941;
    o.overlatency_query_count = r.success ? 0 : 40;
    o.samples_per_second = 3129;
    o.scheduled_samples_per_second = 3131;
    o.early_stopping_latency_ss_ns = 1.2e6;
    o.early_stopping_latency_ms_ns = 1.4e6;
    o.target_qps = 3000;
    o.target_latency_ns = 2e7;
    o.target_latency_percentile = 0.99;
    o.min_latency_ns = 5e5;
    o.max_latency_ns = 3e6;
    o.mean_latency_ns = 9e5;
    o.percentiles = {{50, 8.4e5}, {99, 1.36e6}};
    nlohmann::json j = loadgen_outcome_to_json(o);
    j["batches"] = {{"batches", 214}, {"samples", 941}, {"largest", 10}};
    j["settings"] = inference_settings_to_json(rec.spec.inference);
    j["loadgen_folder"] = "run_0_loadgen";
    // The engine's record as dlrm's serving engine writes it (workloads/dlrm/serve/serve_engine.cc).
    j["engine"] = {
        {"placement", "hot_cache"},
        {"placement_in_effect", "cpu backend: host memory behind the cache's lookups and inserts"},
        {"cache", {{"capacity", "5%"}, {"rows", 64}, {"sets", 2}, {"ways", 32}, {"policy", "lfu"}, {"warm", "frequency"},
                   {"prefilled", 60}, {"occupied_at_end", 64}}},
        {"update_rate_rows_per_s", 100.0},
        {"model", "initialised from the seed"},
        {"counters",
         {{"batches", 214}, {"samples", 941}, {"lookups", 24466}, {"hits", 20000}, {"hit_rate", 20000.0 / 24466},
          {"table_hit_rate", {0.5, 0.9}}, {"inserted", 300}, {"host_embedding_bytes_per_sample", 303.9},
          {"input_bytes_per_sample", 156.0}, {"row_bytes", 64}, {"updates", {{"applied", 80}, {"max_staleness_ms", 2.5}}},
          {"time_s", {{"updates", 0.001}, {"copies", 0.01}, {"lookup", 0.02}, {"insert", 0.01}, {"dense", 0.2}}},
          {"time_per_batch_ms", {{"updates", 0.005}, {"copies", 0.05}, {"lookup", 0.09}, {"insert", 0.05}, {"dense", 0.9}}}}}};
    r.inference = j;
  }
  rec.score = score_records(rec.runs, RunMode::kInference);
  return rec;
}

/// An external program's invocation (harness/program.h): its spec names the
/// workload file, its runs record the program; one failed (killed).
InvocationRecord program_record() {
  InvocationRecord rec = full_record(RunMode::kTimeToTrain);
  rec.spec.workload = "logreg";
  rec.spec.workload_file = "/work/examples/logreg.workload.yaml";
  rec.training->quality_target = std::numeric_limits<double>::quiet_NaN();  // the program's own
  for (RunRecord& r : rec.runs) {
    ResultProgram p;
    p.command = {"python3", "train.py", "--seed", std::to_string(r.seed)};
    p.env = {{"OMP_NUM_THREADS", "2"}};
    if (r.success) {
      p.exit_status = 0;
    } else {
      p.signal = "SIGSEGV";
    }
    p.wall_s = 13.25;
    p.stdout_file = "run_0.out";
    p.stderr_file = "run_0.err";
    p.log_source = "file";
    p.compliance = r.success ? "passed" : "not checked";
    p.compliance_detail = r.success ? "run_0.compliance.txt" : "the run failed before it";
    p.throughput_source = "samples over run time";
    p.submission = {{"submission_benchmark", "logreg"}};
    r.program = p;
  }
  return rec;
}

/// This machine's environment as the harness records it, with two ranks on
/// two hosts.
json environment() {
  json env = capture_environment();
  env["ranks"] = json::array({{{"rank", 0}, {"hostname", "b"}, {"cpu_model", "x"}}, {{"rank", 1}, {"hostname", "a"}, {"cpu_model", "x"}}});
  return env;
}

TEST(ResultModel, TheWritersRecordReadsBackAsWritten) {
  for (RunMode mode : {RunMode::kTimeToTrain, RunMode::kThroughput}) {
    const json written = result_to_json(full_record(mode), environment());
    const Result read = parse_result(written);
    EXPECT_EQ(to_json(read), written) << run_mode_name(mode);
    EXPECT_EQ(read.kind, mode);
    EXPECT_EQ(read.spec.seeds, (std::vector<uint64_t>{7, 8}));
    EXPECT_EQ(read.spec.ranks, 1);
    EXPECT_EQ(read.runs[0].iteration_timer, "cuda events");
    ASSERT_TRUE(read.runs[0].execution);
    EXPECT_EQ(read.runs[0].execution->launches_counted_at, 2);
    ASSERT_TRUE(read.runs[0].profile);
    EXPECT_EQ(read.runs[0].profile->rows.at(0).name, "gemm");
    ASSERT_NE(read.runs[0].part("exposed communication"), nullptr);
    EXPECT_EQ(read.runs[0].part("exposed communication")->repetitions, 97);
    EXPECT_EQ(read.rank_hosts(), (std::vector<std::string>{"a", "b"}));
    ASSERT_TRUE(read.work.times_floor);
    EXPECT_DOUBLE_EQ(*read.work.times_floor, 1.5 / 0.25);  // the median of the runs' p50s over the floor
    // One failed run of two: no score either way, and the reason says why.
    EXPECT_FALSE(read.score_value());
    EXPECT_FALSE(read.score.reason.empty());
  }
}

TEST(ResultModel, AnExternalProgramsRecordReadsBackAsWritten) {
  const json written = result_to_json(program_record(), environment());
  EXPECT_TRUE(written["quality"]["target"].is_null());  // the program's own target
  EXPECT_TRUE(written["plan"]["iterations_per_epoch"].is_null());  // its iterations are its own
  const Result read = parse_result(written);
  EXPECT_EQ(to_json(read), written);
  EXPECT_EQ(read.spec.workload_file, "/work/examples/logreg.workload.yaml");
  ASSERT_TRUE(read.runs.at(1).program);
  EXPECT_EQ(read.runs[1].program->signal, "SIGSEGV");
  EXPECT_FALSE(read.runs[1].program->exit_status);
  EXPECT_EQ(read.runs[0].program->env.at(0).second, "2");
  // rerun loads the file again: the request names it, not the workload's name.
  EXPECT_EQ(request_from_json(written["spec"]).workload, "/work/examples/logreg.workload.yaml");
}

TEST(ResultModel, AReadVersionOneIsWrittenAsTheCurrentVersion) {
  const Result v1 = parse_result(testing::make_result({}, testing::runs_with_times({10, 12})));
  const json written = to_json(v1);
  EXPECT_EQ(written["schema_version"], kResultSchemaVersion);
  EXPECT_EQ(written["spec"]["batch_param"], "batch_size");
  EXPECT_EQ(to_json(parse_result(written)), written);
}

// docs/result.schema.json describes what to_json writes: both kinds
// validate (python3's jsonschema, which scripts/setup installs), and every
// object the schema lists properties for has exactly those keys, so a field
// added to the model without the schema, or left in the schema after the
// model dropped it, fails here.
TEST(ResultModel, WhatItWritesIsWhatTheSchemaDescribes) {
  const bool ci = std::getenv("CI") != nullptr;
  if (!find_program("python3") || run_program({"python3", "-c", "import jsonschema"}).exit_status != 0) {
    if (ci) FAIL() << "python3 with jsonschema is needed (scripts/setup installs it) and CI is set";
    GTEST_SKIP() << "python3 with jsonschema is not installed";
  }
  const std::filesystem::path dir =
      std::filesystem::path(::testing::TempDir()) / ("perflab_result_model_" + std::to_string(getpid()));
  std::filesystem::create_directories(dir);
  std::vector<std::string> argv = {"python3", "-c", R"PY(
import json, sys
import jsonschema
schema = json.load(open(sys.argv[1]))
problems = []
seen = {}  # id of a schema object -> (where, its properties, the keys written in any document)

def resolve(s):
    while "$ref" in s:  # local references only: "#/$defs/run"
        target = schema
        for part in s["$ref"].lstrip("#/").split("/"):
            target = target[part]
        s = target
    return s

def object_branches(s):
    s = resolve(s)
    out = [s] if "properties" in s and s.get("type", "object") == "object" else []
    for key in ("oneOf", "anyOf"):
        for b in s.get(key, []):
            out += object_branches(b)
    return out

def walk(doc, s, path):
    if isinstance(doc, dict):
        for b in object_branches(s):
            declared, written = set(b["properties"]), set(doc)
            if written - declared:
                problems.append(f"{path}: written, not in the schema: {sorted(written - declared)}")
            where, _, keys = seen.setdefault(id(b), (path, declared, set()))
            keys |= written
            for k in written & declared:
                walk(doc[k], b["properties"][k], f"{path}.{k}")
    elif isinstance(doc, list):
        items = resolve(s).get("items")
        if items is not None:
            for i, item in enumerate(doc):
                walk(item, items, f"{path}[{i}]")

for name in sys.argv[2:]:
    doc = json.load(open(name))
    try:
        jsonschema.validate(doc, schema)
    except jsonschema.ValidationError as e:
        problems.append(f"{name}: {e.message} at {list(e.absolute_path)}")
    walk(doc, schema, name)
# A property may be written only sometimes (spec.profile when profiling), so
# the schema's list is compared with what any of the documents wrote.
for where, declared, keys in seen.values():
    if declared - keys:
        problems.append(f"{where}: in the schema, never written: {sorted(declared - keys)}")
print("\n".join(problems))
sys.exit(1 if problems else 0)
)PY",
                                   std::string(PERFLAB_SOURCE_DIR) + "/docs/result.schema.json"};
  for (RunMode mode : {RunMode::kTimeToTrain, RunMode::kThroughput}) {
    const std::filesystem::path file = dir / (std::string(run_mode_name(mode)) + ".json");
    std::ofstream(file) << result_to_json(full_record(mode), environment()).dump(2);
    argv.push_back(file.string());
  }
  const std::filesystem::path program = dir / "program.json";
  std::ofstream(program) << result_to_json(program_record(), environment()).dump(2);
  argv.push_back(program.string());
  const std::filesystem::path inference = dir / "inference.json";
  std::ofstream(inference) << result_to_json(inference_record(), environment()).dump(2);
  argv.push_back(inference.string());
  const ProgramOutput out = run_program(argv);
  std::filesystem::remove_all(dir);
  EXPECT_EQ(out.exit_status, 0) << out.out << out.err;
}

}  // namespace
}  // namespace perflab
