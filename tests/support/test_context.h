// A RunContext for tests that construct a workload's Benchmark directly:
// resolved parameters on a backend, single rank, no device probed, an empty
// environment. Owns everything the context refers to.
#pragma once

#include <memory>

#include <nlohmann/json.hpp>

#include "collectives/communicator.h"
#include "harness/run_context.h"

namespace perflab::testing {

class TestContext {
 public:
  explicit TestContext(ParamValues params, Backend backend = Backend::kCpu, ToggleSet toggles = {},
                       int threads = 2)
      : spec_(make_spec(std::move(params), backend, toggles, threads)),
        comm_(collectives::make_single_communicator()),
        ctx_{spec_, device_, environment_, *comm_} {}
  TestContext(const TestContext&) = delete;
  TestContext& operator=(const TestContext&) = delete;

  operator const RunContext&() const { return ctx_; }  // NOLINT: used where a RunContext is expected
  const RunContext& get() const { return ctx_; }

 private:
  static RunSpec make_spec(ParamValues params, Backend backend, const ToggleSet& toggles, int threads) {
    RunSpec s;
    s.params = std::move(params);
    s.backend = backend;
    s.toggles = toggles;
    s.threads = threads;
    return s;
  }

  RunSpec spec_;
  DeviceContext device_;
  nlohmann::json environment_ = nlohmann::json::object();
  std::unique_ptr<collectives::Communicator> comm_;
  RunContext ctx_;
};

}  // namespace perflab::testing
