// Per-kernel comparison of profiled points (see kernel_compare.h).
#include "reports/kernel_compare.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>

#include "reports/kernel_table.h"
#include "reports/point_match.h"

namespace perflab::reports {
namespace {

using json = nlohmann::json;

/// Per kernel (kind and name) of a point's profiled runs: every run's
/// us/it, launches/it and share; a run that did not run the kernel counts
/// 0 (a library may pick another kernel in some runs).
struct Samples {
  std::vector<double> us, launches, share;
};
using KernelKey = std::pair<std::string, std::string>;  // kind, name

std::map<KernelKey, Samples> samples(const std::vector<KernelProfile>& runs) {
  std::map<KernelKey, Samples> out;
  for (const KernelProfile& p : runs) {
    for (const KernelRow& r : p.rows) out[{r.kind, r.name}];
  }
  for (auto& [key, s] : out) {
    for (const KernelProfile& p : runs) {
      auto row = std::find_if(p.rows.begin(), p.rows.end(), [&, &k = key](const KernelRow& r) {
        return r.kind == k.first && r.name == k.second;
      });
      const bool ran = row != p.rows.end();
      s.us.push_back(ran ? row->us_per_iteration : 0);
      s.launches.push_back(ran ? row->launches_per_iteration : 0);
      s.share.push_back(ran ? row->share : 0);
    }
  }
  return out;
}

std::optional<double> med(const std::vector<double>& v) {
  if (v.empty()) return std::nullopt;
  return median(v);
}

template <typename F>
double median_of(const std::vector<KernelProfile>& runs, F field) {
  std::vector<double> v;
  for (const KernelProfile& p : runs) v.push_back(field(p));
  return v.empty() ? 0 : median(v);
}

std::string us(const std::optional<double>& v) { return v ? fmt::format("{:.1f}", *v) : "-"; }

std::string change_text(const KernelChange& k) {
  if (!k.base_us) return "new";
  if (!k.candidate_us) return "gone";
  const std::optional<double> c = k.change();
  return c ? fmt::format("{:+.1f}%", 100 * *c) : "-";
}

json optional_json(const std::optional<double>& v) { return v ? json(*v) : json(nullptr); }

}  // namespace

std::optional<double> KernelChange::change() const {
  if (!base_us || !candidate_us || *base_us <= 0) return std::nullopt;
  return *candidate_us / *base_us - 1;
}

KernelComparison compare_kernels(const std::vector<PointProfiles>& base,
                                 const std::vector<PointProfiles>& candidate) {
  KernelComparison c;
  const auto sides = [](const std::vector<PointProfiles>& profiles) {
    std::vector<PointIdentity> ids;
    for (const PointProfiles& p : profiles) ids.push_back({parse_point_key(p.point), p.set_params});
    return ids;
  };
  const Pairing pairing = pair_points(sides(base), std::vector<std::string>(base.size()), sides(candidate),
                                      std::vector<std::string>(candidate.size()));
  for (size_t i = 0; i < base.size(); ++i) {
    const PointProfiles& b = base[i];
    if (pairing.partner[i] == Pairing::npos) {
      c.only_base.push_back(b.label);
      continue;
    }
    const auto match = candidate.begin() + static_cast<std::ptrdiff_t>(pairing.partner[i]);
    PointKernelComparison pc;
    pc.point = b.point;
    pc.label = b.label;
    pc.across_versions = pairing.gaps[i].describe("base", "candidate");
    pc.base_runs = b.runs.size();
    pc.candidate_runs = match->runs.size();
    pc.base_iteration_us = median_of(b.runs, [](const KernelProfile& p) { return p.iteration_us; });
    pc.candidate_iteration_us =
        median_of(match->runs, [](const KernelProfile& p) { return p.iteration_us; });
    pc.base_kernels =
        median_of(b.runs, [](const KernelProfile& p) { return p.kernels_per_iteration; });
    pc.candidate_kernels =
        median_of(match->runs, [](const KernelProfile& p) { return p.kernels_per_iteration; });
    const std::map<KernelKey, Samples> bs = samples(b.runs), cs = samples(match->runs);
    std::map<KernelKey, KernelChange> rows;
    for (const auto& [key, s] : bs) {
      KernelChange& k = rows[key];
      k.kind = key.first;
      k.kernel = key.second;
      k.base_us = med(s.us);  // a run without the kernel counted 0
      k.base_launches = med(s.launches);
      k.base_share = med(s.share);
    }
    for (const auto& [key, s] : cs) {
      KernelChange& k = rows[key];
      k.kind = key.first;
      k.kernel = key.second;
      k.candidate_us = med(s.us);
      k.candidate_launches = med(s.launches);
      k.candidate_share = med(s.share);
    }
    for (auto& [key, k] : rows) pc.kernels.push_back(std::move(k));
    std::stable_sort(pc.kernels.begin(), pc.kernels.end(),
                     [](const KernelChange& x, const KernelChange& y) {
                       return std::fabs(x.delta_us()) > std::fabs(y.delta_us());
                     });
    c.points.push_back(std::move(pc));
  }
  for (size_t j = 0; j < candidate.size(); ++j) {
    if (!pairing.paired[j]) c.only_candidate.push_back(candidate[j].label);
  }
  return c;
}

std::string render_kernel_compare_console(const KernelComparison& c, size_t top) {
  if (c.points.empty() && c.only_base.empty() && c.only_candidate.empty()) return "";
  std::string out = "\nkernels (profiled points; median us per iteration, most changed first):\n";
  for (const PointKernelComparison& p : c.points) {
    out += fmt::format(
        "{}: device time {:.1f} -> {:.1f} us/it, kernels {:g} -> {:g} per iteration ({} vs {} "
        "runs)\n",
        p.label, p.base_iteration_us, p.candidate_iteration_us, p.base_kernels, p.candidate_kernels,
        p.base_runs, p.candidate_runs);
    if (!p.across_versions.empty()) out += "  " + p.across_versions + "\n";
    size_t shown = 0;
    for (const KernelChange& k : p.kernels) {
      if (shown++ == top) break;
      out += fmt::format("  {:>10} {:>10} {:>8} {:>+10.1f}  {}\n", us(k.base_us),
                         us(k.candidate_us), change_text(k), k.delta_us(),
                         k.kind == "kernel" ? short_kernel_name(k.kernel, 72) : k.kernel);
    }
  }
  for (const std::string& l : c.only_base) out += fmt::format("{}: profiled in BASE only\n", l);
  for (const std::string& l : c.only_candidate)
    out += fmt::format("{}: profiled in CANDIDATE only\n", l);
  return out;
}

std::string render_kernel_compare_markdown(const KernelComparison& c, size_t top) {
  if (c.points.empty() && c.only_base.empty() && c.only_candidate.empty()) return "";
  std::string md = "\n## Kernels (profiled points)\n";
  for (const PointKernelComparison& p : c.points) {
    md += fmt::format(
        "\n### {}\n\ndevice time {:.1f} -> {:.1f} us per iteration; kernels {:g} -> {:g} per "
        "iteration; {} vs {} profiled runs\n\n",
        p.label, p.base_iteration_us, p.candidate_iteration_us, p.base_kernels, p.candidate_kernels,
        p.base_runs, p.candidate_runs);
    if (!p.across_versions.empty()) md += p.across_versions + ".\n\n";
    md +=
        "| kernel | base us/it | candidate us/it | change | delta us/it | launches/it "
        "|\n|---|---|---|---|---|---|\n";
    size_t shown = 0;
    for (const KernelChange& k : p.kernels) {
      if (shown++ == top) break;
      std::string name = k.kind == "kernel" ? short_kernel_name(k.kernel, 100) : k.kernel;
      std::replace(name.begin(), name.end(), '|', '/');
      md += fmt::format("| `{}` | {} | {} | {} | {:+.1f} | {} -> {} |\n", name, us(k.base_us),
                        us(k.candidate_us), change_text(k), k.delta_us(),
                        k.base_launches ? fmt::format("{:g}", *k.base_launches) : "-",
                        k.candidate_launches ? fmt::format("{:g}", *k.candidate_launches) : "-");
    }
  }
  for (const std::string& l : c.only_base) md += fmt::format("\n- {}: profiled in BASE only\n", l);
  for (const std::string& l : c.only_candidate)
    md += fmt::format("\n- {}: profiled in CANDIDATE only\n", l);
  return md;
}

json kernel_compare_to_json(const KernelComparison& c) {
  json points = json::array();
  for (const PointKernelComparison& p : c.points) {
    json kernels = json::array();
    for (const KernelChange& k : p.kernels) {
      kernels.push_back({{"kernel", k.kernel},
                         {"kind", k.kind},
                         {"base_us_per_iteration", optional_json(k.base_us)},
                         {"candidate_us_per_iteration", optional_json(k.candidate_us)},
                         {"change", optional_json(k.change())},
                         {"delta_us_per_iteration", k.delta_us()},
                         {"base_launches_per_iteration", optional_json(k.base_launches)},
                         {"candidate_launches_per_iteration", optional_json(k.candidate_launches)},
                         {"base_share", optional_json(k.base_share)},
                         {"candidate_share", optional_json(k.candidate_share)}});
    }
    points.push_back({{"point", p.point},
                      {"label", p.label},
                      {"base_runs", p.base_runs},
                      {"candidate_runs", p.candidate_runs},
                      {"base_iteration_us", p.base_iteration_us},
                      {"candidate_iteration_us", p.candidate_iteration_us},
                      {"base_kernels_per_iteration", p.base_kernels},
                      {"candidate_kernels_per_iteration", p.candidate_kernels},
                      {"across_versions", p.across_versions.empty() ? json(nullptr) : json(p.across_versions)},
                      {"kernels", kernels}});
  }
  return {{"points", points}, {"only_base", c.only_base}, {"only_candidate", c.only_candidate}};
}

}  // namespace perflab::reports
