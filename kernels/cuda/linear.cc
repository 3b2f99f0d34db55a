// The CUDA linear layer: three cuBLASLt GEMMs (forward, dgrad, wgrad)
// planned once (linear_plan.h), plus the unfused bias/activation kernels of
// bias_act.h. This file maps the layer onto the GEMMs and sequences them.
//
// Row-major to cuBLASLt (column-major). A row-major M[r, c] with leading
// dimension c occupies exactly the bytes of the column-major matrix Mᵀ[c, r]
// with leading dimension c. So, with every layout below "rows, cols, ld=rows":
//
//   forward  y[B,out] = x[B,in]·Wᵀ      <=>  yᵀ[out,B] = W[out,in] · xᵀ[in,B]
//     A = W  : stored as col-major Wᵀ[in,out] (ld in), TRANSA=T -> op(A) = W
//     B = x  : stored as col-major xᵀ[in,B]  (ld in), TRANSB=N
//     D = y  : col-major yᵀ[out,B] (ld out);  m = out, n = B, k = in ("TN")
//     Bias: length m = out, broadcast over the n = B columns: b[out]. Right.
//     ReLU bitmask: one bit per element of D[out,B], ld = out rounded up to
//     128 bits, so element (batch i, feature o) is bit i*ld + o.
//
//   dgrad    dx[B,in] = dz[B,out]·W     <=>  dxᵀ[in,B] = Wᵀ[in,out] · dzᵀ[out,B]
//     A = W  : col-major Wᵀ[in,out] (ld in), TRANSA=N
//     B = dz : col-major dzᵀ[out,B] (ld out), TRANSB=N
//     D = dx : col-major dxᵀ[in,B] (ld in);  m = in, n = B, k = out ("NN")
//     DRELU_BGRAD: D := D ⊙ mask(aux of the layer below, whose forward D was
//     [in,B] with ld round_up(in,128): the same shape), and bias gradient[m]
//     = Σ over the n = B columns = the lower layer's db[in]. Right.
//
//   dgrad with dgrad_reads_w_t: the same product from Wᵀ's copy
//     A = w_t: Wᵀ[in,out] row-major, i.e. stored as col-major W[out,in]
//              (ld out), TRANSA=T -> op(A) = Wᵀ[in,out]
//     B, D as above;  m = in, n = B, k = out ("TN": A and B K-major)
//
//   wgrad    dW[out,in] = dzᵀ[out,B]·x[B,in]  <=>  dWᵀ[in,out] = xᵀ[in,B] · dz[B,out]
//     A = x  : col-major xᵀ[in,B] (ld in), TRANSA=N
//     B = dz : col-major dzᵀ[out,B] (ld out), TRANSB=T -> op(B) = dz[B,out]
//     D = dW : col-major dWᵀ[in,out] (ld in); m = in, n = out, k = B ("NT")
//     BGRADB: bias gradient[n] = Σ_k op(B)[k, j] = Σ_batch dz[., j] = db[out].
//
//   wgrad with wgrad_reads_dy_t: the same product from dzᵀ's copy
//     B = dy_t: dzᵀ[out,B] row-major, i.e. stored as col-major dz[B,out]
//              (ld B), TRANSB=N -> op(B) = dz[B,out], K-major
//     A, D as above; no BGRADB epilogue (can_implement refuses it here).
//
// C is D with beta = 0 everywhere.
#include "kernels/cuda/linear.h"

#include <fmt/format.h>

#include <cstdint>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "base/error.h"
#include "base/round_up.h"
#include "kernels/cuda/bias_act.h"
#include "kernels/cuda/check.h"
#include "kernels/cuda/device_buffer.h"
#include "kernels/cuda/linear_plan.h"
#include "kernels/cuda/raii.h"
#include "kernels/cuda/transpose.h"

