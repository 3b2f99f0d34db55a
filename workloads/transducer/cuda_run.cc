// The transducer on a CUDA device: kernels/cuda's RNN-T loss (unfused or
// fused, as --fused says) or joint, on padded or packed rows. The large
// inputs (logits; f, g and dh) are drawn on the device, in their dtype, by
// the counter-based generator the host uses (kernels/cuda/counter_fill.h):
// no host copy, no conversion, no upload. Every length set has its own
// device copy of lengths, labels and packed offsets, so an iteration only
// picks pointers.
//
// --sync-free on: nothing in an iteration synchronises; the packed row count
// of each set is known on the host from the data (as a data loader knows its
// batch's lengths). Off, the naive way: the lengths are read back from the
// device (one counted host synchronisation), the packed offsets computed on
// the host and copied up before the launch.
//
// The iteration is a DeviceStep (harness/device_step.h) with one variant per
// length set: with --cuda-graphs (needs --sync-free) the harness captures
// each set's step once after the eager iterations and replays it.
//
// Correctness gate: the first sequences' inputs against the host generator's
// values (within one ulp of dtype), then their costs and gradient (loss) or
// h, df and dg (joint) against the CPU reference on the device's inputs.
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstring>

#include <fmt/format.h>

#include "harness/device_step.h"
#include "base/error.h"
#include "kernels/cuda/check.h"
#include "kernels/cuda/counter_fill.h"
#include "kernels/cuda/device_buffer.h"
#include "kernels/cuda/host_sync.h"
#include "kernels/cuda/raii.h"
#include "kernels/cuda/rnnt_loss.h"
#include "kernels/cuda/transducer_joint.h"
#include "workloads/transducer/transducer_benchmark.h"

