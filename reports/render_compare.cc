// A Comparison as an aligned console table, a Markdown table and JSON.
#include <algorithm>

#include <fmt/format.h>

#include "base/text.h"
#include "reports/compare.h"

namespace perflab::reports {
namespace {

std::string number(double v) { return fmt::format("{:.4g}", v); }

std::string percent(double change) { return fmt::format("{:+.1f}%", 100 * change); }

std::string p_text(const CompareRow& r) {
  if (r.test.method == UTestMethod::kNone) return "-";
  return fmt::format("{:.3g}", r.test.p_value);
}

std::string geomean_text(const Comparison& c) {
  const double change = c.geomean_time_ratio - 1;
  return fmt::format("{} ({} over {} metrics)", percent(change), change > 0 ? "slower" : "faster or same",
                     c.geomean_rows);
}

/// The table's cells: header, then one row per comparison row.
std::vector<std::vector<std::string>> cells(const Comparison& c) {
  std::vector<std::vector<std::string>> t;
  t.push_back({"point", "metric", "base", "candidate", "change", "p", "n", "verdict"});
  for (const CompareRow& r : c.rows) {
    t.push_back({r.label, r.metric + " (" + r.unit + ")", number(r.base_median), number(r.candidate_median),
                 percent(r.change), p_text(r), fmt::format("{}/{}", r.base_n, r.candidate_n),
                 verdict_name(r.verdict)});
  }
  return t;
}

std::string notes(const Comparison& c, const char* bullet) {
  std::string out;
  for (const CompareRow& r : c.rows) {
    if (!r.note.empty()) out += fmt::format("{}{} {}: {}\n", bullet, r.label, r.metric, r.note);
  }
  for (const auto& m : c.only_base) out += fmt::format("{}only in base: {}\n", bullet, m);
  for (const auto& m : c.only_candidate) out += fmt::format("{}only in candidate: {}\n", bullet, m);
  return out;
}

}  // namespace

std::string render_compare_console(const Comparison& c) {
  const auto t = cells(c);
  std::vector<size_t> width(t[0].size(), 0);
  for (const auto& row : t) {
    for (size_t i = 0; i < row.size(); ++i) width[i] = std::max(width[i], row[i].size());
  }
  std::string out;
  for (size_t k = 0; k < t.size(); ++k) {
    std::string line;
    for (size_t i = 0; i < t[k].size(); ++i) {
      // Text columns left-aligned, numbers right-aligned.
      const bool left = i < 2 || i + 1 == t[k].size();
      line += left ? fmt::format("{:<{}}", t[k][i], width[i]) : fmt::format("{:>{}}", t[k][i], width[i]);
      if (i + 1 < t[k].size()) line += "  ";
    }
    while (!line.empty() && line.back() == ' ') line.pop_back();
    out += line + "\n";
    if (k == 0) out += std::string(line.size(), '-') + "\n";
  }
  out += fmt::format("geomean time ratio: {}\n", geomean_text(c));
  out += fmt::format("verdicts need p < {} (two-sided Mann-Whitney U) and a change of at least {:.1f}%\n",
                     c.options.alpha, 100 * c.options.threshold);
  out += notes(c, "note: ");
  return out;
}

std::string render_compare_markdown(const Comparison& c) {
  const auto t = cells(c);
  auto escape = [](const std::string& s) {
    std::string e;
    for (char ch : s) e += ch == '|' ? std::string("\\|") : std::string(1, ch);
    return e;
  };
  std::string out;
  for (size_t k = 0; k < t.size(); ++k) {
    std::vector<std::string> row;
    for (const auto& cell : t[k]) row.push_back(escape(cell));
    out += "| " + join(row, " | ") + " |\n";
    if (k == 0) out += "|---|---|--:|--:|--:|--:|--:|---|\n";
  }
  out += fmt::format("\n**Geomean time ratio:** {}\n\n", geomean_text(c));
  out += fmt::format("Verdicts need p < {} (two-sided Mann-Whitney U) and a change of at least {:.1f}%.\n",
                     c.options.alpha, 100 * c.options.threshold);
  const std::string n = notes(c, "- ");
  if (!n.empty()) out += "\n" + n;
  return out;
}

nlohmann::json compare_to_json(const Comparison& c) {
  using nlohmann::json;
  json rows = json::array();
  for (const CompareRow& r : c.rows) {
    rows.push_back({{"point", r.label},
                    {"point_key", r.point},
                    {"metric", r.metric},
                    {"unit", r.unit},
                    {"lower_is_better", r.lower_is_better},
                    {"base", {{"median", r.base_median}, {"n", r.base_n}, {"failed", r.base_failed}}},
                    {"candidate", {{"median", r.candidate_median}, {"n", r.candidate_n}, {"failed", r.candidate_failed}}},
                    {"change", r.change},
                    {"u", r.test.u},
                    {"p_value", r.test.p_value},
                    {"test", r.test.method == UTestMethod::kExact    ? "exact"
                             : r.test.method == UTestMethod::kNormal ? "normal"
                                                                      : "none"},
                    {"verdict", verdict_name(r.verdict)},
                    {"note", r.note}});
  }
  return {{"threshold", c.options.threshold},
          {"alpha", c.options.alpha},
          {"rows", rows},
          {"geomean_time_ratio", c.geomean_time_ratio},
          {"geomean_rows", c.geomean_rows},
          {"only_base", c.only_base},
          {"only_candidate", c.only_candidate},
          {"regressed", c.regressed()}};
}

}  // namespace perflab::reports
