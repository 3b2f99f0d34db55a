// `perflab data convert`: Criteo TSV -> the binary layout described by a
// DeepLearningExamples-style feature_spec.yaml, which dlrm reads with
// --set data=DIR/feature_spec.yaml. Registers itself with the CLI
// (harness/command_registry.h); built into perflab_workload_dlrm.
#include <iostream>
#include <memory>

#include <fmt/format.h>

#include "harness/command_registry.h"
#include "base/error.h"
#include "workloads/dlrm/data/binary_dataset.h"

namespace perflab::dlrm {
namespace {

cli::Command add_data(CLI::App& app) {
  auto* sub = app.add_subcommand("data", "Prepare datasets");
  sub->require_subcommand(1);
  auto* convert = sub->add_subcommand(
      "convert", "Convert Criteo TSV (label, 13 integers, 26 hex ids) to a binary dataset");
  auto options = std::make_shared<ConvertOptions>();
  convert->add_option("--input,-i", options->train_paths, "Training TSV file(s), in order")
      ->required();
  convert->add_option("--test", options->test_path, "TSV file for the held-out split");
  convert->add_option("--eval-fraction", options->eval_fraction,
                      "Without --test: hold out this fraction of the last training rows");
  convert->add_option("--output,-o", options->output_dir, "Output folder (created)")->required();
  convert->add_option("--max-table-size", options->table_size,
                      "Rows per embedding table; hashed ids fold into it")
      ->capture_default_str();
  convert->add_flag("--force", options->overwrite, "Replace a non-empty output folder");
  return {sub, [options] {
            if (options->test_path.empty() && options->eval_fraction <= 0) {
              throw UsageError("data convert: give --test FILE or --eval-fraction F (0 < F < 1)");
            }
            ConvertSummary s = convert_criteo_tsv(*options);
            std::cout << fmt::format("converted {} train and {} test rows; categorical ids as {}\n",
                                     s.train_rows, s.test_rows, s.categorical_dtype);
            std::cout << fmt::format("use: perflab run dlrm --set data={}\n", s.spec_path);
            return 0;
          }};
}

PERFLAB_REGISTER_COMMAND("data", add_data);

}  // namespace
}  // namespace perflab::dlrm