namespace perflab::transducer {
namespace {

namespace cpu = kernels::cpu;
namespace kc = kernels::cuda;

kc::RnntDType dtype_of(const std::string& name) {
  if (name == "bf16") return kc::RnntDType::kBFloat16;
  if (name == "fp16") return kc::RnntDType::kFloat16;
  return kc::RnntDType::kFloat32;
}

/// Host values stored as `dtype` (raw bytes), and back to float.
std::vector<unsigned char> encode(const std::vector<float>& v, kc::RnntDType dtype) {
  std::vector<unsigned char> out(v.size() * kc::rnnt_dtype_bytes(dtype));
  for (size_t i = 0; i < v.size(); ++i) {
    if (dtype == kc::RnntDType::kFloat32) {
      std::memcpy(out.data() + 4 * i, &v[i], 4);
    } else if (dtype == kc::RnntDType::kBFloat16) {
      __nv_bfloat16 h = __float2bfloat16(v[i]);
      std::memcpy(out.data() + 2 * i, &h, 2);
    } else {
      __half h = __float2half(v[i]);
      std::memcpy(out.data() + 2 * i, &h, 2);
    }
  }
  return out;
}

float decode_one(const unsigned char* p, kc::RnntDType dtype);

/// The first `count` of `v` as the device holds them in `dtype` (each
/// rounded to nearest even and widened back).
std::vector<float> rounded(const std::vector<float>& v, size_t count, kc::RnntDType dtype) {
  std::vector<float> head(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(std::min(count, v.size())));
  if (dtype == kc::RnntDType::kFloat32) return head;
  const std::vector<unsigned char> bytes = encode(head, dtype);
  const size_t e = kc::rnnt_dtype_bytes(dtype);
  for (size_t i = 0; i < head.size(); ++i) head[i] = decode_one(bytes.data() + i * e, dtype);
  return head;
}

float decode_one(const unsigned char* p, kc::RnntDType dtype) {
  if (dtype == kc::RnntDType::kFloat32) {
    float f;
    std::memcpy(&f, p, 4);
    return f;
  }
  if (dtype == kc::RnntDType::kBFloat16) {
    __nv_bfloat16 h;
    std::memcpy(&h, p, 2);
    return __bfloat162float(h);
  }
  __half h;
  std::memcpy(&h, p, 2);
  return __half2float(h);
}

/// Device copies of one length set.
struct DeviceSet {
  kc::DeviceBuffer<int32_t> frames, label_lengths, labels;
  kc::DeviceBuffer<int64_t> offsets;
};

class CudaRun final : public TimedStep, public DeviceStep {
 public:
  CudaRun(const Problem& problem, const ProblemData& data, const ToggleSet& toggles)
      : pr_(problem), data_(data), dtype_(dtype_of(problem.dtype)),
        fused_(toggles[Toggle::kFused].in_effect),
        sync_free_(toggles[Toggle::kSyncFree].in_effect),
        host_lengths_(static_cast<size_t>(2 * pr_.batch)),
        host_offsets_(static_cast<size_t>(pr_.batch + 1)) {
    for (const LengthSet& s : data_.sets) {
      DeviceSet d;
      d.frames = kc::DeviceBuffer<int32_t>(s.frames);
      d.label_lengths = kc::DeviceBuffer<int32_t>(s.label_lengths);
      d.labels = s.labels.empty() ? kc::DeviceBuffer<int32_t>(1) : kc::DeviceBuffer<int32_t>(s.labels);
      d.offsets = kc::DeviceBuffer<int64_t>(s.offsets);
      sets_.push_back(std::move(d));
    }
    // The synchronising variant's scratch: offsets computed on the host each
    // iteration (host_lengths_, host_offsets_: pinned), uploaded here.
    naive_offsets_ = kc::DeviceBuffer<int64_t>(static_cast<size_t>(pr_.batch + 1));

    // The rows the layout uses: padded, or the most a length set packs.
    const size_t rows = static_cast<size_t>(stored_rows(pr_, data_.sets));
    const size_t width = static_cast<size_t>(pr_.row_width());
    const size_t frames = static_cast<size_t>(pr_.batch * pr_.max_time) * width;
    const size_t steps = static_cast<size_t>(pr_.batch * (pr_.max_labels + 1)) * width;
    if (pr_.op == Op::kLoss) {
      logits_ = draw(Tensor::kLogits, rows * width);
      grad_ = kc::DeviceBuffer<unsigned char>(logits_.bytes());
      grad_.zero();
      costs_ = kc::DeviceBuffer<float>(static_cast<size_t>(pr_.batch));
      loss_ = kc::DeviceBuffer<float>(1);
      size_t ws = 0;
      for (size_t i = 0; i < sets_.size(); ++i) ws = std::max(ws, kc::RnntLoss::workspace_bytes(loss_args(i, sets_[i].offsets.data()), variant()));
      workspace_ = kc::DeviceBuffer<unsigned char>(std::max<size_t>(ws, 1));
      for (size_t i = 0; i < sets_.size(); ++i) {
        kc::Status st = kc::RnntLoss::can_implement(loss_args(i, sets_[i].offsets.data()), variant());
        if (!st) throw UsageError("transducer: the cuda loss cannot run this problem: " + st.reason());
      }
    } else {
      // Activations in dtype; df, dg fp32.
      f_ = draw(Tensor::kF, frames);
      g_ = draw(Tensor::kG, steps);
      dh_ = draw(Tensor::kDh, rows * width);
      h_ = kc::DeviceBuffer<unsigned char>(rows * width * kc::rnnt_dtype_bytes(dtype_));
      df_ = kc::DeviceBuffer<float>(frames);
      dg_ = kc::DeviceBuffer<float>(steps);
      size_t ws = 0;
      for (size_t i = 0; i < sets_.size(); ++i) {
        for (kc::JointPass pass : {kc::JointPass::kForward, kc::JointPass::kBackward}) {
          auto a = joint_args(i, sets_[i].offsets.data());
          kc::Status st = kc::TransducerJoint::can_implement(a, joint_variant(), pass);
          if (!st) throw UsageError("transducer: the cuda joint cannot run this problem: " + st.reason());
          ws = std::max(ws, kc::TransducerJoint::workspace_bytes(a, joint_variant(), pass));
        }
      }
      workspace_ = kc::DeviceBuffer<unsigned char>(std::max<size_t>(ws, 1));
    }
    PERFLAB_CUDA_CHECK(cudaDeviceSynchronize());  // sync outside the iteration: setup
  }

