// The cuda backend's DLRM step in words: the result's perflab_dlrm_*
// hyperparameters, which say what each of the step's choices ran
// (dlrm_benchmark.h: describe_cuda_step).
#include <fmt/format.h>

#include <string>

#include "workloads/dlrm/dlrm_benchmark.h"

namespace perflab::dlrm {

void describe_cuda_step(const DlrmSetup& setup, const CudaStepChoices& c, StepPlan& step) {
  const bool bf16 = setup.precision == "bf16";
  step.precision = bf16 ? "bf16" : "tf32";
  step.work.flops_precision = step.precision;
  // bf16 WMMA needs bf16 embeddings too: a bf16 model that trains its tables.
  step.hyperparameters["perflab_dlrm_interaction"] =
      !setup.interaction_tensor_cores ? "fp32 CUDA cores"
      : bf16 && c.training            ? "bf16 tensor cores (WMMA), fp32 accumulate"
                                      : "TF32 tensor cores (WMMA), fp32 accumulate";
  // Whose kernels run the MLPs' bias, ReLU and their gradients (serving
  // models keep cuBLASLt's forward epilogues: `epilogues` is training's).
  const std::string& mlp_epilogues = setup.epilogues;
  step.hyperparameters["perflab_dlrm_epilogues"] =
      !c.fused ? "separate bias, ReLU, dReLU and bias-gradient kernels (unfused: epilogues applies "
                 "with --fused on)"
      : !c.training ? "serving: cuBLASLt's RELU_AUX_BIAS/BIAS forward epilogues (epilogues applies "
                      "to training)"
      : mlp_epilogues == "own"
          ? "own: one bias+ReLU pass after each forward GEMM, one dReLU+bias-gradient "
            "launch before each layer's backward GEMMs"
      : mlp_epilogues == "own_backward" ? "own_backward: cuBLASLt's RELU_BIAS/BIAS epilogue "
                                          "forward, one dReLU+bias-gradient launch before "
                                          "each layer's backward GEMMs"
                                        : "cublaslt: RELU_AUX_BIAS/BIAS forward, DRELU_BGRAD and "
                                          "BGRADB backward (cuBLASLt's epilogues)";
  // Which independent work left the step's stream (side_streams), and
  // which stream's kernels get SMs first.
  const std::string head = c.split_head ? "; the fused head's sums (its dW and db, the layer below's db, the "
                                          "loss) on the first weight-gradient stream too, its dx on the step's"
                                        : "";
  const std::string urgent = head + "; the step's stream (the forward and the data-gradient chain)" +
                             (c.nccl && setup.sharding.overlap ? " and the exchange's" : "") +
                             " at the device's most urgent priority, the weight gradients' and the sort's at the least";
  step.hyperparameters["perflab_dlrm_side_streams"] =
      !c.training || !setup.side_streams ? std::string(

      !c.training ? "serving: one stream (side_streams applies to training)"
                  : "off: the whole step in order on one stream")
      : std::string(
            c.nccl ? "on: each MLP layer's weight-gradient GEMM on a weight-gradient stream (how many: "
                     "perflab_dlrm_wgrad_streams) beside the data-gradient chain, the embedding update's sort "
                     "on its own stream from the "
                     "interaction to the update (the dense SGD after the gradient all-reduce)"
            : c.sync_free
                ? "on: each MLP layer's weight-gradient GEMM and then its SGD on a weight-gradient stream "
                  "(how many: perflab_dlrm_wgrad_streams) beside "
                  "the data-gradient chain (the fused head's SGD in the embedding update's launch), the "
                  "embedding update's sort on its own stream from the interaction, and the update there from "
                  "the interaction's backward, beside the bottom MLP's"
                : "on: each MLP layer's weight-gradient GEMM and then its SGD on a weight-gradient stream "
                  "(how many: perflab_dlrm_wgrad_streams) beside "
                  "the data-gradient chain (the fused head's SGD in the embedding update's launch), the "
                  "embedding update's sort on its own stream from the interaction to the update (which, "
                  "synchronising, stays on the step's stream)") +
            urgent;
  // How many streams the weight gradients take turns on (wgrad_streams).
  step.hyperparameters["perflab_dlrm_wgrad_streams"] =
      !c.training ? "serving: no backward (wgrad_streams applies to training)"
      : !setup.side_streams ? "none: side_streams off, the weight gradients on the step's stream"
      : setup.wgrad_streams == 2
          ? "2: the MLP layers' weight gradients take turns on two streams (in the backward's order), so "
            "a layer's starts as its dReLU pass ends instead of behind the layer above's"
          : "1: every MLP layer's weight gradient on one stream, each after the layer above's";
  // Which weights the data-gradient GEMMs read (dgrad_weights).
  step.hyperparameters["perflab_dlrm_dgrad_weights"] =
      !c.training ? "serving: no backward (dgrad_weights applies to training)"
      : setup.dgrad_weights_transposed
          ? std::string("transposed: a copy of each layer's weights transposed, written once a step ") +
                (setup.side_streams ? "on the weight gradients' stream beside the forward" : "at the step's start") +
                " (one launch per 16 layers); the data-gradient GEMMs read it (\"TN\": both operands K-major)"
          : "stored: the data-gradient GEMMs read the weights as the forward does (\"NN\")";
  // What the weight-gradient GEMMs read (wgrad_dy).
  step.hyperparameters["perflab_dlrm_wgrad_dy"] =
      !c.training ? "serving: no backward (wgrad_dy applies to training)"
      : !setup.wgrad_dy_transposed
          ? "stored: the weight-gradient GEMMs read dz as the data gradient does (both operands batch-major)"
      : c.wgrad_dy_layers == 0
          ? fmt::format("transposed, in effect nowhere: no layer of this model has an input at least {} wide "
                        "(and a weight gradient without cuBLASLt's BGRADB)", kWgradTransposedMinInput)
          : fmt::format("transposed: in the {} layer{} whose input is at least {} wide, dz transposed by one launch "
                        "just before the weight-gradient GEMM, which reads it (one operand K-major)",
                        c.wgrad_dy_layers, c.wgrad_dy_layers == 1 ? "" : "s", kWgradTransposedMinInput);
  // How the step's own kernels are launched (dependent_launch); whether the
  // GPU has it is the run's fact (dependent_launch in the run's facts).
  step.hyperparameters["perflab_dlrm_dependent_launch"] =
      !c.training ? "serving: off (dependent_launch applies to the training step)"
      : setup.dependent_launch
          ? "on: the step's own kernels (not cuBLASLt's or CUB's) launched with programmatic dependent launch, "
            "each waiting at its start for the kernel before it; in effect where the GPU has compute "
            "capability 9.0 or later (the run's facts say)"
          : "off: every kernel launched after the one before it ends";
  // What --fused changes about the lookups.
  step.hyperparameters["perflab_dlrm_lookup"] =
      !c.training ? "the serving engine's rows (placement), handed to the interaction"
      : c.lookup_fused
          ? "inside the interaction's kernels (fused, no communicator): no gather launch, no "
            "[batch, tables, dim] tensor"
          : "a gather of every table's rows (one launch) into [batch, tables, dim]";
  step.hyperparameters["perflab_dlrm_precision"] =
      bf16 ? std::string("bf16 storage (Linear layers, interaction, looked-up and exchanged embeddings and "
                         "their gradients, logits and their gradients, the dense gradient and its all-reduce), "
                         "fp32 arithmetic (fp32 accumulate); fp32 master weights, tables and SGD") +
                 (c.training ? "; the dense input packed in bf16 at setup" : "")
           : "TF32 GEMMs (fp32 storage and accumulate); everything else fp32";
}

}  // namespace perflab::dlrm
