// Per-kernel profile rendering (see kernel_table.h).
#include "reports/kernel_table.h"

#include <fmt/format.h>

#include <optional>

#include "reports/render_format.h"

namespace perflab::reports {
namespace {

using detail::fixed;

/// "12.3x", or "-" without a value.
std::string times(const std::optional<double>& v) { return v ? fixed(v, 1) + "x" : "-"; }

/// "128 (declared 40)" or "128".
std::string kernels_line(const KernelProfile& p) {
  std::string out = fmt::format("{:g}", p.kernels_per_iteration);
  if (p.declared_kernels_per_iteration)
    out += fmt::format(" (declared {:g})", *p.declared_kernels_per_iteration);
  return out;
}

/// "92% of the window, 1.45 at a time", or why not; and the stalls left out.
std::string busy_line(const KernelProfile& p) {
  if (!p.busy_share) return "not measured (no timed records)";
  std::string line = fmt::format(
      "{:.0f}% of the window, {:.2f} at a time (the rest waits on launches, dependencies or the host)",
      100 * *p.busy_share, p.concurrency.value_or(0));
  if (p.stalls > 0) {
    line += fmt::format("; left out: {} stall{} longer than an iteration, {:.1f} us", p.stalls,
                        p.stalls == 1 ? "" : "s", p.stall_us);
  }
  return line;
}

std::string overhead_line(const KernelProfile& p) {
  if (!p.overhead()) return "not measured";
  return fmt::format("{:.3f} ms profiled / {:.3f} ms unprofiled = {:.3f}x",
                     *p.profiled_iteration_ms, *p.unprofiled_iteration_ms, *p.overhead());
}

/// Achieved rate of a row: TFLOP/s when it declares FLOPs, else GB/s.
std::string rate(const KernelRow& r) {
  if (r.achieved_tflops) return fmt::format("{:.1f} TFLOP/s", *r.achieved_tflops);
  if (r.achieved_gbs) return fmt::format("{:.0f} GB/s", *r.achieved_gbs);
  return "-";
}

/// Removes every <...> group (template arguments), nested ones included.
std::string without_templates(const std::string& name) {
  std::string out;
  int depth = 0;
  for (char c : name) {
    if (c == '<') {
      if (depth++ == 0) out += "<>";
      continue;
    }
    if (c == '>' && depth > 0) {
      --depth;
      continue;
    }
    if (depth == 0) out += c;
  }
  return out;
}

std::string kernel_cell(std::string text) {
  for (char& c : text) {
    if (c == '|') c = '/';
  }
  return text;
}

}  // namespace

std::string short_kernel_name(const std::string& name, size_t width) {
  std::string s = name;
  // The parameter list says least, then the return type, then the template
  // arguments (they tell instantiations apart), then the middle.
  if (s.size() > width) {
    const size_t paren = s.find('(');
    if (paren != std::string::npos && paren > 0) s = s.substr(0, paren) + "(...)";
  }
  if (s.size() > width && s.rfind("void ", 0) == 0) s = s.substr(5);
  if (s.size() > width) s = without_templates(s);
  if (s.size() > width && width > 5) {
    const size_t keep = width - 3;
    s = s.substr(0, keep / 2) + "..." + s.substr(s.size() - (keep - keep / 2));
  }
  return s;
}

namespace {

/// A profile record's name for the gap tables: copies and memsets as they are, kernels cut short.
std::string record_name(const std::string& n, size_t width) {
  return n.rfind("mem", 0) == 0 ? n : short_kernel_name(n, width);
}

}  // namespace

std::string render_profile_markdown(const Result& result, size_t max_rows) {
  std::string md;
  int index = 0;
  for (const ResultRun& run : result.runs) {
    const int i = index++;
    if (!run.profile) continue;
    const KernelProfile& p = *run.profile;
    if (md.empty()) md = "\n## Kernels (--profile)\n";
    md += fmt::format("\n### Run {} (seed {}): {} profiled iterations\n\n", i, run.seed,
                      p.iterations);
    md += fmt::format(
        "- device time per iteration: {:.1f} us; kernels per iteration: {}; copies {:g}; memsets "
        "{:g}\n",
        p.iteration_us, kernels_line(p), p.copies_per_iteration, p.memsets_per_iteration);
    md += fmt::format("- device busy (kernels, copies, memsets): {}\n", busy_line(p));
    md += fmt::format("- profiler's cost (median iteration): {}\n", overhead_line(p));
    md += fmt::format("- floors at the peaks of: {}\n", p.peaks);
    if (p.dropped > 0)
      md += fmt::format("- **CUPTI dropped {} records**: the table undercounts\n", p.dropped);
    if (!p.trace.empty())
      md += fmt::format("- trace: `{}` (Perfetto, chrome://tracing)\n", p.trace);
    md +=
        "\n| kernel | launches/it | us/it | share | mean us | declared | achieved | floor us | x "
        "floor |\n"
        "|---|---|---|---|---|---|---|---|---|\n";
    size_t shown = 0;
    for (const KernelRow& r : p.rows) {
      if (shown++ == max_rows) {
        md += fmt::format("| ({} more rows in result.json) | | | | | | | | |\n",
                          p.rows.size() - max_rows);
        break;
      }
      const std::string name =
          r.kind == "kernel" ? short_kernel_name(r.name, 100) : r.name + " (" + r.kind + ")";
      md += fmt::format("| `{}` | {:g} | {:.1f} | {:.1f}% | {:.2f} | {} | {} | {} | {} |\n",
                        kernel_cell(name), r.launches_per_iteration, r.us_per_iteration, 100 * r.share,
                        r.mean_us, r.declared.empty() ? "-" : kernel_cell(r.declared), rate(r),
                        fixed(r.floor_us, 1), times(r.x_floor));
    }
    if (!p.groups.empty()) {
      md +=
          "\n| declared | kernels | launches/it (declared) | us/it | share | floor us | x floor |\n"
          "|---|---|---|---|---|---|---|\n";
      for (const KernelGroup& g : p.groups) {
        md +=
            fmt::format("| {} | {} | {:g} ({:g}) | {:.1f} | {:.1f}% | {} | {} |\n",
                        kernel_cell(g.declared), g.rows, g.launches_per_iteration, g.declared_launches,
                        g.us_per_iteration, 100 * g.share, fixed(g.floor_us, 1), times(g.x_floor));
      }
    }
    if (!p.idle_gaps.empty()) {
      md +=
          "\nWhere the device waited (no kernel, copy or memset running), by what ended the busy stretch and "
          "what started the next:\n\n"
          "| after | before | idle us/it | gaps/it |\n"
          "|---|---|---|---|\n";
      for (const IdleGap& g : p.idle_gaps) {
        md += fmt::format("| `{}` | `{}` | {:.1f} | {:g} |\n", kernel_cell(record_name(g.before, 60)),
                          kernel_cell(record_name(g.after, 60)), g.us_per_iteration, g.gaps_per_iteration);
      }
    }
    if (!p.busy_waits.empty()) {
      md +=
          "\nWhere the step's last-arrival path waited while the device was busy (each record back to the one "
          "that ended last before it started; a wait on free SMs or on an earlier dependency, the records do not "
          "say which), by the record before, the one that waited and the record beside it most:\n\n"
          "| after | waited | beside | busy us/it | waits/it |\n"
          "|---|---|---|---|---|\n";
      for (const BusyWait& w : p.busy_waits) {
        md += fmt::format("| `{}` | `{}` | `{}` | {:.1f} | {:g} |\n", kernel_cell(record_name(w.before, 50)),
                          kernel_cell(record_name(w.after, 50)), kernel_cell(record_name(w.beside, 50)),
                          w.us_per_iteration, w.waits_per_iteration);
      }
    }
    for (const std::string& u : p.unmatched) md += fmt::format("- declared but not run: {}\n", u);
  }
  return md;
}

std::string render_profile_summary(const Result& result, size_t top) {
  std::string out;
  int index = 0;
  for (const ResultRun& run : result.runs) {
    const int i = index++;
    if (!run.profile) continue;
    const KernelProfile& p = *run.profile;
    out += fmt::format(
        "run {} kernels: {} per iteration, {:.1f} us of device time; profiler {}\n", i,
        kernels_line(p), p.iteration_us,
        p.overhead() ? fmt::format("cost {:.3f}x", *p.overhead()) : "cost not measured");
    size_t shown = 0;
    for (const KernelRow& r : p.rows) {
      if (shown++ == top) break;
      out += fmt::format("  {:5.1f}%  {:9.1f} us  x{:<5g}  {:>6}  {}\n", 100 * r.share,
                         r.us_per_iteration, r.launches_per_iteration, times(r.x_floor),
                         r.kind == "kernel" ? short_kernel_name(r.name, 72) : r.name);
    }
    if (!p.trace.empty()) out += fmt::format("  trace: {}\n", p.trace);
  }
  return out;
}

}  // namespace perflab::reports
