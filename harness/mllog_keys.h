// The MLLOG keys perflab logs, spelled as MLPerf training spells them, and
// the rule that fixes each key's event type. Keys that MLPerf does not define
// (perflab_preset, train_loss) are ignored by the official checker unless a
// perflab rules file names them.
#pragma once

#include <string>
#include <string_view>

namespace perflab::mllog {

// Run structure: logged at fixed points of the training loop.
inline constexpr std::string_view kCacheClear = "cache_clear";
inline constexpr std::string_view kInitStart = "init_start";
inline constexpr std::string_view kInitStop = "init_stop";
inline constexpr std::string_view kRunStart = "run_start";
inline constexpr std::string_view kRunStop = "run_stop";
inline constexpr std::string_view kBlockStart = "block_start";
inline constexpr std::string_view kBlockStop = "block_stop";
inline constexpr std::string_view kEpochStart = "epoch_start";
inline constexpr std::string_view kEpochStop = "epoch_stop";
inline constexpr std::string_view kEvalStart = "eval_start";
inline constexpr std::string_view kEvalStop = "eval_stop";
inline constexpr std::string_view kEvalAccuracy = "eval_accuracy";
inline constexpr std::string_view kTrainLoss = "train_loss";
/// Throughput mode's correctness gate: value true/false, metadata "detail".
inline constexpr std::string_view kPerflabCorrectness = "perflab_correctness";
/// The run mode, logged once: "time-to-train" or "throughput".
inline constexpr std::string_view kPerflabMode = "perflab_mode";

// Submission: logged once, between init_start and init_stop.
inline constexpr std::string_view kSubmissionBenchmark = "submission_benchmark";
inline constexpr std::string_view kSubmissionOrg = "submission_org";
inline constexpr std::string_view kSubmissionDivision = "submission_division";
inline constexpr std::string_view kSubmissionPlatform = "submission_platform";
inline constexpr std::string_view kSubmissionStatus = "submission_status";
inline constexpr std::string_view kPerflabPreset = "perflab_preset";
inline constexpr std::string_view kConfigFilename = "config_filename";

// Dataset sizes and hyperparameters: logged once.
inline constexpr std::string_view kTrainSamples = "train_samples";
inline constexpr std::string_view kEvalSamples = "eval_samples";
inline constexpr std::string_view kGlobalBatchSize = "global_batch_size";
inline constexpr std::string_view kMicroBatchSize = "micro_batch_size";
inline constexpr std::string_view kGradientAccumulationSteps = "gradient_accumulation_steps";
inline constexpr std::string_view kSeed = "seed";
inline constexpr std::string_view kOptName = "opt_name";
inline constexpr std::string_view kOptBaseLearningRate = "opt_base_learning_rate";
inline constexpr std::string_view kOptLearningRateWarmupSteps = "opt_learning_rate_warmup_steps";
inline constexpr std::string_view kOptLearningRateDecayStartStep =
    "opt_learning_rate_decay_start_step";
inline constexpr std::string_view kOptLearningRateDecaySteps = "opt_learning_rate_decay_steps";
inline constexpr std::string_view kOptWeightDecay = "opt_weight_decay";

// Precision and parallelism disclosure: checked by the rules when present.
/// A precision as MLPerf's rules name it ("float" and "fp32" -> "fp32",
/// "half" -> "fp16", "bfloat16" -> "bf16", "double" -> "fp64", ...); empty
/// for a type those rules have no name for (int32, int64, uint32): the
/// disclosure key is then left out, as it is optional.
std::string mlperf_precision(std::string_view precision);

inline constexpr std::string_view kLowestNumericalPrecisionInLinear =
    "lowest_numerical_precision_in_linear";
inline constexpr std::string_view kLowestNumericalPrecisionInAttn =
    "lowest_numerical_precision_in_attn";
inline constexpr std::string_view kLowestNumericalPrecisionInComm =
    "lowest_numerical_precision_in_comm";
inline constexpr std::string_view kDataParallelism = "data_parallelism";
inline constexpr std::string_view kTensorParallelism = "tensor_parallelism";
inline constexpr std::string_view kPipelineParallelism = "pipeline_parallelism";
inline constexpr std::string_view kContextParallelism = "context_parallelism";
inline constexpr std::string_view kExpertParallelism = "expert_parallelism";

// Metadata entries the rules read.
inline constexpr std::string_view kEpochNum = "epoch_num";
inline constexpr std::string_view kFirstEpochNum = "first_epoch_num";
inline constexpr std::string_view kEpochCount = "epoch_count";
inline constexpr std::string_view kSamplesCount = "samples_count";
inline constexpr std::string_view kStepNum = "step_num";
inline constexpr std::string_view kStatus = "status";
inline constexpr std::string_view kReason = "reason";

// Values of run_stop's "status" metadata.
inline constexpr std::string_view kStatusSuccess = "success";
inline constexpr std::string_view kStatusAborted = "aborted";

// Event types.
inline constexpr std::string_view kIntervalStart = "INTERVAL_START";
inline constexpr std::string_view kIntervalEnd = "INTERVAL_END";
inline constexpr std::string_view kPointInTime = "POINT_IN_TIME";

/// The event type a key is logged with: `*_start` keys open an interval,
/// `*_stop` keys close one, every other key is a point in time.
constexpr std::string_view event_type_for(std::string_view key) {
  constexpr std::string_view kStart = "_start";
  constexpr std::string_view kStop = "_stop";
  if (key.size() >= kStart.size() && key.substr(key.size() - kStart.size()) == kStart) {
    return kIntervalStart;
  }
  if (key.size() >= kStop.size() && key.substr(key.size() - kStop.size()) == kStop) {
    return kIntervalEnd;
  }
  return kPointInTime;
}

}  // namespace perflab::mllog
