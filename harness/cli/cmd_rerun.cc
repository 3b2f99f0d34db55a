// `perflab rerun RESULT.json`: run again exactly what a result records: the
// same workload, preset, every parameter value, backend, toggles, seeds,
// threads, warm-up and rank count. Parameters are passed as overrides only where they
// differ from the preset, so a result from a preset stays that preset.
#include <fmt/format.h>

#include "harness/cli/commands.h"
#include "harness/cli/run_command.h"
#include "base/error.h"
#include "harness/registry.h"
#include "harness/result_model.h"
#include "harness/sweep.h"  // kMaxRanks

namespace perflab::cli {
namespace {

std::string as_text(const nlohmann::json& v) {
  return v.is_string() ? v.get<std::string>() : v.dump();
}

int rerun(const std::string& path, const std::string& out) {
  const Result result = read_result(path);
  const ResultSpec& spec = result.spec;
  RunRequest request;
  try {
    request = request_from_json(to_json(spec));
  } catch (const UsageError& e) {
    throw UsageError(fmt::format("{}: {}", path, e.what()));  // which file, as every other rerun error says
  }
  const WorkloadInfo& info = Registry::instance().get(request.workload);
  const Preset* preset = info.find_preset(request.preset);
  if (!preset) throw UsageError(fmt::format("{}: preset '{}' no longer exists", path, request.preset));
  ParamValues from_preset = resolve_params(info.name, info.params, preset, {});
  request.overrides.clear();
  for (const auto& [name, value] : spec.params.items()) {
    if (!from_preset.has(name)) {
      throw UsageError(fmt::format("{}: parameter '{}' no longer exists in {}", path, name, info.name));
    }
    if (from_preset.json()[name] != value) request.overrides[name] = as_text(value);
  }
  ParamValues again = resolve_params(info.name, info.params, preset, request.overrides);
  if (again.json() != spec.params) {
    throw UsageError(fmt::format("{}: its parameters cannot be reproduced by this perflab", path));
  }
  if (!out.empty()) request.out_dir = out;
  // Results from before perflab recorded ranks say nothing: not checked.
  std::optional<RanksToMatch> ranks;
  if (spec.ranks) {
    if (*spec.ranks < 1 || *spec.ranks > kMaxRanks) {
      throw UsageError(fmt::format("{}: result spec is malformed: ranks is {}, not an integer in [1, {}]", path,
                                   *spec.ranks, kMaxRanks));
    }
    ranks = RanksToMatch{*spec.ranks, path};
  }
  return run_command(request, ranks);
}

}  // namespace

Command add_rerun(CLI::App& app) {
  auto* sub = app.add_subcommand("rerun", "Run again exactly what a result.json records");
  auto path = std::make_shared<std::string>();
  auto out = std::make_shared<std::string>();
  sub->add_option("result", *path, "A result.json written by perflab")->required();
  sub->add_option("--out,-o", *out, "Results folder (default perflab-results)");
  return {sub, [path, out] { return rerun(*path, *out); }};
}

}  // namespace perflab::cli
