// Tests for reports/mlperf_export: the folder layout, the system
// description's fields, loading results, and that a failed export leaves
// nothing behind.
#include "reports/mlperf_export.h"

#include <unistd.h>

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "base/error.h"
#include "tests/reports/result_builder.h"

namespace perflab::reports {
namespace {

namespace fs = std::filesystem;

class MlperfExportTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::temp_directory_path() /
            ("perflab_export_test_" +
             std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()) + "_" +
             std::to_string(::getpid()));
    fs::remove_all(root_);
    fs::create_directories(root_);
  }
  void TearDown() override { fs::remove_all(root_); }

  /// An invocation folder with result.json and `runs` logs whose text names them.
  fs::path invocation(const std::string& name, int runs, const std::string& host = "node1") {
    const fs::path dir = root_ / "in" / name;
    fs::create_directories(dir);
    // A schema-valid result (the loader is strict), with the environment and
    // backend this test is about.
    nlohmann::json result = testing::make_result(
        {}, std::vector<testing::FakeRun>(static_cast<size_t>(runs)));
    result["spec"]["backend"] = "cuda";
    result["environment"] = {{"hostname", host},
                             {"cpu_model", "Test CPU 9000"},
                             {"logical_cores", 16},
                             {"memory_bytes", 64000000000},
                             {"distribution", "Debian GNU/Linux 12 (bookworm)"},
                             {"os", "Linux 6.1 x86_64"},
                             {"compiler", "GNU 12.2.0"},
                             {"perflab_version", "0.1.0"},
                             {"git_revision", "abc123"},
                             {"openblas", {{"config", "OpenBLAS 0.3.21"}}},
                             {"cuda",
                              {{"devices",
                                {{{"name", "NVIDIA H100"},
                                  {"memory_bytes", 80000000000},
                                  {"clock_rate_khz", 1980000}}}},
                               {"runtime_version", "13.0"}}}};
    for (int i = 0; i < runs; ++i) {
      const std::string log = "run_" + std::to_string(i) + ".log";
      result["runs"][static_cast<size_t>(i)]["log"] = log;
      std::ofstream(dir / log) << name << " " << log << "\n";
    }
    std::ofstream(dir / "result.json") << result.dump();
    return dir;
  }

  static std::string read(const fs::path& path) {
    std::ifstream in(path);
    return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  }

  /// True when `root_` holds nothing whose name starts with `prefix`.
  bool nothing_named(const std::string& prefix) const {
    for (const auto& e : fs::directory_iterator(root_)) {
      if (e.path().filename().string().rfind(prefix, 0) == 0) return false;
      if (e.path().filename().string().rfind("." + prefix, 0) == 0) return false;
    }
    return true;
  }

  fs::path root_;
};

