#include "reports/report_sections.h"

#include <optional>
#include <string>
#include <vector>

#include <algorithm>

#include <fmt/format.h>

#include "collectives/model_sweep.h"  // format_time_us
#include "base/text.h"
#include "harness/slurm.h"
#include "harness/stats.h"

namespace perflab::reports {
namespace {

/// A number field of a free-form fact, or nothing (any other type or shape).
std::optional<double> number_at(const nlohmann::json& object, const char* key) {
  if (!object.is_object()) return std::nullopt;
  const auto it = object.find(key);
  if (it == object.end() || !it->is_number()) return std::nullopt;
  return it->get<double>();
}

/// "rank 0: tables 0, 3, 5 (1234 rows)" per rank of the placement fact
/// (free-form data: anything unexpected is shown as "?").
std::vector<std::string> placement_lines(const nlohmann::json& data) {
  std::vector<std::string> lines;
  const auto placement = data.find("placement");
  if (placement == data.end() || !placement->is_object()) return lines;
  const auto ranks = placement->find("ranks");
  if (ranks == placement->end() || !ranks->is_array()) return lines;
  for (const nlohmann::json& r : *ranks) {
    std::string tables;
    const auto list = r.is_object() ? r.find("tables") : r.end();
    if (r.is_object() && list != r.end() && list->is_array()) {
      for (const nlohmann::json& t : *list) tables += (tables.empty() ? "" : ", ") + t.dump();
    }
    const auto num = [&](const char* key) {
      const std::optional<double> v = number_at(r, key);
      return v ? fmt::format("{:.0f}", *v) : std::string("?");
    };
    lines.push_back(fmt::format("rank {}: tables {} ({} rows)", num("rank"), tables.empty() ? "?" : tables, num("rows")));
  }
  return lines;
}

/// "forward 12.0 KiB, backward 12.0 KiB" from the bytes fact (empty without it).
std::string exchange_text(const nlohmann::json& data) {
  const auto bytes = data.find("all_to_all_bytes_per_iteration");
  if (bytes == data.end()) return "";
  const std::optional<double> forward = number_at(*bytes, "forward"), backward = number_at(*bytes, "backward");
  if (!forward || !backward) return "";
  return fmt::format("forward {:.1f} KiB, backward {:.1f} KiB", *forward / 1024.0, *backward / 1024.0);
}

/// " (hybrid embedding: 72.2% less than model parallel's 416.0 KiB)" when
/// the data facts carry the reduction, else "".
std::string reduction_text(const nlohmann::json& data) {
  const std::optional<double> reduction = number_at(data, "all_to_all_reduction");
  const auto mp = data.find("model_parallel_all_to_all_bytes_per_iteration");
  const std::optional<double> total = mp == data.end() ? std::nullopt : number_at(*mp, "total");
  if (!reduction || !total) return "";
  return fmt::format(" (hybrid embedding: {:.1f}% less than model parallel's {:.1f} KiB)", *reduction * 100.0,
                     *total / 1024.0);
}

/// A string field of a free-form fact, or "?".
std::string text_at(const nlohmann::json& object, const char* key) {
  if (!object.is_object()) return "?";
  const auto it = object.find(key);
  return it != object.end() && it->is_string() ? it->get<std::string>() : std::string("?");
}

/// collectives' "12.3 us", "4.56 ms" (three significant digits), or "?".
std::string us_text(std::optional<double> us) { return us ? collectives::format_time_us(*us) : "?"; }

std::string bytes_text(std::optional<double> bytes) {
  if (!bytes) return "?";
  if (*bytes < 1024) return fmt::format("{:.0f} B", *bytes);
  if (*bytes < 1024.0 * 1024) return fmt::format("{:.1f} KiB", *bytes / 1024);
  return fmt::format("{:.1f} MiB", *bytes / (1024.0 * 1024));
}

/// The projection's scales (an empty array when the fact is absent or not
/// the expected shape).
const nlohmann::json& projection_scales(const nlohmann::json& data) {
  static const nlohmann::json kNone = nlohmann::json::array();
  const auto projection = data.find("projection");
  if (projection == data.end() || !projection->is_object()) return kNone;
  const auto scales = projection->find("scales");
  return scales != projection->end() && scales->is_array() ? *scales : kNone;
}

}  // namespace

std::string render_projection_markdown(const Result& result) {
  const nlohmann::json& data = result.plan.data;
  const nlohmann::json& scales = projection_scales(data);
  if (scales.empty()) return "";
  const nlohmann::json& p = data["projection"];
  const std::optional<double> batch = number_at(p, "per_gpu_batch"), scale = number_at(p, "exchange_scale");
  std::string md = "\n## Communication at 8, 64 and 512 GPUs (projected)\n\n";
  md += fmt::format("Model: {}. Assumptions: {}; {} samples per GPU", text_at(p, "model"), text_at(p, "assumptions"),
                    batch ? fmt::format("{:.0f}", *batch) : "?");
  if (scale && *scale < 1) md += fmt::format("; hybrid embedding: all-to-all bytes x {:.3f} as measured", *scale);
  md += ".\n\n| GPUs | nodes x GPUs | global batch | all-to-all per GPU, forward / backward | all-to-all time, forward / backward | "
        "gradient all-reduce | all-reduce (ring/tree) | all-reduce (SHARP/NVLS) | communication per iteration | "
        "with SHARP/NVLS | samples/s ceiling |\n|---|---|---|---|---|---|---|---|---|---|---|\n";
  for (const nlohmann::json& s : scales) {
    const auto n = [&](const char* key) { return number_at(s, key); };
    const std::optional<double> comm = n("sharp_communication_us"), global = n("global_batch");
    std::string ceiling = "?";
    if (comm && global && *comm > 0) {
      const double per_s = *global / (*comm * 1e-6);
      ceiling = per_s >= 1e9   ? fmt::format("{:.3g}G", per_s / 1e9)
                : per_s >= 1e6 ? fmt::format("{:.3g}M", per_s / 1e6)
                : per_s >= 1e3 ? fmt::format("{:.3g}k", per_s / 1e3)
                               : fmt::format("{:.3g}", per_s);
    }
    // Results from before the backward direction was its own (same bytes both ways).
    const std::optional<double> back_bytes = n("all_to_all_backward_bytes").has_value()
                                                 ? n("all_to_all_backward_bytes") : n("all_to_all_bytes");
    const std::optional<double> back_us =
        n("all_to_all_backward_us").has_value() ? n("all_to_all_backward_us") : n("all_to_all_us");
    md += fmt::format("| {:.0f} | {:.0f} x {:.0f} ({}) | {:.0f} | {} / {} | {} / {} | {} | {} {} | {} {} | {} | {} | {} |\n",
                      n("gpus").value_or(0), n("nodes").value_or(0), n("gpus_per_node").value_or(0),
                      text_at(s, "link"), global.value_or(0), bytes_text(n("all_to_all_bytes")),
                      bytes_text(back_bytes), us_text(n("all_to_all_us")), us_text(back_us),
                      bytes_text(n("all_reduce_bytes")),
                      us_text(n("all_reduce_us")), text_at(s, "all_reduce_algorithm"),
                      us_text(n("sharp_all_reduce_us")), text_at(s, "sharp_all_reduce_algorithm"),
                      us_text(n("communication_us")), us_text(comm), ceiling);
  }
  md += "\nCommunication per iteration = 2 all-to-alls (embedding vectors forward, their gradients backward) + the "
        "gradient all-reduce, nothing overlapped. The ceiling is the global batch over that time: the samples/s "
        "communication alone would allow with SHARP/NVLS and compute free.\n";
  return md;
}

std::string render_projection_summary(const Result& result) {
  const nlohmann::json& scales = projection_scales(result.plan.data);
  if (scales.empty()) return "";
  std::string out = "projected communication per iteration (weak scaling; ring/tree, SHARP/NVLS):";
  for (const nlohmann::json& s : scales) {
    out += fmt::format(" {:.0f} GPUs {} / {};", number_at(s, "gpus").value_or(0), us_text(number_at(s, "communication_us")),
                       us_text(number_at(s, "sharp_communication_us")));
  }
  out.back() = '\n';
  return out;
}

std::string setup_time_text(const Result& result) {
  std::vector<double> init;
  for (const ResultRun& r : result.runs) init.push_back(r.init_s);
  return fmt::format("setup: prepare {:.3f} s (data and configuration, once), init {:.3f} s per run (median); "
                     "neither is timed",
                     result.prepare_s, init.empty() ? 0.0 : percentile(init, 50));
}

std::string render_setup_markdown(const Result& result) {
  const ResultSpec& spec = result.spec;
  std::string md;
  md += fmt::format("# perflab: {} (preset {}) on {}\n\n", spec.workload, spec.preset, spec.backend);
  md += fmt::format("- created: {}\n", result.created);
  const std::string version = result.environment_text("/perflab_version");
  const std::string git = result.environment_text("/git_revision");
  const std::string cpu = result.environment_text("/cpu_model");
  md += fmt::format("- perflab: {} (git {})\n", version.empty() ? "?" : version, git.empty() ? "?" : git);
  md += fmt::format("- host: {}, {} threads\n", cpu.empty() ? "?" : cpu, spec.threads.value_or(0));
  if (spec.backend == "cuda" && !result.environment_text("/cuda/devices/0").empty()) {
    const std::string device = result.environment_text("/cuda/devices/0/name");
    md += fmt::format("- device: {}\n", device.empty() ? "?" : device);
  }
  if (!spec.overrides.empty()) md += fmt::format("- overrides: `{}`\n", nlohmann::json(spec.overrides).dump());
  md += "- " + setup_time_text(result) + "\n";
  if (spec.check_launches) {
    md += "- **launch checks: synchronous** (--check-launches): the device was waited for after every kernel "
          "launch, CUDA graphs off; these times are not comparable with other runs'\n";
  }
  if (!result.interrupted.empty()) {
    md += fmt::format("- **interrupted by {}**: the runs so far are kept, the last ended as aborted; no score\n",
                      result.interrupted);
  }
  return md;
}

std::string render_toggles_markdown(const Result& result) {
  std::string md = "## Toggles\n\n| toggle | requested | in effect | reason |\n|---|---|---|---|\n";
  for (const ResultToggle& t : result.toggles) {
    md += fmt::format("| {} | {} | {} | {} |\n", t.name, t.requested ? "on" : "off", t.in_effect ? "on" : "off",
                      t.reason);
  }
  return md;
}

std::string render_program_markdown(const Result& result) {
  std::string md;
  size_t i = 0;
  for (const ResultRun& r : result.runs) {
    if (!r.program) {
      ++i;
      continue;
    }
    const ResultProgram& p = *r.program;
    std::string ended = p.timed_out ? "timed out" : p.signal.empty() ? fmt::format("exit {}", p.exit_status.value_or(-1))
                                                                      : "killed by " + p.signal;
    md += fmt::format("| {} | {} | {} | {:.3f} | {} | {}{} | {} | `{}`, `{}` |\n", i, r.seed, ended, p.wall_s,
                      p.log_source == "file" ? r.log : r.log + " (from its output)", p.compliance,
                      p.compliance_detail.empty() ? "" : ": " + p.compliance_detail, p.throughput_source,
                      p.stdout_file, p.stderr_file);
    ++i;
  }
  if (md.empty()) return md;
  std::string head =
      "\n## Program\n\nAn external program ran each seed (its workload file: `" + result.spec.workload_file +
      "`). Its times and quality are what its log states; the toggles were passed to it as the file maps them, "
      "and perflab cannot see whether it honoured them.\n\n"
      "| run | seed | ended | wall (s) | log | compliance | throughput from | output |\n"
      "|---|---|---|---|---|---|---|---|\n";
  md = head + md;
  const ResultRun* first = nullptr;
  for (const ResultRun& r : result.runs) {
    if (r.program && !first) first = &r;
  }
  md += "\nCommand (run 0; the others differ in their seed and folders):\n\n```\n";
  for (const auto& [name, value] : first->program->env) md += name + "=" + value + " ";
  std::vector<std::string> quoted;
  for (const std::string& a : first->program->command) quoted.push_back(slurm::shell_quote_if_needed(a));
  md += join(quoted, " ") + "\n```\n";
  if (!first->program->submission.empty()) {
    md += "\nWhat its log says it is:";
    for (const auto& [key, value] : first->program->submission.items()) {
      md += fmt::format(" {}={};", key, value.is_string() ? value.get<std::string>() : value.dump());
    }
    md.back() = '\n';
  }
  return md;
}

std::string render_parts_markdown(const Result& result) {
  std::string md;
  size_t i = 0;
  for (const ResultRun& r : result.runs) {
    for (const ResultPart& p : r.parts) {
      md += fmt::format("| {} | {} | {} | {:.4f} | {} | {} |\n", i, r.seed, p.name, p.ms, p.repetitions, p.clock);
    }
    ++i;
  }
  if (md.empty()) return md;
  return "\n## Parts timed alone\n\nEach part the step names, timed by the harness after the gate: the median of "
         "its repetitions, each the slowest rank's.\n\n| run | seed | part | ms | repetitions | clock |\n"
         "|---|---|---|---|---|---|\n" +
         md;
}

std::string render_execution_markdown(const Result& result) {
  bool any = false;
  for (const ResultRun& r : result.runs) any |= r.execution.has_value();
  if (!any) return "";
  std::string md =
      "\n## Device execution\n\n| # | seed | cuda graphs | captured | replayed | host syncs per iteration | "
      "declared | kernels per iteration (declared) |\n|---|---|---|---|---|---|---|---|\n";
  int i = 0;
  for (const ResultRun& r : result.runs) {
    const int index = i++;
    if (!r.execution) continue;
    const ResultExecution& e = *r.execution;
    const std::string syncs =
        e.syncs_min == e.syncs_max ? fmt::format("{}", e.syncs_max) : fmt::format("{} to {}", e.syncs_min, e.syncs_max);
    std::string kernels = "not counted" + (e.launches_note.empty() ? "" : ": " + e.launches_note);
    std::replace(kernels.begin(), kernels.end(), '|', '/');  // a table cell
    std::replace(kernels.begin(), kernels.end(), '\n', ' ');
    if (e.kernels_per_iteration) {
      kernels = fmt::format("{}{}; copies {}, memsets {}", *e.kernels_per_iteration,
                            e.declared_kernels_per_iteration ? fmt::format(" ({})", *e.declared_kernels_per_iteration)
                                                             : "",
                            e.copies_per_iteration.value_or(0), e.memsets_per_iteration.value_or(0));
    }
    md += fmt::format("| {} | {} | {} | {} | {} | {} | {} | {} |\n", index, r.seed, e.graphs_note, e.graphs_captured,
                      e.graph_replays, syncs, e.syncs_expected ? fmt::format("{}", *e.syncs_expected) : "-", kernels);
  }
  return md;
}

std::string render_placement_summary(const Result& result) {
  const nlohmann::json& data = result.plan.data;
  const std::vector<std::string> lines = placement_lines(data);
  if (lines.empty()) return "";
  std::string out = fmt::format("{} ranks, placement:", lines.size());
  for (const std::string& line : lines) out += " " + line + ";";
  out.back() = '\n';
  const std::string bytes = exchange_text(data);
  if (!bytes.empty()) out += "all-to-all per iteration (all ranks): " + bytes + reduction_text(data) + "\n";
  return out + render_projection_summary(result);
}

std::string render_placement_markdown(const Result& result) {
  const nlohmann::json& data = result.plan.data;
  const std::vector<std::string> lines = placement_lines(data);
  if (lines.empty()) return "";
  const nlohmann::json& strategy = data["placement"].contains("strategy") ? data["placement"]["strategy"] : data;
  std::string md = fmt::format("\n## Ranks\n\n{} ranks; placement: {}\n\n", lines.size(),
                               strategy.is_string() ? strategy.get<std::string>() : std::string("?"));
  for (const std::string& line : lines) md += "- " + line + "\n";
  const std::string bytes = exchange_text(data);
  if (!bytes.empty()) md += "\nAll-to-all bytes per iteration, summed over ranks: " + bytes + reduction_text(data) + "\n";
  return md;
}

}  // namespace perflab::reports
