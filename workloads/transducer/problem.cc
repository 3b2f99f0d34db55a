#include "workloads/transducer/problem.h"

#include <algorithm>
#include <cmath>
#include <random>

#include <fmt/format.h>

#include "base/counter_random.h"
#include "base/error.h"

namespace perflab::transducer {

Problem parse_problem(const ParamValues& p) {
  Problem pr;
  pr.op = p.get_string("op") == "joint" ? Op::kJoint : Op::kLoss;
  pr.layout = p.get_string("layout") == "packed" ? Layout::kPacked : Layout::kPadded;
  pr.batch = p.get_int("batch");
  pr.max_time = p.get_int("max_time");
  pr.max_labels = p.get_int("max_labels");
  pr.vocab = p.get_int("vocab");
  pr.hidden = p.get_int("hidden");
  pr.options.blank = p.get_int("blank");
  std::string reduction = p.get_string("reduction");
  pr.options.reduction = reduction == "none"  ? kernels::cpu::RnntReduction::kNone
                         : reduction == "sum" ? kernels::cpu::RnntReduction::kSum
                                              : kernels::cpu::RnntReduction::kMean;
  pr.dtype = p.get_string("dtype");
  pr.length_sets = static_cast<int>(p.get_int("length_sets"));
  pr.min_length_fraction = p.get_float("min_length_fraction");
  pr.data_seed = static_cast<uint64_t>(p.get_int("data_seed"));
  if (pr.op == Op::kLoss && pr.options.blank >= pr.vocab) {
    throw UsageError(fmt::format("transducer: blank {} is outside the vocabulary [0, {})",
                                 pr.options.blank, pr.vocab));
  }
  if (pr.op == Op::kLoss && pr.max_labels > 0 && pr.vocab < 2) {
    throw UsageError("transducer: vocab must be at least 2 (blank and one label) when max_labels > 0");
  }
  return pr;
}

namespace {

/// N(0, 1) values, element i = counter_normal(seed, stream, i), in
/// parallel, a Box-Muller pair at a time (fill_range's values, drawn half as
/// often).
void fill_normal(std::vector<float>& out, uint64_t seed, uint64_t stream) {
  const auto n = static_cast<int64_t>(out.size());
  float* p = out.data();
#pragma omp parallel for schedule(static)
  for (int64_t k = 0; k < (n + 1) / 2; ++k) {
    const NormalPair pair = counter_normal_pair(seed, stream, static_cast<uint64_t>(k));
    p[2 * k] = static_cast<float>(pair.first);
    if (2 * k + 1 < n) p[2 * k + 1] = static_cast<float>(pair.second);
  }
}

/// Any range of a tensor, value by value (counter_value), in parallel.
void fill_range(float* out, int64_t first, int64_t count, uint64_t seed, TensorDraw draw) {
#pragma omp parallel for schedule(static)
  for (int64_t i = 0; i < count; ++i) {
    out[i] = static_cast<float>(counter_value(draw.distribution, seed, draw.stream, static_cast<uint64_t>(first + i)));
  }
}

int32_t draw_length(std::mt19937_64& gen, int64_t max, double fraction, int64_t lowest) {
  auto lo = std::max<int64_t>(lowest, static_cast<int64_t>(std::ceil(fraction * static_cast<double>(max))));
  lo = std::min(lo, max);
  std::uniform_int_distribution<int64_t> dist(lo, max);
  return static_cast<int32_t>(dist(gen));
}

}  // namespace

TensorDraw tensor_draw(Tensor tensor) {
  switch (tensor) {
    case Tensor::kLogits:
      return {CounterDistribution::kNormal, 1};
    case Tensor::kDh:
      return {CounterDistribution::kSymmetricUniform, 2};
    case Tensor::kF:
      return {CounterDistribution::kSymmetricUniform, 3};
    case Tensor::kG:
      return {CounterDistribution::kSymmetricUniform, 4};
  }
  throw Error("internal: unknown transducer tensor");
}

std::vector<float> tensor_values(const Problem& pr, Tensor tensor, int64_t first, int64_t count) {
  std::vector<float> out(static_cast<size_t>(std::max<int64_t>(count, 0)));
  fill_range(out.data(), first, static_cast<int64_t>(out.size()), pr.data_seed, tensor_draw(tensor));
  return out;
}

ProblemData make_problem_data(const Problem& pr, TensorsOn tensors) {
  ProblemData d;
  d.tensors = tensors;
  std::mt19937_64 gen(pr.data_seed);
  const int64_t blank = pr.op == Op::kLoss ? kernels::cpu::rnnt_blank(pr.loss_shape(), pr.options) : -1;
  for (int s = 0; s < pr.length_sets; ++s) {
    LengthSet set;
    for (int64_t b = 0; b < pr.batch; ++b) {
      bool full = b == 0;
      set.frames.push_back(full ? static_cast<int32_t>(pr.max_time)
                                : draw_length(gen, pr.max_time, pr.min_length_fraction, 1));
      set.label_lengths.push_back(full ? static_cast<int32_t>(pr.max_labels)
                                       : draw_length(gen, pr.max_labels, pr.min_length_fraction, 0));
    }
    set.labels.resize(static_cast<size_t>(pr.batch * pr.max_labels), 0);
    if (pr.op == Op::kLoss && pr.max_labels > 0) {
      // Labels over the non-blank symbols.
      std::uniform_int_distribution<int64_t> symbol(0, pr.vocab - 2);
      for (int32_t& y : set.labels) {
        int64_t v = symbol(gen);
        y = static_cast<int32_t>(v >= blank ? v + 1 : v);
      }
    }
    set.offsets.resize(static_cast<size_t>(pr.batch + 1));
    set.packed_rows = kernels::cpu::rnnt_packed_offsets(pr.batch, set.frames.data(),
                                                        set.label_lengths.data(), set.offsets.data());
    d.sets.push_back(std::move(set));
  }
  // The large tensors from the counter-based generator, on every core: at
  // the MLPerf shape the logits are ~2.3e9 values, which one thread drawing
  // from one mt19937 took minutes to make. Each value is a function of
  // (data_seed, tensor, index) alone, so the thread count cannot change them.
  if (tensors == TensorsOn::kDevice) return d;
  const auto rows = static_cast<size_t>(stored_rows(pr, d.sets));
  const auto width = static_cast<size_t>(pr.row_width());
  d.values.resize(rows * width);
  if (pr.op == Op::kLoss) {
    fill_normal(d.values, pr.data_seed, tensor_draw(Tensor::kLogits).stream);
  } else {
    auto fill = [&](std::vector<float>& v, Tensor t) {
      fill_range(v.data(), 0, static_cast<int64_t>(v.size()), pr.data_seed, tensor_draw(t));
    };
    fill(d.values, Tensor::kDh);
    d.f.resize(static_cast<size_t>(pr.batch * pr.max_time) * width);
    d.g.resize(static_cast<size_t>(pr.batch * (pr.max_labels + 1)) * width);
    fill(d.f, Tensor::kF);
    fill(d.g, Tensor::kG);
  }
  return d;
}

int64_t stored_rows(const Problem& pr, const std::vector<LengthSet>& sets) {
  if (pr.layout != Layout::kPacked) return pr.padded_rows();
  int64_t rows = 0;
  for (const LengthSet& s : sets) rows = std::max(rows, s.packed_rows);
  return rows;
}

std::shared_ptr<const ProblemData> shared_problem_data(const Problem& pr, TensorsOn tensors) {
  // What make_problem_data reads, but the layout: dtype only changes how a
  // run converts the values, and the layout only how many rows it needs.
  const int64_t blank = pr.op == Op::kLoss ? kernels::cpu::rnnt_blank(pr.loss_shape(), pr.options) : -1;
  const std::string key =
      fmt::format("{} {} {} {} {} {} {} {} {} {}", pr.op == Op::kLoss ? "loss" : "joint", pr.batch, pr.max_time,
                  pr.max_labels, pr.row_width(), blank, pr.length_sets, pr.min_length_fraction, pr.data_seed,
                  pr.op == Op::kLoss ? pr.vocab : pr.hidden);
  static std::string last_key;
  static std::shared_ptr<const ProblemData> last;
  // The kept values serve a point whose layout needs no more rows than
  // they hold (a packed point after a padded one): the same values, first rows.
  // Host tensors serve a point that draws its own on the device too.
  if (last && last_key == key &&
      (tensors == TensorsOn::kDevice ||
       (last->tensors == TensorsOn::kHost &&
        last->values.size() >= static_cast<size_t>(stored_rows(pr, last->sets) * pr.row_width())))) {
    return last;
  }
  last.reset();  // the previous problem's memory goes first (unless a live point still holds it)
  last = std::make_shared<const ProblemData>(make_problem_data(pr, tensors));
  last_key = key;
  return last;
}

double bytes_floor_per_iteration(const Problem& pr, const ProblemData& data) {
  const double width = static_cast<double>(pr.row_width());
  const double value = pr.value_bytes();
  double total = 0;
  for (const LengthSet& set : data.sets) {
    const auto valid = static_cast<double>(set.packed_rows);
    const double written = pr.layout == Layout::kPacked ? valid : static_cast<double>(pr.padded_rows());
    if (pr.op == Op::kLoss) {
      total += (valid + written) * width * value;
    } else {
      // Forward: f and g read, h written. Backward: dh and h (the ReLU
      // mask) read over the valid rows, df and dg written.
      double frames = 0, steps = 0;
      for (int64_t b = 0; b < pr.batch; ++b) {
        frames += set.frames[static_cast<size_t>(b)];
        steps += set.label_lengths[static_cast<size_t>(b)] + 1.0;
      }
      total += (2.0 * (frames + steps) + written + 2.0 * valid) * width * value;
    }
  }
  return total / static_cast<double>(data.sets.size());
}

IterationWork iteration_work(const Problem& pr, const ProblemData& data) {
  IterationWork w;
  w.bytes = bytes_floor_per_iteration(pr, data);  // memory-bound: no FLOPs peak applies
  return w;
}

}  // namespace perflab::transducer
