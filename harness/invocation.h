// The invocation pipeline, one for every command that runs workloads (run,
// rerun, sweep points): resolve -> prepare once -> run each seed -> score by
// the spec's mode -> write the folder atomically -> render. The CLI parses
// and calls it; sweeps call run_point once per (point, seed).
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "collectives/communicator.h"
#include "harness/run_context.h"
#include "harness/run_spec.h"
#include "harness/runner.h"

namespace perflab {

struct WorkloadInfo;

/// What a process knows once: its communicator (rank and size), the device
/// probed once with its peaks, and the environment captured once.
class Session {
 public:
  Session();
  const DeviceContext& device() const { return device_; }
  const nlohmann::json& environment() const { return environment_; }
  collectives::Communicator& comm() { return *comm_; }
  /// The context a workload is handed for `spec` (which must outlive it).
  RunContext context(const RunSpec& spec) { return {spec, device_, environment_, *comm_, make_cuda_device_ops}; }
  /// Validates `request` against its workload and this session's devices.
  RunSpec resolve(const RunRequest& request) const;

 private:
  /// The communicator and, on several ranks, every rank's host, devices and
  /// library versions, into the environment.
  void record_ranks();

  std::unique_ptr<collectives::Communicator> comm_;
  DeviceContext device_;
  nlohmann::json environment_;
};

/// Files rendered from a result, written beside it: (file name, content).
using RenderedFiles = std::vector<std::pair<std::string, std::string>>;

/// What the caller hooks into a point's run.
struct PointHooks {
  ProgressObserver progress;  ///< Prepared, each run started, evaluated, finished.
  /// Files to write beside result.json (report.md), rendered from the result
  /// document; empty: none.
  std::function<RenderedFiles(const nlohmann::json& result)> render;
  /// true: publish under `dir` or the next free dir-N (publish_new_folder;
  /// a plain run); false: replace an earlier unfinished result at `dir`
  /// (publish_folder; a sweep's run key, under its lock).
  bool fresh_folder = false;
};

/// What a point's run produced.
struct PointOutcome {
  InvocationRecord record;
  nlohmann::json result;  ///< The result document written to dir/result.json.
  std::filesystem::path dir;  ///< Empty when interrupted before the first run (nothing written).
};

/// Prepares the spec's workload once (data, plans, roofline floor).
PreparedBenchmark prepare_point(Session& session, const RunSpec& spec);

/// Runs `seeds` of a prepared point and writes `dir` atomically: built under
/// a hidden ".<name>.partial-<pid>@<host>" sibling (logs run_<i>.log, result.json,
/// the rendered files), renamed to `dir` when complete, removed on failure;
/// such folders of dead processes are removed first. Only rank 0 writes.
/// The score follows the spec's mode. Interrupted (harness/interrupt.h):
/// the run in flight ends aborted, no further seed starts, and the result
/// is written marked "interrupted", without a score.
PointOutcome run_point(Session& session, const RunSpec& spec, PreparedBenchmark& prepared,
                       const std::vector<uint64_t>& seeds, const std::filesystem::path& dir,
                       const PointHooks& hooks);

/// The folder name a new run of `spec` under `out` starts with:
/// <workload>-<preset>-<UTC time>; publish_new_folder adds -2, -3, ... when
/// it is taken by then.
std::filesystem::path invocation_dir(const std::filesystem::path& out, const RunSpec& spec);

/// Renames the finished folder `work` to `dir`, or, when `dir` holds
/// anything, to dir-2, dir-3, ...; returns the folder it became. Runs
/// started together never share or replace a folder. Throws perflab::Error.
std::filesystem::path publish_new_folder(const std::filesystem::path& work, const std::filesystem::path& dir);

/// Renames the finished folder `work` to `dir`. `dir` may be absent or an
/// empty folder; a non-empty `dir` is an earlier unfinished result of the
/// same sweep run key, replaced only by a process holding that key's lock
/// (harness/sweep.cc). Throws perflab::Error.
void publish_folder(const std::filesystem::path& work, const std::filesystem::path& dir);

/// One invocation (perflab run / rerun): prepare, run every seed of `spec`
/// into a fresh folder under spec.out_dir.
PointOutcome run_invocation(Session& session, const RunSpec& spec, const PointHooks& hooks);

}  // namespace perflab