  ~CudaRun() override {
    cudaStreamSynchronize(stream_.get());  // sync outside the iteration: destructor
  }

  DeviceStep* device_step() override { return this; }
  void* stream() override { return stream_.get(); }
  int variants() const override { return static_cast<int>(sets_.size()); }
  int expected_host_syncs() const override { return sync_free_ ? 0 : 1; }

  /// The iteration's length set; the synchronising variant reads its
  /// lengths back and uploads host-computed offsets here.
  int begin(int64_t iteration) override {
    last_set_ = static_cast<size_t>(iteration % static_cast<int64_t>(sets_.size()));
    if (!sync_free_) offsets_the_naive_way(last_set_);
    return static_cast<int>(last_set_);
  }

  /// Enqueues one iteration on length set `set`.
  void enqueue(int variant) override {
    const auto set = static_cast<size_t>(variant);
    const int64_t* offsets = sync_free_ ? sets_[set].offsets.data() : naive_offsets_.data();
    if (pr_.op == Op::kLoss) {
      kc::Status st = kc::RnntLoss().run(loss_args(set, offsets), this->variant(), workspace_.data(), stream_.get());
      if (!st) throw Error("transducer: cuda loss: " + st.reason());
    } else {
      auto a = joint_args(set, offsets);
      for (kc::JointPass pass : {kc::JointPass::kForward, kc::JointPass::kBackward}) {
        kc::Status st = kc::TransducerJoint().run(a, joint_variant(), pass, workspace_.data(), stream_.get());
        if (!st) throw Error("transducer: cuda joint: " + st.reason());
      }
    }
  }

  /// The loss's kernels for the variant's length set, or the joint's two passes.
  LaunchPlan launch_plan(int variant) override {
    const auto set = static_cast<size_t>(variant);
    const int64_t* offsets = sets_[set].offsets.data();
    LaunchPlan plan;
    if (pr_.op == Op::kLoss) {
      kernels::append_launches(plan, kc::RnntLoss::launches(loss_args(set, offsets), this->variant()), "loss");
      return plan;
    }
    const auto a = joint_args(set, offsets);
    kernels::append_launches(plan, kc::TransducerJoint::launches(a, joint_variant(), kc::JointPass::kForward),
                             "forward");
    kernels::append_launches(plan, kc::TransducerJoint::launches(a, joint_variant(), kc::JointPass::kBackward),
                             "backward");
    return plan;
  }

  double take_loss() override {
    if (pr_.op != Op::kLoss) {
      // The joint has no loss; report df[0] so a NaN still shows.
      float v = 0;
      kc::counted_copy_to_host(&v, df_.data(), sizeof(float), stream_.get());
      return v;
    }
    // The loss of the latest iteration (lengths differ between iterations,
    // so a mean would mix problems; the runner only needs a finite value).
    float loss = 0;
    kc::counted_copy_to_host(&loss, loss_.data(), sizeof(float), stream_.get());
    return loss;
  }

  CorrectnessReport check_correctness() override {
    PERFLAB_CUDA_CHECK(cudaStreamSynchronize(stream_.get()));  // sync outside the iteration: the gate reads results
    return pr_.op == Op::kLoss ? check_loss() : check_joint();
  }

 private:
  /// `count` values of `tensor` in dtype, drawn on the device (legacy
  /// stream; the constructor waits for the device before returning).
  kc::DeviceBuffer<unsigned char> draw(Tensor tensor, size_t count) const {
    kc::DeviceBuffer<unsigned char> out(std::max<size_t>(count, 1) * kc::rnnt_dtype_bytes(dtype_));
    const TensorDraw how = tensor_draw(tensor);
    kc::CounterFillArguments a;
    a.count = static_cast<int64_t>(std::max<size_t>(count, 1));
    a.seed = pr_.data_seed;
    a.stream = how.stream;
    a.distribution = how.distribution;
    a.dtype = dtype_;
    a.out = out.data();
    const kc::Status st = kc::CounterFill::can_implement(a);
    if (!st) throw Error("transducer: cannot draw the inputs on the device: " + st.reason());
    kc::CounterFill::run(a, nullptr);
    return out;
  }