namespace perflab::kernels::cuda {
namespace {

/// cuBLASLt wants a 256-byte aligned workspace; we keep our carve-outs so.
constexpr size_t kLinearWorkspaceAlignment = 256;
constexpr int64_t kMaxDim = std::numeric_limits<int32_t>::max();

DType dtype_of(Precision precision) {
  return precision == Precision::kTf32 ? DType::kF32 : DType::kBF16;
}

bool aligned(const void* p) {
  return reinterpret_cast<uintptr_t>(p) % kLinearPointerAlignment == 0;
}

void require(const void* pointer, const char* name) {
  if (pointer == nullptr) throw UsageError(fmt::format("Linear: {} is null", name));
  if (!aligned(pointer)) {
    throw UsageError(
        fmt::format("Linear: {} is not {}-byte aligned", name, kLinearPointerAlignment));
  }
}

bool same_problem(const LinearArguments& a, const LinearArguments& b) {
  return a.batch == b.batch && a.in_features == b.in_features && a.out_features == b.out_features &&
         a.precision == b.precision && a.activation == b.activation && a.fused == b.fused &&
         a.epilogues == b.epilogues &&
         a.dy_is_pre_activation == b.dy_is_pre_activation &&
         a.dx_applies_input_relu == b.dx_applies_input_relu && a.dy_relu_applied == b.dy_relu_applied &&
         a.dgrad_reads_w_t == b.dgrad_reads_w_t && a.wgrad_reads_dy_t == b.wgrad_reads_dy_t;
}

/// The data-gradient GEMM's A: W, or its transposed copy.
const void* dgrad_weights(const LinearArguments& a) { return a.dgrad_reads_w_t ? a.w_t : a.w; }

/// wgrad_reads_dy_t: dz [B, out] (dy, after any dReLU in place) into dy_t
/// [out, B], one launch on `stream`.
void transpose_dy(const LinearArguments& a, cudaStream_t stream) {
  TransposeBatch t;
  t.count = 1;
  t.element_bytes = a.precision == Precision::kBf16 ? 2 : 4;
  t.matrices[0] = {a.dy, a.dy_t, a.batch, a.out_features};
  TransposeMatrices::run(t, stream);
}

/// A fused layer whose bias, ReLU and gradients run in our kernels.
bool own_backward(const LinearArguments& a) { return a.fused && a.epilogues != Epilogues::kCublasLt; }
bool own_forward(const LinearArguments& a) { return a.fused && a.epilogues == Epilogues::kOwn; }
bool lt_epilogues(const LinearArguments& a) { return a.fused && a.epilogues == Epilogues::kCublasLt; }

}  // namespace

const char* epilogues_name(Epilogues epilogues) {
  switch (epilogues) {
    case Epilogues::kCublasLt:
      return "cublaslt";
    case Epilogues::kOwnBackward:
      return "own_backward";
    case Epilogues::kOwn:
      return "own";
  }
  return "unknown";
}

struct Linear::Plan {
  cublasLtHandle_t handle = nullptr;
  LinearArguments problem;  ///< Shape and modes; pointers cleared.
  Status status = Status::success();
  LtGemm forward, dgrad, wgrad;
  /// Our own backward's column-tile counters (relu_bias_grad), 0 between calls.
  DeviceBuffer<unsigned> grad_done;

