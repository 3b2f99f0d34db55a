// `perflab compare BASE CANDIDATE`: per point and metric, medians, change,
// a Mann-Whitney U test and a verdict; exit 1 when something got slower.
#include <iostream>

#include "harness/cli/commands.h"
#include "reports/compare.h"

namespace perflab::cli {

Command add_compare(CLI::App& app) {
  auto* sub = app.add_subcommand("compare", "Compare two sets of results: medians, U test, verdict per metric");
  auto base = std::make_shared<std::string>();
  auto candidate = std::make_shared<std::string>();
  auto threshold = std::make_shared<double>(5);
  auto alpha = std::make_shared<double>(0.05);
  auto markdown = std::make_shared<bool>(false);
  auto json = std::make_shared<bool>(false);
  sub->add_option("base", *base, "Base: a result.json, or a folder searched for them (sweeps too)")->required();
  sub->add_option("candidate", *candidate, "Candidate: likewise")->required();
  sub->add_option("--threshold", *threshold, "Smallest change of the medians that counts, in percent")
      ->capture_default_str();
  sub->add_option("--alpha", *alpha, "Significance level of the two-sided Mann-Whitney U test")
      ->capture_default_str();
  sub->add_flag("--markdown", *markdown, "Print a Markdown table");
  sub->add_flag("--json", *json, "Print JSON");
  sub->footer("Exit status: 0 nothing slower, 1 a metric got slower, 2 invalid input.");
  return {sub, [=] {
            const auto b = reports::load_metric_input({*base}, "BASE");
            const auto c = reports::load_metric_input({*candidate}, "CANDIDATE");
            for (const auto* in : {&b, &c}) {
              for (const auto& s : in->skipped) std::cerr << "perflab: skipped " << s << "\n";
            }
            const auto comparison = reports::compare_samples(b.samples, c.samples, {*threshold / 100, *alpha});
            if (*json) {
              std::cout << reports::compare_to_json(comparison).dump(2) << "\n";
            } else if (*markdown) {
              std::cout << reports::render_compare_markdown(comparison);
            } else {
              std::cout << reports::render_compare_console(comparison);
            }
            return comparison.regressed() ? 1 : 0;
          }};
}

}  // namespace perflab::cli