  kc::RnntLoss::Variant variant() const { return fused_ ? kc::RnntLoss::Variant::kFused : kc::RnntLoss::Variant::kUnfused; }
  kc::TransducerJoint::Variant joint_variant() const {
    return fused_ ? kc::TransducerJoint::Variant::kFused : kc::TransducerJoint::Variant::kUnfused;
  }
  kc::TransducerLayout layout() const {
    return pr_.layout == Layout::kPacked ? kc::TransducerLayout::kPacked : kc::TransducerLayout::kPadded;
  }

  kc::RnntLossArguments loss_args(size_t set, const int64_t* offsets) {
    kc::RnntLossArguments a;
    a.shape = pr_.loss_shape();
    a.options = pr_.options;
    a.layout = layout();
    a.dtype = dtype_;
    a.logits = logits_.data();
    a.labels = sets_[set].labels.data();
    a.logit_lengths = sets_[set].frames.data();
    a.label_lengths = sets_[set].label_lengths.data();
    a.packed_offsets = offsets;
    a.packed_rows = data_.sets[set].packed_rows;
    a.costs = costs_.data();
    a.grad = grad_.data();
    a.loss = loss_.data();
    return a;
  }

  kc::TransducerJointArguments joint_args(size_t set, const int64_t* offsets) {
    kc::TransducerJointArguments a;
    a.shape = pr_.joint_shape();
    a.activation = cpu::JointActivation::kRelu;
    a.layout = layout();
    a.frames = sets_[set].frames.data();
    a.label_lengths = sets_[set].label_lengths.data();
    a.packed_offsets = offsets;
    a.packed_rows = data_.sets[set].packed_rows;
    a.dtype = dtype_;
    a.f = f_.data();
    a.g = g_.data();
    a.h = h_.data();
    a.dh = dh_.data();
    a.df = df_.data();
    a.dg = dg_.data();
    return a;
  }

  /// The synchronising variant: lengths back to the host (one counted
  /// sync), offsets computed there and copied up on the stream.
  void offsets_the_naive_way(size_t set) {
    const auto n = static_cast<size_t>(pr_.batch);
    int32_t* host_lengths = host_lengths_.data();
    int64_t* host_offsets = host_offsets_.data();
    PERFLAB_CUDA_CHECK(cudaMemcpyAsync(host_lengths, sets_[set].frames.data(), n * sizeof(int32_t),
                                       cudaMemcpyDeviceToHost, stream_.get()));
    kc::counted_copy_to_host(host_lengths + n, sets_[set].label_lengths.data(), n * sizeof(int32_t), stream_.get());
    int64_t rows = cpu::rnnt_packed_offsets(pr_.batch, host_lengths, host_lengths + n, host_offsets);
    if (rows != data_.sets[set].packed_rows) throw Error("internal: packed rows read back differ from the data's");
    PERFLAB_CUDA_CHECK(cudaMemcpyAsync(naive_offsets_.data(), host_offsets, (n + 1) * sizeof(int64_t),
                                       cudaMemcpyHostToDevice, stream_.get()));
  }

  /// Sequences compared with the CPU reference.
  int64_t gate_batch() const { return std::min<int64_t>(pr_.batch, 2); }

  /// Rows of the first k sequences in the current layout (a prefix in both).
  int64_t prefix_rows(int64_t k) const {
    const LengthSet& s = data_.sets[last_set_];
    return pr_.layout == Layout::kPacked ? s.offsets[k] : k * pr_.max_time * (pr_.max_labels + 1);
  }

  CorrectnessReport check_loss();
  CorrectnessReport check_joint();