  void check_call(const LinearArguments& args, const void* workspace) const {
    if (!status) throw UsageError("Linear: cannot run: " + status.reason());
    if (!same_problem(args, problem)) {
      throw UsageError("Linear: arguments' shape or modes differ from the planned ones");
    }
    if (workspace == nullptr || reinterpret_cast<uintptr_t>(workspace) % kLinearWorkspaceAlignment != 0) {
      throw UsageError("Linear: workspace is null or not 256-byte aligned");
    }
  }
};

Status Linear::can_implement(const LinearArguments& args) {
  for (auto [value, name] :
       {std::pair{args.batch, "batch"}, std::pair{args.in_features, "in_features"},
        std::pair{args.out_features, "out_features"}}) {
    if (value < 1 || value > kMaxDim) {
      return Status::invalid(fmt::format("{} must be in [1, 2^31-1], got {}", name, value));
    }
  }
  if (args.precision != Precision::kTf32 && args.precision != Precision::kBf16) {
    return Status::invalid("unknown precision");
  }
  if (args.activation != Activation::kNone && args.activation != Activation::kRelu) {
    return Status::invalid("unknown activation");
  }
  if (args.epilogues != Epilogues::kCublasLt && args.epilogues != Epilogues::kOwnBackward &&
      args.epilogues != Epilogues::kOwn) {
    return Status::invalid("unknown epilogues");
  }
  if (!args.fused && (args.dy_is_pre_activation || args.dx_applies_input_relu)) {
    return Status::invalid(
        "dy_is_pre_activation and dx_applies_input_relu need the fused mode (cuBLASLt's "
        "DRELU_BGRAD epilogue); the unfused mode applies each layer's dReLU itself");
  }
  if (!lt_epilogues(args) && args.dx_applies_input_relu) {
    return Status::invalid(
        "dx_applies_input_relu needs cuBLASLt's epilogues (DRELU_BGRAD reads the layer below's ReLU "
        "bitmask); with our own epilogues each layer applies its dReLU itself");
  }
  if (args.dy_is_pre_activation && args.activation != Activation::kRelu) {
    return Status::invalid(
        "dy_is_pre_activation applies to ReLU layers only (without an activation dy already is "
        "the pre-activation gradient, and db is computed here)");
  }
  if (args.dy_relu_applied && (args.activation != Activation::kRelu || args.dy_is_pre_activation)) {
    return Status::invalid(
        "dy_relu_applied applies to ReLU layers whose db is computed here (not with dy_is_pre_activation)");
  }
  if (args.wgrad_reads_dy_t && lt_epilogues(args) && !args.dy_is_pre_activation) {
    return Status::invalid(
        "wgrad_reads_dy_t takes a weight gradient without cuBLASLt's BGRADB epilogue (fused cuBLASLt epilogues "
        "sum db there from dz as stored): use our own epilogues, the unfused mode, or dy_is_pre_activation");
  }
  for (auto [pointer, name] : {std::pair<const void*, const char*>{args.x, "x"},
                               {args.w, "w"},
                               {args.w_t, "w_t"},
                               {args.dy_t, "dy_t"},
                               {args.b, "b"},
                               {args.y, "y"},
                               {args.aux, "aux"},
                               {args.dy, "dy"},
                               {args.dx, "dx"},
                               {args.dw, "dw"},
                               {args.db, "db"},
                               {args.input_aux, "input_aux"},
                               {args.input_db, "input_db"}}) {
    if (!aligned(pointer)) {
      return Status::invalid(
          fmt::format("{} is not {}-byte aligned (cuBLASLt algorithms are "
                      "chosen for that alignment)",
                      name, kLinearPointerAlignment));
    }
  }
  return Status::success();
}

size_t Linear::workspace_bytes(const LinearArguments& args) {
  size_t bytes = kLinearCublasWorkspaceBytes;
  if (!args.fused) {
    bytes +=
        round_up(bias_grad_workspace_bytes(args.batch, args.out_features), kLinearWorkspaceAlignment);
  } else if (own_backward(args)) {
    bytes += round_up(relu_bias_grad_workspace_bytes(args.batch, args.out_features), kLinearWorkspaceAlignment);
  }
  return bytes;
}

int64_t Linear::aux_ld_bits(int64_t out_features) { return (out_features + 127) / 128 * 128; }

namespace {

double element_bytes(Precision p) { return p == Precision::kBf16 ? 2.0 : 4.0; }

/// cuBLASLt's kernels, as their names go: xmma/cutlass gemm kernels, gemv
/// for a one-column product, nvjet (Hopper and later), and the split-K
/// reduction a matmul may add.
constexpr const char* kGemm = "gemm|gemv|nvjet|splitK";
const char* precision_name(Precision p) { return p == Precision::kBf16 ? "bf16" : "tf32"; }

}  // namespace

LaunchList Linear::forward_launches(const LinearArguments& a) {
  const double e = element_bytes(a.precision);
  const double b = static_cast<double>(a.batch), in = static_cast<double>(a.in_features),
               out = static_cast<double>(a.out_features);
  const double flops = linear_flops(a.batch, a.in_features, a.out_features);
  const bool relu = a.activation == Activation::kRelu;
  if (own_forward(a)) {
    return {{kGemm, "forward GEMM", "", {(b * in + in * out + b * out) * e, flops, precision_name(a.precision)}},
            {"bias_act_kernel", relu ? "bias + ReLU (own epilogue)" : "bias (own epilogue)", "",
             {(2 * b * out + out) * e, b * out, "fp32"}}};
  }
  if (a.fused) {
    const double bytes = linear_forward_bytes(a.batch, a.in_features, a.out_features, static_cast<int64_t>(e),
                                              static_cast<double>(aux_bytes(a)));
    return {{kGemm, relu ? "forward GEMM + bias + ReLU epilogue" : "forward GEMM + bias epilogue", "",
             {bytes, flops, precision_name(a.precision)}}};
  }
  LaunchList out_list = {{kGemm, "forward GEMM", "", {(b * in + in * out + b * out) * e, flops, precision_name(a.precision)}},
                         {"add_bias_kernel", "bias", "", {(2 * b * out + out) * e, b * out, "fp32"}}};
  if (relu) out_list.push_back({"relu_forward_kernel", "ReLU", "", {2 * b * out * e, 0, ""}});
  return out_list;
}

LaunchList Linear::backward_launches(const LinearArguments& a, bool dgrad) {
  const double e = element_bytes(a.precision);
  const double b = static_cast<double>(a.batch), in = static_cast<double>(a.in_features),
               out = static_cast<double>(a.out_features);
  const double flops = linear_flops(a.batch, a.in_features, a.out_features);
  const char* precision = precision_name(a.precision);
  LaunchList list;
  const bool drelu = a.activation == Activation::kRelu && !a.dy_is_pre_activation && !a.dy_relu_applied;
  if (own_backward(a) && !a.dy_is_pre_activation) {
    // One launch: for a few rows a block per column tile over every row;
    // beyond, the partial sums, then its last blocks add them up.
    const bool one_pass = relu_bias_grad_one_pass(a.batch);
    const double partials =
        one_pass ? 0.0 : static_cast<double>(relu_bias_grad_workspace_bytes(a.batch, a.out_features));
    list.push_back({one_pass ? "relu_bias_grad_one_pass_kernel" : "relu_bias_grad_partial_kernel",
                    drelu ? "dReLU + bias gradient (own epilogue)" : "bias gradient (own epilogue)", "",
                    {(drelu ? 3 : 1) * b * out * e + 2 * partials + out * e, b * out, "fp32"}});
  } else if (drelu) {
    list.push_back({"relu_backward_kernel", "dReLU", "", {3 * b * out * e, 0, ""}});
  }
  if (!a.fused) {
    const double partials = static_cast<double>(bias_grad_workspace_bytes(a.batch, a.out_features));
    list.push_back({"bias_grad_partial_kernel", "bias gradient, partial sums", "", {b * out * e + partials, b * out, "fp32"}});
    list.push_back({"bias_grad_final_kernel", "bias gradient, final sum", "", {partials + out * e, 0, ""}});
  }
  const bool bgrad = lt_epilogues(a) && !a.dy_is_pre_activation;
  if (a.wgrad_reads_dy_t) {
    list.push_back({"transpose_kernel", "dz transposed for the weight gradient", "", {2 * b * out * e, 0, ""}});
  }
  list.push_back({kGemm, bgrad ? "weight-gradient GEMM + bias-gradient epilogue" : "weight-gradient GEMM", "",
                  {(b * in + b * out + in * out + (bgrad ? out : 0)) * e, flops, precision}});
  if (dgrad) {
    const double relu_epilogue = a.dx_applies_input_relu ? b * in / 8 + in * e : 0;
    list.push_back({kGemm, a.dx_applies_input_relu ? "data-gradient GEMM + dReLU/bias-gradient epilogue" : "data-gradient GEMM",
                    "", {(b * out + in * out + b * in) * e + relu_epilogue, flops, precision}});
  }
  return list;
}

size_t Linear::aux_bytes(const LinearArguments& args) {
  if (!lt_epilogues(args) || args.activation != Activation::kRelu) return 0;
  return static_cast<size_t>(aux_ld_bits(args.out_features) / 8 * args.batch);
}

Linear::Linear(cublasLtHandle_t handle, const LinearArguments& shape_and_modes)
    : plan_(std::make_unique<Plan>()) {
  Plan& p = *plan_;
  p.handle = handle;
  p.problem.batch = shape_and_modes.batch;
  p.problem.in_features = shape_and_modes.in_features;
  p.problem.out_features = shape_and_modes.out_features;
  p.problem.precision = shape_and_modes.precision;
  p.problem.activation = shape_and_modes.activation;
  p.problem.fused = shape_and_modes.fused;
  p.problem.epilogues = shape_and_modes.epilogues;
  p.problem.dy_is_pre_activation = shape_and_modes.dy_is_pre_activation;
  p.problem.dx_applies_input_relu = shape_and_modes.dx_applies_input_relu;
  p.problem.dy_relu_applied = shape_and_modes.dy_relu_applied;
  p.problem.dgrad_reads_w_t = shape_and_modes.dgrad_reads_w_t;
  p.problem.wgrad_reads_dy_t = shape_and_modes.wgrad_reads_dy_t;
  p.status = can_implement(p.problem);
  if (!p.status) return;
  if (own_backward(p.problem) && !p.problem.dy_is_pre_activation) {
    p.grad_done = DeviceBuffer<unsigned>(
        std::vector<unsigned>(static_cast<size_t>(relu_bias_grad_counters(p.problem.out_features)), 0u));
  }

  const auto batch = static_cast<uint64_t>(p.problem.batch);
  const auto in = static_cast<uint64_t>(p.problem.in_features);
  const auto out = static_cast<uint64_t>(p.problem.out_features);
  const bool fused = p.problem.fused;
  const bool relu = p.problem.activation == Activation::kRelu;

  const Epilogues own = p.problem.epilogues;
  const cublasLtEpilogue_t forward_epilogue =
      !fused || own == Epilogues::kOwn ? CUBLASLT_EPILOGUE_DEFAULT
      : own == Epilogues::kOwnBackward ? (relu ? CUBLASLT_EPILOGUE_RELU_BIAS : CUBLASLT_EPILOGUE_BIAS)
                                       : (relu ? CUBLASLT_EPILOGUE_RELU_AUX_BIAS : CUBLASLT_EPILOGUE_BIAS);
  const cublasLtEpilogue_t dgrad_epilogue =
      p.problem.dx_applies_input_relu ? CUBLASLT_EPILOGUE_DRELU_BGRAD : CUBLASLT_EPILOGUE_DEFAULT;
  const cublasLtEpilogue_t wgrad_epilogue = lt_epilogues(p.problem) && !p.problem.dy_is_pre_activation
                                                ? CUBLASLT_EPILOGUE_BGRADB
                                                : CUBLASLT_EPILOGUE_DEFAULT;
  const GemmSpec specs[] = {
      {"forward", p.problem.precision, CUBLAS_OP_T, CUBLAS_OP_N, in, out, in, batch, out, batch,
       forward_epilogue, aux_ld_bits(p.problem.out_features)},
      p.problem.dgrad_reads_w_t
          ? GemmSpec{"dgrad", p.problem.precision, CUBLAS_OP_T, CUBLAS_OP_N, out, in, out, batch, in, batch,
                     dgrad_epilogue, aux_ld_bits(p.problem.in_features)}
          : GemmSpec{"dgrad", p.problem.precision, CUBLAS_OP_N, CUBLAS_OP_N, in, out, out, batch, in, batch,
                     dgrad_epilogue, aux_ld_bits(p.problem.in_features)},
      p.problem.wgrad_reads_dy_t
          ? GemmSpec{"wgrad", p.problem.precision, CUBLAS_OP_N, CUBLAS_OP_N, in, batch, batch, out, in, out,
                     wgrad_epilogue, 0}
          : GemmSpec{"wgrad", p.problem.precision, CUBLAS_OP_N, CUBLAS_OP_T, in, batch, out, batch, in, out,
                     wgrad_epilogue, 0},
  };
  LtGemm* gemms[] = {&p.forward, &p.dgrad, &p.wgrad};
  for (int i = 0; i < 3 && p.status; ++i) p.status = gemms[i]->plan(handle, specs[i]);
}

Linear::~Linear() = default;
Linear::Linear(Linear&&) noexcept = default;
Linear& Linear::operator=(Linear&&) noexcept = default;

const Status& Linear::status() const { return plan_->status; }

void Linear::forward(const LinearArguments& args, void* workspace, cudaStream_t stream) const {
  const Plan& p = *plan_;
  p.check_call(args, workspace);
  require(args.x, "x");
  require(args.w, "w");
  require(args.b, "b");
  require(args.y, "y");
  const bool relu = args.activation == Activation::kRelu;
  const DType dtype = dtype_of(args.precision);
  if (own_forward(args)) {
    p.forward.run(p.handle, args.w, args.x, args.y, workspace, stream);
    bias_activation(dtype, args.batch, args.out_features, args.y, args.b, relu, stream);
    return;
  }
  if (args.fused) {
    p.forward.set_bias(args.b);
    if (relu && lt_epilogues(args)) {
      require(args.aux, "aux");
      p.forward.set_aux(args.aux);
    }
    p.forward.run(p.handle, args.w, args.x, args.y, workspace, stream);
    return;
  }
  p.forward.run(p.handle, args.w, args.x, args.y, workspace, stream);
  add_bias(dtype, args.batch, args.out_features, args.y, args.b, stream);
  if (relu) relu_forward(dtype, args.batch * args.out_features, args.y, args.y, stream);
}

void Linear::backward(const LinearArguments& args, void* workspace, cudaStream_t stream,
                      const SideStream* wgrad) const {
  const Plan& p = *plan_;
  p.check_call(args, workspace);
  require(args.x, "x");
  require(args.w, "w");
  require(args.dy, "dy");
  require(args.dw, "dw");
  if (args.dx != nullptr && args.dgrad_reads_w_t) require(args.w_t, "w_t (dgrad_reads_w_t)");
  if (args.wgrad_reads_dy_t) require(args.dy_t, "dy_t (wgrad_reads_dy_t)");
  const DType dtype = dtype_of(args.precision);
  const int64_t n = args.batch * args.out_features;
  const bool drelu =
      args.activation == Activation::kRelu && !args.dy_is_pre_activation && !args.dy_relu_applied;
  if (!args.dy_is_pre_activation) require(args.db, "db");
  // Our own pass with no dReLU to apply (dy_relu_applied) only sums db and
  // leaves dy as it is: with a side stream and few rows (its one-pass
  // kernel, no workspace) it runs there, before the weight gradient, so the
  // data-gradient chain on `stream` does not wait for it.
  const bool bias_beside = wgrad != nullptr && own_backward(args) && args.dy_relu_applied &&
                           relu_bias_grad_one_pass(args.batch);
  if (own_backward(args) && !args.dy_is_pre_activation && !bias_beside) {
    // dz = dL/d(pre-activation) in place on dy and db, in one pass over dy.
    if (drelu) require(args.y, "y");
    relu_bias_grad(dtype, args.batch, args.out_features, drelu ? args.y : nullptr, args.dy, args.db,
                   static_cast<char*>(workspace) + kLinearCublasWorkspaceBytes, plan_->grad_done.data(), stream);
  } else if (drelu) {
    // dz = dL/d(pre-activation), in place on dy (as the CPU model does).
    require(args.y, "y");
    relu_backward(dtype, n, args.y, args.dy, args.dy, stream);
  }
  if (!args.fused) {
    bias_grad(dtype, args.batch, args.out_features, args.dy, args.db,
              static_cast<char*>(workspace) + kLinearCublasWorkspaceBytes, stream);
  } else if (lt_epilogues(args) && !args.dy_is_pre_activation) {
    p.wgrad.set_bias(args.db);
  }
  if (args.dx_applies_input_relu) {
    require(args.dx, "dx (dx_applies_input_relu)");
    require(args.input_aux, "input_aux");
    require(args.input_db, "input_db");
    p.dgrad.set_bias(args.input_db);
    p.dgrad.set_aux(args.input_aux);
  }
  // The weight gradient from dz itself or (wgrad_reads_dy_t) from its
  // transposed copy, written just before it on the same stream.
  const auto weight_gradient = [&](void* ws, cudaStream_t s) {
    if (args.wgrad_reads_dy_t) transpose_dy(args, s);
    p.wgrad.run(p.handle, args.x, args.wgrad_reads_dy_t ? args.dy_t : args.dy, args.dw, ws, s);
  };
  if (wgrad == nullptr) {
    weight_gradient(workspace, stream);
    if (args.dx != nullptr) p.dgrad.run(p.handle, dgrad_weights(args), args.dy, args.dx, workspace, stream);
    return;
  }
  // dz (dy, in place) and db's own pass are done on `stream` (unless
  // bias_beside: db's pass is the side stream's first): the fork is here.
  // The dx GEMM, on the step's chain, is launched (and captured) before
  // the weight gradient, which becomes ready with it: in the bf16 512 trace
  // at 1590d6a the weight gradient, launched first, started first each
  // time and the dx GEMM 2.6-3.6 us after the dReLU pass, once the weight
  // gradient's blocks had taken the SMs.
  PERFLAB_CUDA_CHECK(cudaEventRecord(wgrad->fork, stream));
  if (args.dx != nullptr) p.dgrad.run(p.handle, dgrad_weights(args), args.dy, args.dx, workspace, stream);
  PERFLAB_CUDA_CHECK(cudaStreamWaitEvent(wgrad->stream, wgrad->fork, 0));
  if (bias_beside) {
    relu_bias_grad(dtype, args.batch, args.out_features, nullptr, args.dy, args.db, nullptr, nullptr, wgrad->stream,
                   ReluBiasGradPasses::kOne);
  }
  weight_gradient(wgrad->cublas_workspace, wgrad->stream);
}

std::vector<GemmChoice> Linear::tune(const LinearArguments& args, void* workspace, cudaStream_t stream,
                                     int repetitions, bool search) {
  Plan& p = *plan_;
  p.check_call(args, workspace);
  if (search) {
    p.forward.search(p.handle);
    p.wgrad.search(p.handle);
    if (args.dx != nullptr) p.dgrad.search(p.handle);
  }
  require(args.x, "x");
  require(args.w, "w");
  require(args.y, "y");
  require(args.dy, "dy");
  require(args.dw, "dw");
  std::vector<GemmChoice> choices;
  // The pointers each GEMM's epilogue reads or writes, as forward() and
  // backward() set them.
  if (args.fused && !own_forward(args)) {
    require(args.b, "b");
    p.forward.set_bias(args.b);
    if (args.activation == Activation::kRelu && lt_epilogues(args)) {
      require(args.aux, "aux");
      p.forward.set_aux(args.aux);
    }
  }
  choices.push_back(p.forward.tune(p.handle, args.w, args.x, args.y, workspace, stream, repetitions));
  if (lt_epilogues(args) && !args.dy_is_pre_activation) {
    require(args.db, "db");
    p.wgrad.set_bias(args.db);
  }
  if (args.wgrad_reads_dy_t) {  // timed on dy's values, as backward() reads them
    require(args.dy_t, "dy_t (wgrad_reads_dy_t)");
    transpose_dy(args, stream);
  }
  choices.push_back(p.wgrad.tune(p.handle, args.x, args.wgrad_reads_dy_t ? args.dy_t : args.dy, args.dw, workspace,
                                 stream, repetitions));
  if (args.dx != nullptr) {
    if (args.dgrad_reads_w_t) require(args.w_t, "w_t (dgrad_reads_w_t)");
    if (args.dx_applies_input_relu) {
      require(args.input_aux, "input_aux");
      require(args.input_db, "input_db");
      p.dgrad.set_bias(args.input_db);
      p.dgrad.set_aux(args.input_aux);
    }
    choices.push_back(p.dgrad.tune(p.handle, dgrad_weights(args), args.dy, args.dx, workspace, stream, repetitions));
  }
  return choices;
}

}  // namespace perflab::kernels::cuda
