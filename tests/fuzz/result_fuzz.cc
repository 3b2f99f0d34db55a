// Fuzzes the result loader: the result model's validation and typed reader
// (harness/result_model.h), its writer (what it reads, written again, reads
// back the same), rerun's request_from_json, and every report made
// from results, as `perflab report`, `perflab rerun` and sweeps use them.
// The input is one or more result documents separated by NUL bytes (a set
// of result files). Properties: a bad document is a UsageError, never
// another exception or undefined behaviour; the typed reader refuses every
// document validate_result refuses; reports render from whatever it accepts.
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/error.h"
#include "harness/result_model.h"
#include "harness/run_spec.h"
#include "reports/render.h"
#include "reports/result_set.h"
#include "reports/throughput_report.h"
#include "tests/fuzz/fuzz_check.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace perflab;
  using namespace perflab::fuzz;
  const std::string input(reinterpret_cast<const char*>(data), size);
  reports::ResultSet set;
  size_t start = 0;
  for (int i = 0; start <= input.size() && i < 8; ++i) {
    size_t end = input.find('\0', start);
    if (end == std::string::npos) end = input.size();
    const std::string path = "fuzz/" + std::to_string(i) + "/result.json";
    const nlohmann::json doc = nlohmann::json::parse(input.substr(start, end - start), nullptr, false);
    start = end + 1;
    if (doc.is_discarded()) continue;
    const std::string problem = validate_result(doc);
    try {
      Result view = parse_result(doc, path);
      require(problem.empty(), "the typed reader accepted what validate_result refuses: " + problem);
      // What the model writes, it reads back as written.
      const nlohmann::json written = to_json(view);
      require(to_json(parse_result(written, path)) == written, "a result written by to_json reads back differently");
      try {
        request_from_json(to_json(view.spec));
      } catch (const UsageError&) {
      }
      reports::render_run_summary(view);
      reports::render_run_markdown(view);
      set.results.push_back({path, std::move(view)});
    } catch (const UsageError& e) {
      set.skipped.push_back(e.what());
    }
  }
  const reports::SweepReport report = reports::make_sweep_report(set, "fuzz");
  reports::render_sweep_markdown(report);
  reports::render_sweep_csv(report);
  reports::render_sweep_json(report);
  reports::render_sweep_html(report);
  return 0;
}
