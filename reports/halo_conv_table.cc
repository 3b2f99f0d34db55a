#include "reports/halo_conv_table.h"

#include <algorithm>
#include <map>
#include <tuple>

#include <fmt/format.h>

#include "base/json_number.h"

namespace perflab::reports {
namespace {

int data_int(const Result& r, const char* key) {
  const auto it = r.plan.data.find(key);
  return it != r.plan.data.end() ? json_number<int>(*it).value_or(0) : 0;
}

std::string data_text(const Result& r, const char* key) {
  const auto it = r.plan.data.find(key);
  return it != r.plan.data.end() && it->is_string() ? it->get<std::string>() : "";
}

/// The median over successful runs of a part timed alone (runs[].parts;
/// results from before the harness timed parts have it as the fact
/// "<part>_ms"), when any run has it.
std::optional<double> part_median(const Result& r, const std::string& part) {
  std::vector<double> values;
  for (const ResultRun& run : r.runs) {
    if (!run.success()) continue;
    if (const ResultPart* p = run.part(part)) {
      values.push_back(p->ms);
    } else if (const auto it = run.facts.find(part + "_ms"); it != run.facts.end() && it->is_number()) {
      values.push_back(it->get<double>());
    }
  }
  if (values.empty()) return std::nullopt;
  return percentile(values, 50);
}

std::string fact_text(const Result& r, const char* key) {
  for (const ResultRun& run : r.runs) {
    const auto it = run.facts.find(key);
    if (it != run.facts.end() && it->is_string()) return it->get<std::string>();
  }
  return "-";
}

std::optional<double> step_ms(const Result& r) {
  if (r.work.median_iteration_ms) return r.work.median_iteration_ms;
  std::vector<double> medians;
  for (const ResultRun& run : r.runs) {
    if (run.success() && run.iteration_ms.n > 0) medians.push_back(run.iteration_ms.p50);
  }
  if (medians.empty()) return std::nullopt;
  return percentile(medians, 50);
}

std::string ms_cell(const std::optional<double>& v) { return v ? fmt::format("{:.3f}", *v) : "-"; }

/// The overlap efficiency as a cell: a share of the transfer hidden, or,
/// where the overlapped step was slower than the naive one (a negative
/// ratio: -1904% on an H200, unreadable), by how much.
std::string efficiency_cell(const HaloConvRow& r) {
  if (!r.efficiency) return "-";
  if (*r.efficiency >= 0 || !r.transfer_ms) return fmt::format("{:.0f}%", 100 * *r.efficiency);
  return fmt::format("none ({:.3f} ms slower)", -*r.efficiency * *r.transfer_ms);
}

}  // namespace

bool is_halo_conv_result(const Result& result) { return result.spec.workload == "halo_conv"; }

std::vector<HaloConvRow> halo_conv_rows(const std::vector<Result>& results) {
  std::vector<HaloConvRow> rows;
  for (const Result& r : results) {
    const std::optional<double> step = step_ms(r);
    if (!is_halo_conv_result(r) || !step) continue;
    HaloConvRow row;
    row.shape = fmt::format("{}x{}x{}x{}x{} -> {}, k={}, {}", data_int(r, "batch"), data_int(r, "channels"),
                            data_int(r, "depth"), data_int(r, "height"), data_int(r, "width"),
                            data_int(r, "out_channels"), data_int(r, "kernel"), data_text(r, "pass"));
    row.backend = r.spec.backend;
    row.partitions = data_int(r, "partitions");
    row.ranks = data_int(r, "ranks");
    row.halo = data_text(r, "halo");
    row.overlap = fact_text(r, "overlap");
    row.step_ms = *step;
    row.compute_ms = part_median(r, "compute");
    row.transfer_ms = part_median(r, "transfer");
    row.allreduce_ms = part_median(r, "allreduce");
    for (const char* part : {"level1", "level2", "gather", "bottleneck", "split"}) {
      if (const auto v = part_median(r, part)) row.hybrid_parts.emplace_back(part, *v);
    }
    if (data_text(r, "scheme") == "hybrid") row.shape += ", hybrid";  // its own twins only
    if (data_text(r, "precision") == "bf16") row.shape += ", bf16";    // likewise: never paired with fp32
    if (row.compute_ms) row.exposed_ms = std::max(0.0, row.step_ms - *row.compute_ms);
    row.voxels_per_s = row.step_ms > 0 ? static_cast<double>(r.plan.global_batch_size) / (row.step_ms * 1e-3) : 0;
    if (r.work.flops_per_iteration > 0 && row.step_ms > 0) {
      row.tflops = r.work.flops_per_iteration / (row.step_ms * 1e-3) / 1e12;
    }
    rows.push_back(row);
  }
  const auto key = [](const HaloConvRow& x) { return std::tie(x.shape, x.backend, x.partitions, x.ranks, x.halo); };
  std::sort(rows.begin(), rows.end(), [&](const HaloConvRow& a, const HaloConvRow& b) { return key(a) < key(b); });
  for (HaloConvRow& row : rows) {
    for (const HaloConvRow& other : rows) {
      if (other.shape != row.shape || other.backend != row.backend) continue;
      if (row.halo == "overlap" && other.halo == "naive" && other.partitions == row.partitions &&
          other.ranks == row.ranks && row.transfer_ms && *row.transfer_ms >= 0.01 * row.step_ms) {
        row.efficiency = (other.step_ms - row.step_ms) / *row.transfer_ms;
      }
      if (other.partitions == 1 && other.step_ms > 0 && (!row.vs_whole || other.halo == row.halo)) {
        row.vs_whole = row.step_ms / other.step_ms;
      }
    }
  }
  return rows;
}

std::vector<std::string> halo_conv_header() {
  return {"shape", "backend", "partitions", "ranks", "halo", "overlap", "step ms", "compute ms", "transfer ms",
          "exposed ms", "allreduce ms", "overlap efficiency", "vs 1 partition", "voxels/s", "TFLOP/s"};
}

std::vector<std::vector<std::string>> halo_conv_cells(const std::vector<HaloConvRow>& rows) {
  std::vector<std::vector<std::string>> cells;
  for (const HaloConvRow& r : rows) {
    cells.push_back({r.shape, r.backend, std::to_string(r.partitions), std::to_string(r.ranks), r.halo, r.overlap,
                     fmt::format("{:.3f}", r.step_ms), ms_cell(r.compute_ms), ms_cell(r.transfer_ms),
                     ms_cell(r.exposed_ms), ms_cell(r.allreduce_ms), efficiency_cell(r),
                     r.vs_whole ? fmt::format("{:.2f}x", *r.vs_whole) : "-", fmt::format("{:.4g}", r.voxels_per_s),
                     r.tflops ? fmt::format("{:.3g}", *r.tflops) : "-"});
  }
  return cells;
}

std::string render_halo_conv_summary(const Result& result) {
  const std::vector<HaloConvRow> rows = halo_conv_rows({result});
  if (rows.empty()) return "";
  const HaloConvRow& r = rows.front();
  std::string out = fmt::format("halo_conv: {} partition(s) on {} rank(s), halo {} (overlap: {})\n", r.partitions,
                                r.ranks, r.halo, r.overlap);
  out += fmt::format("  step {:.3f} ms", r.step_ms);
  if (r.compute_ms && r.exposed_ms) {
    out += fmt::format(" = compute {:.3f} ms + exposed {:.3f} ms", std::min(*r.compute_ms, r.step_ms), *r.exposed_ms);
  }
  if (r.transfer_ms) out += fmt::format("; halo transfer alone {:.3f} ms", *r.transfer_ms);
  if (r.allreduce_ms) out += fmt::format("; weight-gradient all-reduce {:.3f} ms", *r.allreduce_ms);
  if (!r.hybrid_parts.empty()) {
    out += "; alone:";
    for (const auto& [part, ms] : r.hybrid_parts) out += fmt::format(" {} {:.3f} ms", part, ms);
  }
  return out + "\n";
}

BarChart halo_conv_chart(const std::vector<HaloConvRow>& rows) {
  BarChart chart;
  chart.title = "Step time: compute and exposed transfer";
  chart.y_label = "ms per step";
  for (const HaloConvRow& r : rows) {
    Bar bar;
    bar.label = fmt::format("{} P={}\n{}", r.backend, r.partitions, r.halo);
    bar.value = r.step_ms;
    if (r.compute_ms && r.exposed_ms) {
      bar.stack = {{"compute", std::min(*r.compute_ms, r.step_ms)}, {"exposed transfer", *r.exposed_ms}};
    }
    chart.bars.push_back(bar);
  }
  return chart;
}

}  // namespace perflab::reports
