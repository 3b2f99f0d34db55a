// `perflab transducer loss`: the RNN-T loss and its gradient on .npy inputs
// (see workloads/transducer/loss_files.h and the README for the contract).
// Registers itself with the CLI (harness/command_registry.h); built into
// perflab_workload_transducer.
#include <iostream>
#include <memory>

#include <fmt/format.h>

#include "harness/command_registry.h"
#include "workloads/transducer/loss_files.h"

namespace perflab::transducer {
namespace {

cli::Command add_transducer(CLI::App& app) {
  auto* sub = app.add_subcommand("transducer", "RNN-T tools");
  sub->require_subcommand(1);
  auto* loss = sub->add_subcommand(
      "loss", "Evaluate the RNN-T loss and gradient on .npy inputs (for cross-checking)");
  auto o = std::make_shared<LossFileOptions>();
  loss->add_option("--logits", o->logits, "[B,T,U+1,V] or packed [R,V], <f4 or <f8")->required();
  loss->add_option("--labels", o->labels, "[B,U], <i4 or <i8")->required();
  loss->add_option("--logit-lengths", o->logit_lengths, "[B], <i4 or <i8")->required();
  loss->add_option("--label-lengths", o->label_lengths, "[B], <i4 or <i8")->required();
  loss->add_option("--blank", o->blank, "Blank index (default: V-1)");
  loss->add_option("--reduction", o->reduction, "none | sum | mean")->capture_default_str();
  loss->add_option("--out,-o", o->out_dir, "Folder for costs.npy, loss.npy, grads.npy")->required();
  return {sub, [o] {
            auto s = evaluate_loss_files(*o);
            std::cout << fmt::format("{} sequences ({} {} logits): loss {:.17g}\n", s.batch,
                                     s.layout, s.dtype, s.loss);
            std::cout << fmt::format("wrote {0}/costs.npy {0}/loss.npy {0}/grads.npy\n",
                                     o->out_dir.string());
            return 0;
          }};
}

PERFLAB_REGISTER_COMMAND("transducer", add_transducer);

}  // namespace
}  // namespace perflab::transducer
