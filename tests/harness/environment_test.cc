// Environment capture and device probing: the required fields are present,
// a machine without a GPU (or without a driver) gives a reason instead of a
// crash, and `perflab env` text is aligned and tolerates missing fields.
#include "harness/environment.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "harness/device.h"

namespace perflab {
namespace {

using nlohmann::json;

std::vector<std::string> split_lines(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

TEST(CaptureEnvironment, HasTheHostAndBuildFields) {
  const json env = capture_environment();
  for (const char* key : {"hostname", "os", "distribution", "cpu_model", "perflab_version",
                          "git_revision", "compiler", "build_type"}) {
    ASSERT_TRUE(env.contains(key) && env[key].is_string()) << key << " in " << env.dump(2);
    EXPECT_FALSE(env[key].get<std::string>().empty()) << key;
  }
  EXPECT_GE(env["logical_cores"].get<int>(), 1);
  EXPECT_GT(env["memory_bytes"].get<int64_t>(), 0);
  EXPECT_GE(env["openmp_max_threads"].get<int>(), 1);
  EXPECT_GE(env["openblas"]["num_threads"].get<int>(), 1);
  EXPECT_FALSE(env["openblas"]["config"].get<std::string>().empty());
  EXPECT_TRUE(env["env"].is_object());
}

// The variables that change what a GPU run measures are recorded when set,
// and absent when not.
/// Restores an environment variable's value (or its absence) on scope exit.
class SavedVariable {
 public:
  explicit SavedVariable(const char* name) : name_(name) {
    if (const char* v = std::getenv(name)) value_ = v;
  }
  ~SavedVariable() {
    if (value_) {
      setenv(name_, value_->c_str(), 1);
    } else {
      unsetenv(name_);
    }
  }
  SavedVariable(const SavedVariable&) = delete;
  SavedVariable& operator=(const SavedVariable&) = delete;

 private:
  const char* name_;
  std::optional<std::string> value_;
};

TEST(CaptureEnvironment, RecordsTheCudaQueueAndBlockingVariables) {
  const SavedVariable queues("CUDA_DEVICE_MAX_CONNECTIONS"), blocking("CUDA_LAUNCH_BLOCKING");
  ASSERT_EQ(setenv("CUDA_DEVICE_MAX_CONNECTIONS", "32", 1), 0);
  ASSERT_EQ(unsetenv("CUDA_LAUNCH_BLOCKING"), 0);
  json env = capture_environment()["env"];
  EXPECT_EQ(env.value("CUDA_DEVICE_MAX_CONNECTIONS", ""), "32") << env.dump();
  EXPECT_FALSE(env.contains("CUDA_LAUNCH_BLOCKING")) << env.dump();
  ASSERT_EQ(unsetenv("CUDA_DEVICE_MAX_CONNECTIONS"), 0);
  ASSERT_EQ(setenv("CUDA_LAUNCH_BLOCKING", "1", 1), 0);
  env = capture_environment()["env"];
  EXPECT_FALSE(env.contains("CUDA_DEVICE_MAX_CONNECTIONS")) << env.dump();
  EXPECT_EQ(env.value("CUDA_LAUNCH_BLOCKING", ""), "1") << env.dump();
  const SavedVariable memsets("PERFLAB_GRAPH_MEMSETS");
  ASSERT_EQ(setenv("PERFLAB_GRAPH_MEMSETS", "nodes", 1), 0);
  EXPECT_EQ(capture_environment()["env"].value("PERFLAB_GRAPH_MEMSETS", ""), "nodes");
}

TEST(CaptureEnvironment, CudaSectionExplainsAMissingDevice) {
  const json cuda = capture_environment()["cuda"];
  ASSERT_TRUE(cuda["built"].is_boolean());
  ASSERT_TRUE(cuda["available"].is_boolean());
  ASSERT_TRUE(cuda["devices"].is_array());
  if (cuda["available"].get<bool>()) {
    EXPECT_FALSE(cuda["devices"].empty());
    EXPECT_FALSE(cuda.contains("reason"));
  } else {
    EXPECT_TRUE(cuda["devices"].empty());
    ASSERT_TRUE(cuda["reason"].is_string());
    EXPECT_FALSE(cuda["reason"].get<std::string>().empty());
  }
#ifdef PERFLAB_HAVE_CUDA
  EXPECT_TRUE(cuda["built"].get<bool>());
  EXPECT_TRUE(cuda["runtime_version"].is_string()) << cuda.dump(2);
  EXPECT_TRUE(cuda["cublaslt_version"].is_string()) << cuda.dump(2);
  if (!cuda["available"].get<bool>()) {
    EXPECT_EQ(cuda["reason"].get<std::string>().rfind("no usable CUDA device: ", 0), 0u)
        << cuda["reason"];
  }
#else
  EXPECT_FALSE(cuda["built"].get<bool>());
  EXPECT_EQ(cuda["reason"], "perflab was built without CUDA");
#endif
}

TEST(ProbeDevices, NeverThrowsAndIsConsistent) {
  DeviceProbe probe;
  ASSERT_NO_THROW(probe = probe_devices());
  EXPECT_EQ(probe.available, !probe.devices.empty());
  EXPECT_EQ(probe.reason.empty(), probe.available) << probe.reason;
  for (size_t i = 0; i < probe.devices.size(); ++i) {
    const DeviceInfo& d = probe.devices[i];
    EXPECT_EQ(d.index, static_cast<int>(i));
    EXPECT_FALSE(d.name.empty());
    EXPECT_GE(d.compute_capability_major, 1);
    EXPECT_GT(d.total_memory_bytes, 0);
    EXPECT_GT(d.multiprocessor_count, 0);
  }
#ifdef PERFLAB_HAVE_CUDA
  EXPECT_GT(probe.runtime_version, 0);
  const std::string archs = built_cuda_architectures();
  EXPECT_NE(archs, "unknown");
  EXPECT_NE(archs, "none");
#else
  EXPECT_EQ(built_cuda_architectures(), "none");
#endif
}

TEST(DeviceSmokeTest, GivesAReasonWithoutADevice) {
  const DeviceProbe probe = probe_devices();
  if (probe.available) GTEST_SKIP() << "a CUDA device is present; see RunsOnEveryDevice";
  std::string reason;
  EXPECT_FALSE(device_smoke_test(0, &reason));
  EXPECT_FALSE(reason.empty());
  EXPECT_FALSE(device_smoke_test(0, nullptr));
}

TEST(DeviceSmokeTest, RunsOnEveryDevice) {
  const DeviceProbe probe = probe_devices();
  if (!probe.available) GTEST_SKIP() << probe.reason;
  for (const DeviceInfo& d : probe.devices) {
    std::string reason;
    EXPECT_TRUE(device_smoke_test(d.index, &reason)) << d.name << ": " << reason;
    EXPECT_TRUE(reason.empty()) << reason;
  }
}

TEST(FormatEnvironment, AlignsValuesInOneColumn) {
  const std::string text = format_environment(capture_environment());
  const std::vector<std::string> lines = split_lines(text);
  ASSERT_GE(lines.size(), 5u) << text;
  for (const char* label :
       {"host ", "os ", "cpu ", "memory ", "perflab ", "openblas ", "openmp "}) {
    EXPECT_NE(("\n" + text).find("\n" + std::string(label)), std::string::npos)
        << "missing " << label << " in\n"
        << text;
  }
  EXPECT_NE(text.find("\ngpu"), std::string::npos) << text;
  // The value column starts at the same offset on every line (labels hold
  // at most single spaces, as in "gpu 0").
  const auto column = [](const std::string& line) {
    return line.find_first_not_of(' ', line.find("  "));
  };
  for (const std::string& line : lines) EXPECT_EQ(column(line), column(lines[0])) << line;
}

TEST(FormatEnvironment, ToleratesMissingAndMistypedFields) {
  EXPECT_EQ(format_environment(json::object()), "");
  EXPECT_EQ(format_environment(json{{"hostname", "box"}}), "host  box\n");
  EXPECT_NO_THROW(format_environment(json{{"cuda", 3}, {"openblas", "x"}, {"memory_bytes", "?"}}));
  const std::string text = format_environment(
      json{{"hostname", "box"},
           {"cuda",
            {{"built", true},
             {"available", false},
             {"reason", "no usable CUDA device: CUDA driver version is insufficient"},
             {"runtime_version", "13.0"},
             {"driver_version", nullptr},
             {"cudnn_version", "9.19.0"},
             {"cudnn_compiled_version", "9.19.0"}}}});
  EXPECT_EQ(text,
            "host   box\n"
            "cuda   runtime 13.0, driver none, architectures none\n"
            "cudnn  9.19.0 (compiled 9.19.0)\n"
            "gpu    none: no usable CUDA device: CUDA driver version is insufficient\n");
}

TEST(FormatEnvironment, ListsDevices) {
  const json env = {{"cuda",
                     {{"built", true},
                      {"available", true},
                      {"devices",
                       {{{"index", 0},
                         {"name", "NVIDIA H100 80GB HBM3"},
                         {"compute_capability", "9.0"},
                         {"memory_bytes", 85520809984LL},
                         {"multiprocessors", 132},
                         {"clock_rate_khz", 1980000},
                         {"pci_bus_id", "0000:3B:00.0"}}}}}}};
  EXPECT_NE(format_environment(env).find("gpu 0  NVIDIA H100 80GB HBM3, compute 9.0, 79.6 GiB, "
                                         "132 SMs, 1980 MHz, PCI 0000:3B:00.0\n"),
            std::string::npos)
      << format_environment(env);
}

}  // namespace
}  // namespace perflab
