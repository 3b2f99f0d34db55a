// Workload files (workloads/external/workload_file.h): what a file declares
// becomes a workload (parameters, presets, toggle rules, the program's
// command per seed), and every mistake is one line naming the file and line.
#include "workloads/external/workload_file.h"

#include <string>

#include <gtest/gtest.h>

#include "base/error.h"
#include "base/text.h"
#include "harness/device.h"
#include "harness/run_spec.h"
#include "tests/support/test_context.h"

namespace perflab::external {
namespace {

const char* kFile = R"(name: mine
command: [sh, -c, "exit 0", --lr, "{lr}", --seed, "{seed}"]
env: {THREADS: "{threads}", LOG: "{mllog}"}
params:
  - {name: lr, type: float, default: 0.5, min: 0, max: 10, help: learning rate}
  - {name: batch, type: int, default: 32, min: 1}
  - {name: opt, type: string, default: sgd, choices: [sgd, adam]}
presets:
  big: {batch: 1024}
toggles:
  sharp: {on: {env: {NCCL_COLLNET_ENABLE: "1"}}, off: {env: {NCCL_COLLNET_ENABLE: "0"}}}
  amp: {on: {args: [--amp]}}
quality: {key: eval_error, target: 0.1, higher_is_better: false}
timeout: 90
compliance: off
batch_param: batch
)";

std::string error_of(const std::string& yaml) {
  try {
    parse_workload_file(yaml, "dir/x.workload.yaml");
  } catch (const UsageError& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(WorkloadFile, WhatAFileDeclares) {
  const WorkloadFile f = parse_workload_file(kFile, "/work/dir/mine.workload.yaml");
  EXPECT_EQ(f.name, "mine");
  EXPECT_EQ(f.path, "/work/dir/mine.workload.yaml");
  EXPECT_TRUE(f.writes_log_file);  // {mllog} in the environment
  EXPECT_DOUBLE_EQ(f.timeout_s, 90);
  EXPECT_TRUE(f.compliance.empty());
  EXPECT_EQ(f.quality.key, "eval_error");
  EXPECT_FALSE(f.quality.higher_is_better);
  // The program's own toggle is an on/off parameter; perflab's maps to a rule.
  ASSERT_EQ(f.params.size(), 4u);
  EXPECT_EQ(f.params[3].name, "amp");
  EXPECT_EQ(f.params[3].choices, (std::vector<std::string>{"on", "off"}));
  const WorkloadInfo info = workload_info(f);
  EXPECT_EQ(info.kind(), WorkloadKind::kProgram);
  EXPECT_EQ(info.modes(), std::vector<RunMode>{RunMode::kTimeToTrain});
  ASSERT_EQ(info.toggle_rules.size(), 1u);
  EXPECT_EQ(info.toggle_rules[0].toggle, Toggle::kSharp);
  EXPECT_EQ(info.presets.at(0).name, "default");
  EXPECT_EQ(info.presets.at(1).name, "big");
  EXPECT_EQ(info.batch_param, "batch");
  EXPECT_EQ(info.source, "/work/dir/mine.workload.yaml");
}

TEST(WorkloadFile, TheCommandForASeed) {
  const WorkloadFile f = parse_workload_file(kFile, "/work/dir/mine.workload.yaml");
  const WorkloadInfo info = workload_info(f);
  ToggleSet toggles;
  toggles[Toggle::kSharp] = {true, true, ""};
  testing::TestContext ctx(resolve_params("mine", info.params, info.find_preset("big"), {{"amp", "on"}}),
                           Backend::kCpu, toggles, 3);
  const std::unique_ptr<Program> program = info.create_program(ctx);
  const ProgramLaunch launch = program->launch(7, {"/runs/run_0", "/runs/run_0.log"});
  EXPECT_EQ(launch.argv, (std::vector<std::string>{"sh", "-c", "exit 0", "--lr", "0.5", "--seed", "7", "--amp"}));
  EXPECT_EQ(launch.env, (Env{{"THREADS", "3"}, {"LOG", "/runs/run_0.log"}, {"NCCL_COLLNET_ENABLE", "1"}}));
  EXPECT_TRUE(launch.writes_log_file);
  EXPECT_TRUE(launch.compliance.empty());
  EXPECT_EQ(launch.compliance_off, "compliance: off in the workload file");
  EXPECT_DOUBLE_EQ(program->timeout_s(), 90);
  EXPECT_EQ(program->quality().target, 0.1);
}

TEST(WorkloadFile, TheDefaultComplianceCheckIsTheOfficialChecker) {
  const WorkloadFile f = parse_workload_file("command: [x, \"{seed}\"]\n", "/w/a.workload.yaml");
  EXPECT_EQ(f.name, "a");
  EXPECT_FALSE(f.writes_log_file);  // read from its output
  ASSERT_GE(f.compliance.size(), 3u);
  EXPECT_EQ(f.compliance[2], "mlperf_logging.compliance_checker");
  EXPECT_EQ(f.compliance.back(), "{mllog}");
  const WorkloadFile g =
      parse_workload_file("command: [x]\ncompliance: {ruleset: 5.0.0, config: rules/r.yaml}\n", "/w/a.workload.yaml");
  const std::string joined = join(g.compliance, " ");
  EXPECT_NE(joined.find("--ruleset 5.0.0"), std::string::npos) << joined;
  EXPECT_NE(joined.find("--config /w/rules/r.yaml"), std::string::npos) << joined;  // beside the file
}

TEST(WorkloadFile, Placeholders) {
  EXPECT_EQ(fill_placeholders("{a}-{b}", {{"a", "1"}, {"b", "two"}}), "1-two");
  EXPECT_EQ(fill_placeholders("{{literal}}", {}), "{literal}");
  EXPECT_THROW(fill_placeholders("{nope}", {}), UsageError);
  EXPECT_THROW(fill_placeholders("{open", {}), UsageError);
  EXPECT_THROW(fill_placeholders("lone}", {}), UsageError);
}

TEST(WorkloadFile, EveryMistakeNamesTheFileAndLine) {
  EXPECT_EQ(error_of("summary: x\n"), "dir/x.workload.yaml:1: the workload file has no command: [program, arg, ...]");
  EXPECT_EQ(error_of("command: [a]\nfoo: 1\n").rfind("dir/x.workload.yaml:2: the workload file: unknown key 'foo'", 0),
            0u);
  EXPECT_EQ(error_of("command: []\n"), "dir/x.workload.yaml:1: command is empty: name the program to run");
  EXPECT_EQ(error_of("command: [a, \"{x}\"]\n").rfind("dir/x.workload.yaml:1: '{x}': unknown placeholder {x}", 0), 0u);
  EXPECT_EQ(error_of("command: [a]\nparams:\n  - {name: n, type: int, default: 0, min: 1}\n")
                .rfind("dir/x.workload.yaml:3: x.workload.yaml: parameter n=0: out of range", 0),
            0u);
  EXPECT_EQ(error_of("command: [a]\nparams:\n  - {name: n, type: complex, default: 0}\n"),
            "dir/x.workload.yaml:3: parameter n: type 'complex' is not int, float or string");
  EXPECT_EQ(error_of("command: [a]\nparams:\n  - {name: seed, default: 0}\n"),
            "dir/x.workload.yaml:3: parameter 'seed' is declared twice or is a built-in placeholder");
  EXPECT_EQ(error_of("command: [a]\ntoggles:\n  fused: {on: {argz: [x]}}\n")
                .rfind("dir/x.workload.yaml:3: toggles.fused.on: unknown key 'argz'", 0),
            0u);
  EXPECT_EQ(error_of("command: [a]\ntimeout: -1\n"), "dir/x.workload.yaml:2: timeout must be a positive number of seconds");
  EXPECT_EQ(error_of("command: [a]\nbatch_param: b\n"),
            "dir/x.workload.yaml:2: batch_param: 'b' is not a declared int or float parameter");
  EXPECT_EQ(error_of("command: [a]\npresets:\n  p: {zz: 1}\n"), "dir/x.workload.yaml:3: preset p: unknown parameter 'zz'");
  EXPECT_EQ(error_of("command: [a\n").rfind("dir/x.workload.yaml:2: not valid YAML", 0), 0u) << error_of("command: [a\n");
  EXPECT_EQ(error_of("name: has space\ncommand: [a]\n").rfind("dir/x.workload.yaml:1: 'has space' is not a workload name", 0),
            0u);
}

TEST(WorkloadFile, AnUnmappedToggleIsRefusedAndAMappedOneIsPassedOn) {
  const WorkloadInfo info = workload_info(parse_workload_file(kFile, "/w/mine.workload.yaml"));
  RunRequest request;
  request.workload = "/w/mine.workload.yaml";
  request.toggles[Toggle::kFused] = true;
  try {
    resolve_run_spec(request, info, DeviceProbe{});
    FAIL() << "an unmapped toggle was accepted";
  } catch (const UsageError& e) {
    EXPECT_EQ(std::string(e.what()).rfind("--fused: mine maps no fused toggle", 0), 0u) << e.what();
  }
  request.toggles = {{Toggle::kSharp, true}};
  const RunSpec spec = resolve_run_spec(request, info, DeviceProbe{});
  EXPECT_TRUE(spec.toggles[Toggle::kSharp].in_effect);
  EXPECT_EQ(spec.toggles[Toggle::kSharp].reason, "passed to the program; perflab cannot see whether it honoured it");
  EXPECT_EQ(spec.workload_file, "/w/mine.workload.yaml");
  EXPECT_EQ(spec.mode, RunMode::kTimeToTrain);
}

}  // namespace
}  // namespace perflab::external