TEST_F(MlperfExportTest, LaysOutResultsAndSystem) {
  const auto results = load_result_sources({invocation("a", 2), invocation("b", 1)});
  const ExportSummary s = export_mlperf(results, root_ / "sub");
  EXPECT_EQ(s.system_name, "node1");
  ASSERT_EQ(s.benchmarks.size(), 1u);
  EXPECT_EQ(s.benchmarks[0], (std::pair<std::string, size_t>{"dlrm", 3}));
  const fs::path bench = root_ / "sub" / "results" / "node1" / "dlrm";
  EXPECT_EQ(read(bench / "result_0.txt"), "a run_0.log\n");
  EXPECT_EQ(read(bench / "result_1.txt"), "a run_1.log\n");
  EXPECT_EQ(read(bench / "result_2.txt"), "b run_0.log\n");
  EXPECT_EQ(std::distance(fs::directory_iterator(bench), fs::directory_iterator()), 3);

  const auto desc = nlohmann::json::parse(read(root_ / "sub" / "systems" / "node1.json"));
  // Every field mlperf_logging's system_desc_checker requires.
  for (const char* field : {"submitter",
                            "division",
                            "status",
                            "system_name",
                            "number_of_nodes",
                            "host_processors_per_node",
                            "host_processor_model_name",
                            "host_processor_core_count",
                            "host_processor_vcpu_count",
                            "host_processor_frequency",
                            "host_processor_caches",
                            "host_processor_interconnect",
                            "host_memory_capacity",
                            "host_storage_type",
                            "host_storage_capacity",
                            "host_networking",
                            "host_networking_topology",
                            "host_memory_configuration",
                            "accelerators_per_node",
                            "accelerator_model_name",
                            "accelerator_host_interconnect",
                            "accelerator_frequency",
                            "accelerator_on-chip_memories",
                            "accelerator_memory_configuration",
                            "accelerator_memory_capacity",
                            "accelerator_interconnect",
                            "accelerator_interconnect_topology",
                            "cooling",
                            "hw_notes",
                            "framework",
                            "other_software_stack",
                            "operating_system",
                            "sw_notes"}) {
    ASSERT_TRUE(desc.contains(field)) << field;
    EXPECT_TRUE(desc[field].is_string()) << field;
  }
  EXPECT_EQ(desc["submitter"], "perflab");
  EXPECT_EQ(desc["division"], "open");
  EXPECT_EQ(desc["status"], "Research, Development, or Internal (RDI)");
  EXPECT_EQ(desc["system_name"], "node1");
  EXPECT_EQ(desc["host_processor_model_name"], "Test CPU 9000");
  EXPECT_EQ(desc["host_processor_vcpu_count"], "16");
  EXPECT_EQ(desc["host_memory_capacity"], "64 GB");
  EXPECT_EQ(desc["accelerators_per_node"], "1");
  EXPECT_EQ(desc["accelerator_model_name"], "NVIDIA H100");
  EXPECT_EQ(desc["accelerator_memory_capacity"], "80 GB");
  EXPECT_EQ(desc["accelerator_frequency"], "1980 MHz");
  EXPECT_EQ(desc["framework"], "perflab 0.1.0");
  EXPECT_EQ(desc["operating_system"], "Debian GNU/Linux 12 (bookworm) (Linux 6.1 x86_64)");
  EXPECT_EQ(desc["other_software_stack"], "GNU 12.2.0, OpenBLAS 0.3.21, CUDA 13.0");
  EXPECT_EQ(desc["host_processor_core_count"], "");

  // The same machine running on the CPU backend uses no accelerator.
  auto cpu_run = results[0].result;
  cpu_run.spec.backend = "cpu";
  const auto cpu_desc = system_description(cpu_run, "node1", {});
  EXPECT_EQ(cpu_desc["accelerators_per_node"], "0");
  EXPECT_EQ(cpu_desc["accelerator_model_name"], "");
  EXPECT_TRUE(nothing_named("sub.partial"));

  // A clock that is not an integer (a hand edit) is left out, never cast.
  auto edited = results[0].result;
  for (const double clock : {1e300, -1e300, 1980000.5}) {
    edited.environment["cuda"]["devices"][0]["clock_rate_khz"] = clock;
    EXPECT_EQ(system_description(edited, "node1", {})["accelerator_frequency"], "") << clock;
  }
  // Devices that are not a list are none, not an exception.
  for (const nlohmann::json& devices : {nlohmann::json("H100"), nlohmann::json::object(), nlohmann::json(3)}) {
    edited.environment["cuda"]["devices"] = devices;
    EXPECT_EQ(system_description(edited, "node1", {})["accelerators_per_node"], "0") << devices;
  }
  edited.environment["cuda"] = "13.0";
  EXPECT_EQ(system_description(edited, "node1", {})["accelerators_per_node"], "0");
}

TEST_F(MlperfExportTest, SeveralHostsNeedASystemName) {
  const auto results = load_result_sources({invocation("a", 1, "node1"), invocation("b", 1, "node2")});
  try {
    export_mlperf(results, root_ / "sub");
    ADD_FAILURE() << "no error";
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("2 hosts (node1, node2)"), std::string::npos) << e.what();
  }
  EXPECT_FALSE(fs::exists(root_ / "sub"));
  MlperfExportOptions named;
  named.system_name = "lab_pair";
  EXPECT_EQ(export_mlperf(results, root_ / "sub", named).system_name, "lab_pair");
  EXPECT_TRUE(fs::is_regular_file(root_ / "sub" / "systems" / "lab_pair.json"));
  named.system_name = "../escape";
  EXPECT_THROW(export_mlperf(results, root_ / "other", named), UsageError);
}