  const Problem& pr_;
  const ProblemData& data_;
  kc::RnntDType dtype_;
  bool fused_, sync_free_;
  kc::Stream stream_;
  std::vector<DeviceSet> sets_;
  kc::PinnedBuffer<int32_t> host_lengths_;
  kc::PinnedBuffer<int64_t> host_offsets_;
  kc::DeviceBuffer<int64_t> naive_offsets_;
  kc::DeviceBuffer<unsigned char> logits_, grad_, workspace_;
  kc::DeviceBuffer<float> costs_, loss_;
  kc::DeviceBuffer<unsigned char> f_, g_, dh_, h_;  // joint activations, in dtype
  kc::DeviceBuffer<float> df_, dg_;
  size_t last_set_ = 0;
};

/// Downloads `count` elements of `dtype` from `device` as floats.
std::vector<float> download(const void* device, size_t count, kc::RnntDType dtype) {
  const size_t bytes = kc::rnnt_dtype_bytes(dtype);
  std::vector<unsigned char> raw(count * bytes);
  if (count > 0) PERFLAB_CUDA_CHECK(cudaMemcpy(raw.data(), device, raw.size(), cudaMemcpyDeviceToHost));  // sync outside the iteration: the gate reads results back
  std::vector<float> out(count);
  for (size_t i = 0; i < count; ++i) out[i] = decode_one(raw.data() + i * bytes, dtype);
  return out;
}

/// One ulp of `dtype` at magnitude |x|: the spacing of its binade, or of
/// its subnormals below the normal range.
double ulp_of(double x, kc::RnntDType dtype) {
  const int bits = dtype == kc::RnntDType::kFloat32 ? 23 : dtype == kc::RnntDType::kBFloat16 ? 7 : 10;
  const int lowest = dtype == kc::RnntDType::kFloat16 ? -14 : -126;  // smallest normal binade
  int e = 0;
  std::frexp(std::fabs(x), &e);  // |x| = m 2^e, m in [0.5, 1): the binade is 2^(e-1)
  return std::ldexp(1.0, std::max(e - 1, lowest) - bits);
}

/// The device's draws of a tensor's first values against the host
/// generator's, rounded to dtype as the device rounds them. Bound: one ulp
/// of dtype (counter_fill.h: the device's double log/sqrt/sin/cos are within
/// 2 double ulps of the host's, so the float values differ by at most one
/// float ulp, which rounding to bf16/fp16 keeps within one of theirs).
struct InputCheck {
  size_t values = 0, differ = 0, beyond = 0;  ///< compared, not bit-equal, beyond one ulp
  size_t first_beyond = 0;
  float got = 0, want = 0;
  bool ok() const { return beyond == 0; }
};
InputCheck check_inputs(const Problem& pr, Tensor tensor, const std::vector<float>& device, kc::RnntDType dtype) {
  InputCheck c;
  c.values = device.size();
  const std::vector<float> host =
      rounded(tensor_values(pr, tensor, 0, static_cast<int64_t>(device.size())), device.size(), dtype);
  for (size_t i = 0; i < device.size(); ++i) {
    if (device[i] == host[i]) continue;
    ++c.differ;
    const double bound = ulp_of(std::max(std::fabs(device[i]), std::fabs(host[i])), dtype);
    if (!(std::fabs(static_cast<double>(device[i]) - host[i]) <= bound) && c.beyond++ == 0) {
      c.first_beyond = i;
      c.got = device[i];
      c.want = host[i];
    }
  }
  return c;
}

std::string describe(const InputCheck& c, const char* name) {
  if (!c.ok()) {
    return fmt::format("{}: {} of {} drawn values beyond one ulp of the host generator's (first at {}: {} vs {})",
                       name, c.beyond, c.values, c.first_beyond, c.got, c.want);
  }
  return fmt::format("{}: {} values equal the host generator's ({} by one ulp)", name, c.values, c.differ);
}

/// Largest |a - b| / (rel * |b| + abs) over the arrays, and where.
struct Worst {
  double ratio = 0;
  size_t index = 0;
  double got = 0, want = 0;
};
Worst compare(const std::vector<float>& got, const std::vector<double>& want, double rel, double abs) {
  Worst w;
  for (size_t i = 0; i < want.size(); ++i) {
    double r = std::fabs(got[i] - want[i]) / (rel * std::fabs(want[i]) + abs);
    if (!(r <= w.ratio)) w = {std::isnan(r) ? 1e30 : r, i, got[i], want[i]};
  }
  return w;
}

CorrectnessReport CudaRun::check_loss() {
  const LengthSet& s = data_.sets[last_set_];
  const int64_t k = gate_batch(), V = pr_.vocab, rows = prefix_rows(k);
  const auto n = static_cast<size_t>(rows * V);
  // The CPU sees exactly the device's inputs (bf16/fp16 values rounded).
  std::vector<float> logits = download(logits_.data(), n, dtype_);
  std::vector<float> dev_grad = download(grad_.data(), n, dtype_);
  std::vector<float> dev_costs = download(costs_.data(), static_cast<size_t>(k), kc::RnntDType::kFloat32);
  const InputCheck inputs = check_inputs(pr_, Tensor::kLogits, logits, dtype_);
  cpu::RnntShape shape{k, pr_.max_time, pr_.max_labels, V};
  cpu::RnntOptions options = pr_.options;
  options.reduction = cpu::RnntReduction::kSum;
  std::vector<double> costs(static_cast<size_t>(k));
  std::vector<float> grad(n);
  std::vector<double> workspace(static_cast<size_t>(cpu::rnnt_workspace_elements(rows)));
  if (pr_.layout == Layout::kPacked) {
    cpu::rnnt_loss_packed<float, double>(shape, options, logits.data(), s.labels.data(), s.frames.data(),
                                         s.label_lengths.data(), s.offsets.data(), costs.data(), grad.data(),
                                         workspace.data());
  } else {
    cpu::rnnt_loss<float, double>(shape, options, logits.data(), s.labels.data(), s.frames.data(),
                                  s.label_lengths.data(), costs.data(), grad.data(), workspace.data());
  }
  const double scale = pr_.options.reduction == cpu::RnntReduction::kMean ? 1.0 / static_cast<double>(pr_.batch) : 1.0;
  std::vector<double> want_grad(n);
  for (size_t i = 0; i < n; ++i) want_grad[i] = grad[i] * scale;
  // Tolerances. Both sides read the same (rounded) logits, so costs agree
  // to fp32 accumulation: 1e-4 relative. The device forms each gradient
  // element from exp(alpha + beta + cost + ...) in fp32, whose exponent is
  // off by about eps32 x (|alpha| + |beta| + cost) <= 3 eps32 x cost, and
  // every gradient term is at most 1 x scale: so an absolute allowance of
  // 8 eps32 x max cost x scale, plus the storage rounding of the gradient's
  // dtype (relative: 2^-8 bf16, 2^-11 fp16, 1e-4 fp32).
  double max_cost = 0;
  for (double c : costs) max_cost = std::max(max_cost, std::fabs(c));
  const double eps32 = 1.0 / (1 << 23);
  const double cost_rel = 1e-4;
  const double grad_rel = dtype_ == kc::RnntDType::kFloat32   ? 1e-4
                          : dtype_ == kc::RnntDType::kFloat16 ? 1.0 / 2048 + 1e-4
                                                              : 1.0 / 256 + 1e-4;
  const double grad_abs = (8 * eps32 * std::max(1.0, max_cost) + 1e-6) * scale;
  Worst wc = compare(dev_costs, costs, cost_rel, 1e-6);
  Worst wg = compare(dev_grad, want_grad, grad_rel, grad_abs);
  const bool ok = inputs.ok() && wc.ratio <= 1.0 && wg.ratio <= 1.0;
  return {ok, fmt::format("{} {} {} sequences vs the CPU reference: costs within {:g} relative (worst {:.2g} of it at "
                          "b={}: {} vs {}), gradient within {:g}|ref| + {:.2g} (worst {:.2g} of it at element {}: "
                          "{} vs {}); {}",
                          rnnt_variant_name(variant()), kc::rnnt_dtype_name(dtype_), k, cost_rel, wc.ratio,
                          wc.index, wc.got, wc.want, grad_rel, grad_abs, wg.ratio, wg.index, wg.got, wg.want,
                          describe(inputs, "logits"))};
}

CorrectnessReport CudaRun::check_joint() {
  const LengthSet& s = data_.sets[last_set_];
  const int64_t k = gate_batch(), H = pr_.hidden, rows = prefix_rows(k);
  const auto nh = static_cast<size_t>(rows * H);
  const auto nf = static_cast<size_t>(k * pr_.max_time * H);
  const auto ng = static_cast<size_t>(k * (pr_.max_labels + 1) * H);
  std::vector<float> dev_h = download(h_.data(), nh, dtype_);
  std::vector<float> dev_df = download(df_.data(), nf, kc::RnntDType::kFloat32);
  std::vector<float> dev_dg = download(dg_.data(), ng, kc::RnntDType::kFloat32);
  cpu::JointShape shape{k, pr_.max_time, pr_.max_labels, H};
  std::vector<float> h(nh), df(nf), dg(ng);
  const auto act = cpu::JointActivation::kRelu;
  // The CPU reads the device's inputs (drawn in dtype), computes h in fp32,
  // rounds it to dtype as the device stores it, and masks the backward with
  // that rounded h: the same arithmetic, so the same values.
  const std::vector<float> f = download(f_.data(), nf, dtype_), g = download(g_.data(), ng, dtype_);
  const std::vector<float> dh = download(dh_.data(), nh, dtype_);
  const InputCheck inputs[] = {check_inputs(pr_, Tensor::kF, f, dtype_), check_inputs(pr_, Tensor::kG, g, dtype_),
                               check_inputs(pr_, Tensor::kDh, dh, dtype_)};
  if (pr_.layout == Layout::kPacked) {
    cpu::transducer_joint_forward_packed(shape, act, f.data(), g.data(), s.frames.data(), s.label_lengths.data(),
                                         s.offsets.data(), h.data());
    h = rounded(h, nh, dtype_);
    cpu::transducer_joint_backward_packed(shape, act, h.data(), dh.data(), s.frames.data(), s.label_lengths.data(),
                                          s.offsets.data(), df.data(), dg.data());
  } else {
    cpu::transducer_joint_forward(shape, act, f.data(), g.data(), s.frames.data(), s.label_lengths.data(), h.data());
    h = rounded(h, nh, dtype_);
    cpu::transducer_joint_backward(shape, act, h.data(), dh.data(), s.frames.data(), s.label_lengths.data(),
                                   df.data(), dg.data());
  }
  auto widen = [](const std::vector<float>& v) { return std::vector<double>(v.begin(), v.end()); };
  Worst wh = compare(dev_h, widen(h), 1e-6, 1e-7);
  Worst wf = compare(dev_df, widen(df), 1e-5, 1e-6);
  Worst wg = compare(dev_dg, widen(dg), 1e-5, 1e-6);
  const bool ok = inputs[0].ok() && inputs[1].ok() && inputs[2].ok() && wh.ratio <= 1 && wf.ratio <= 1 &&
                  wg.ratio <= 1;
  return {ok, fmt::format("{} {} joint, {} sequences vs the CPU reference: h within 1e-6 relative (worst {:.2g} of it), "
                          "df and dg within 1e-5 relative (worst {:.2g} and {:.2g} of it; df at {}: {} vs {}); {}; {}; {}",
                          fused_ ? "fused" : "unfused", kc::rnnt_dtype_name(dtype_), k, wh.ratio, wf.ratio, wg.ratio,
                          wf.index, wf.got, wf.want, describe(inputs[0], "f"), describe(inputs[1], "g"),
                          describe(inputs[2], "dh"))};
}

}  // namespace

std::unique_ptr<TimedStep> make_cuda_run(const Problem& problem, const ProblemData& data,
                                         const ToggleSet& toggles) {
  return std::make_unique<CudaRun>(problem, data, toggles);
}

}  // namespace perflab::transducer
