// The transducer workload's problem: what one iteration computes (the RNN-T
// loss with its gradient, or the joint forward and backward), its sizes and
// layout, and the seeded inputs prepared once per invocation.
//
// Lengths vary per iteration, as they do between real batches: the workload
// prepares `length_sets` sets of per-sequence lengths and labels and
// iteration i uses set i % length_sets. Sequence 0 of every set has the full
// lengths (T, U), the others are drawn uniformly from
// [min_length_fraction x max, max]. The logits (or f, g, dh for the joint)
// are one buffer of the worst-case size, drawn once per invocation (on the
// host for the cpu backend, on the device for cuda: TensorsOn); each set uses
// its valid region (padded) or its first Σ T_b (U_b + 1) rows (packed).
#pragma once

#include <cstdint>
#include <optional>
#include <memory>
#include <string>
#include <vector>

#include "base/counter_random.h"
#include "harness/params.h"
#include "harness/workload.h"
#include "kernels/cpu/rnnt_loss.h"
#include "kernels/cpu/transducer_joint.h"

namespace perflab::transducer {

enum class Op { kLoss, kJoint };
enum class Layout { kPadded, kPacked };

/// The workload's parameters, parsed and checked.
struct Problem {
  Op op = Op::kLoss;
  Layout layout = Layout::kPadded;
  int64_t batch = 0, max_time = 0, max_labels = 0, vocab = 0, hidden = 0;
  kernels::cpu::RnntOptions options;  ///< blank, reduction
  std::string dtype = "fp32";         ///< Logits (loss) or activations (joint): fp32 | bf16 | fp16.
  int length_sets = 4;
  double min_length_fraction = 0.6;
  uint64_t data_seed = 0;

  kernels::cpu::RnntShape loss_shape() const { return {batch, max_time, max_labels, vocab}; }
  kernels::cpu::JointShape joint_shape() const { return {batch, max_time, max_labels, hidden}; }
  /// Values per row: V for the loss, H for the joint.
  int64_t row_width() const { return op == Op::kLoss ? vocab : hidden; }
  /// Rows of the padded layout: B T (U+1).
  int64_t padded_rows() const { return batch * max_time * (max_labels + 1); }
  /// Bytes of one stored value of `dtype`.
  int value_bytes() const { return dtype == "fp32" ? 4 : 2; }
};

/// Reads the workload's parameters; throws UsageError for inconsistent ones.
Problem parse_problem(const ParamValues& params);

/// One iteration's lengths and labels.
struct LengthSet {
  std::vector<int32_t> frames;         ///< T_b, [B]
  std::vector<int32_t> label_lengths;  ///< U_b, [B]
  std::vector<int32_t> labels;         ///< [B, U]; never the blank
  std::vector<int64_t> offsets;        ///< [B+1] packed row offsets
  int64_t packed_rows = 0;             ///< offsets[B]
};

/// The seeded tensors of a problem: the loss's logits; the joint's dh, f and g.
enum class Tensor { kLogits, kDh, kF, kG };

/// How a tensor is drawn from the counter-based generator: value i is
/// counter_value(distribution, problem.data_seed, stream, i) rounded to float.
struct TensorDraw {
  CounterDistribution distribution = CounterDistribution::kNormal;
  uint64_t stream = 0;
};
/// logits ~ N(0, 1); dh, f and g ~ U(-1, 1); one stream each.
TensorDraw tensor_draw(Tensor tensor);

/// Values [first, first + count) of `tensor` as the host makes them (on
/// every core): what a device that draws its own inputs must hold.
std::vector<float> tensor_values(const Problem& problem, Tensor tensor, int64_t first, int64_t count);

/// Where the large tensors are made. kHost: in ProblemData (the cpu
/// backend). kDevice: not on the host at all, since the cuda backend draws
/// them on the device (kernels/cuda/counter_fill.h) with the same
/// generator; only lengths and labels are made here. At the MLPerf shape
/// the logits are ~2.3e9 values: minutes of host time and ~9 GB.
enum class TensorsOn { kHost, kDevice };

/// Inputs prepared once per invocation.
struct ProblemData {
  std::vector<LengthSet> sets;
  TensorsOn tensors = TensorsOn::kHost;
  /// kHost only (empty with kDevice). loss: logits [stored_rows, V]; joint:
  /// dh [stored_rows, H]: the padded layout's rows, or in the packed layout
  /// the most any length set packs.
  std::vector<float> values;
  std::vector<float> f;       ///< kHost, joint: [B, T, H]
  std::vector<float> g;       ///< kHost, joint: [B, U+1, H]
};

/// Seeded inputs for `problem`: lengths and labels from one mt19937_64, and,
/// kHost, the tensors from the counter-based generator (tensor_draw) on
/// every core: the same values whatever the thread count.
ProblemData make_problem_data(const Problem& problem, TensorsOn tensors = TensorsOn::kHost);

/// The rows of `values` a layout needs: padded_rows, or for the packed
/// layout the largest packed_rows of `sets` (about half at MLPerf's
/// lengths). Each value is a function of its index alone, so the packed
/// values are the padded ones' first rows.
int64_t stored_rows(const Problem& problem, const std::vector<LengthSet>& sets);

/// The inputs of `problem`, shared by the points of a sweep that need the
/// same ones: points differing only in toggles, layout or dtype (the inputs
/// depend on the op, the shapes, the length sets, the blank and data_seed;
/// a packed point takes the first rows of a padded point's values).
/// The last inputs made are kept until a point needs other ones, which
/// releases them first (one problem's memory at a time), so a sweep over
/// toggles makes them once. Points are prepared one at a time: not
/// thread-safe.
/// Data with host tensors also serves a point that asks for kDevice.
std::shared_ptr<const ProblemData> shared_problem_data(const Problem& problem,
                                                       TensorsOn tensors = TensorsOn::kHost);

/// Minimum bytes one iteration moves, averaged over the length sets: the
/// loss reads the valid logits once and writes the gradient once (every
/// padded row is written: padding is zeroed); the joint reads f and g and
/// writes h (every padded row, or the packed rows), then reads dh and h
/// (the ReLU mask) over the valid rows and writes df and dg. Labels and
/// lengths are not counted.
double bytes_floor_per_iteration(const Problem& problem, const ProblemData& data);

/// The work of one iteration: its bytes floor (the harness turns it into a
/// roofline floor with the device's bandwidth).
IterationWork iteration_work(const Problem& problem, const ProblemData& data);

}  // namespace perflab::transducer