// Names taken from the results never climb out of the export (issue 24: a
// workload or hostname ".." wrote result_*.txt into the export's parent).
TEST_F(MlperfExportTest, NamesFromTheDataStayInsideTheFolder) {
  const auto message = [&](const std::vector<ResultSource>& results) -> std::string {
    try {
      export_mlperf(results, root_ / "out" / "ex");
    } catch (const UsageError& e) {
      return e.what();
    }
    return "no error";
  };
  fs::create_directories(root_ / "out");
  for (const char* name : {"..", "."}) {
    const fs::path host = invocation(std::string("host") + (name[1] ? "2" : "1"), 1, name);
    EXPECT_NE(message(load_result_sources({host})).find("cannot name a folder; give one with --system NAME"),
              std::string::npos);
    const fs::path workload = invocation(std::string("wl") + (name[1] ? "2" : "1"), 1);
    nlohmann::json doc = nlohmann::json::parse(read(workload / "result.json"));
    doc["spec"]["workload"] = name;
    std::ofstream(workload / "result.json") << doc.dump();
    EXPECT_NE(message(load_result_sources({workload})).find("cannot name a folder"), std::string::npos) << name;
  }
  EXPECT_TRUE(fs::is_empty(root_ / "out")) << "something was written beside the export";
}

TEST_F(MlperfExportTest, RefusesANonEmptyFolderAndAcceptsAnEmptyOne) {
  const auto results = load_result_sources({invocation("a", 1)});
  fs::create_directories(root_ / "full");
  std::ofstream(root_ / "full" / "keep.txt") << "mine";
  EXPECT_THROW(export_mlperf(results, root_ / "full"), UsageError);
  EXPECT_EQ(read(root_ / "full" / "keep.txt"), "mine");
  fs::create_directories(root_ / "empty");
  export_mlperf(results, root_ / "empty");
  EXPECT_TRUE(fs::is_regular_file(root_ / "empty" / "results" / "node1" / "dlrm" / "result_0.txt"));
}

TEST_F(MlperfExportTest, FailureLeavesNothingBehind) {
  const fs::path dir = invocation("a", 2);
  auto results = load_result_sources({dir});
  fs::remove(dir / "run_1.log");
  try {
    export_mlperf(results, root_ / "sub");
    ADD_FAILURE() << "no error";
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("run_1.log: run log missing"), std::string::npos);
  }
  EXPECT_TRUE(nothing_named("sub"));

  EXPECT_THROW(export_mlperf({}, root_ / "sub"), UsageError);
  EXPECT_TRUE(nothing_named("sub"));
  // A parent that is a file: the environment's error, still nothing left.
  std::ofstream(root_ / "blocker") << "x";
  results = load_result_sources({invocation("b", 1)});
  EXPECT_THROW(export_mlperf(results, root_ / "blocker" / "sub"), Error);
}

TEST_F(MlperfExportTest, LoadsFilesFoldersAndFoldersOfFolders) {
  invocation("b", 1);
  invocation("a", 2);
  const auto all = load_result_sources({root_ / "in"});
  ASSERT_EQ(all.size(), 2u);
  EXPECT_EQ(all[0].dir, root_ / "in" / "a");
  EXPECT_EQ(all[1].result.runs.size(), 1u);
  EXPECT_EQ(load_result_sources({root_ / "in" / "a" / "result.json"})[0].dir, root_ / "in" / "a");
  EXPECT_EQ(load_result_sources({root_ / "in" / "b"}).size(), 1u);
  EXPECT_THROW(load_result_sources({root_ / "nowhere"}), UsageError);
  fs::create_directories(root_ / "void");
  EXPECT_THROW(load_result_sources({root_ / "void"}), UsageError);
  std::ofstream(root_ / "bad.json") << "{ nope";
  EXPECT_THROW(load_result_sources({root_ / "bad.json"}), UsageError);
}

}  // namespace
}  // namespace perflab::reports
