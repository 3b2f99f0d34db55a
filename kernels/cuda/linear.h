// Fully connected layer on the GPU through cuBLASLt: y = act(x·Wᵀ + b) and
// its backward pass; the CUDA twin of kernels/cpu/linear.h + relu.h.
//
// Layout (as the CPU reference): dense, row-major
//   x, dx [batch, in]    y, dy [batch, out]    W, dW [out, in]    b, db [out]
//
// Precision (every tensor of a layer has one element type):
//   kTf32  fp32 storage, CUBLAS_COMPUTE_32F_FAST_TF32 (TF32 tensor cores,
//          fp32 accumulate).
//   kBf16  bf16 storage for x, W, b, y and all gradients; fp32 accumulate,
//          bias added in fp32 before the one rounding. Why bf16 outputs,
//          even for dW/db and the logit: cuBLASLt's bias (and bias-gradient)
//          type is the type of D, and both backward GEMMs need dy as a bf16
//          operand, so an fp32 y or dW would cost a conversion pass and split
//          the bias types. fp32 master weights, and widening the [batch, 1]
//          logits for the loss, are the caller's business.
//
// Modes, fixed at construction:
//   fused    forward: one cublasLtMatmul with epilogue RELU_AUX_BIAS (ReLU;
//            writes a ReLU bitmask `aux`) or BIAS (no activation).
//            backward: wgrad with epilogue BGRADB (db = column sums of dZ),
//            dgrad plain or, when the layer below is a fused ReLU layer,
//            DRELU_BGRAD (see "Chaining" below).
//   unfused  forward: plain GEMM, then add_bias and relu_forward launches.
//            backward: relu_backward (mask = y > 0, in place on dy),
//            bias_grad, then plain dgrad and wgrad GEMMs.
//
// Whose epilogues a fused layer runs (LinearArguments::epilogues). On an
// H100 (2026-11-26) cuBLASLt ran every TF32 epilogue, and the bf16
// DRELU_BGRAD, as separate passes of its own (`globalKernel`): in TF32
// longer than our unfused kernels doing the same work, in bf16 about as
// long (our fused pass does it in fewer passes over memory); hence:
//   kCublasLt     the epilogues above, and the backward chain below.
//   kOwnBackward  forward: cuBLASLt's RELU_BIAS / BIAS epilogue (no
//                 bitmask); backward: one pass of ours over dy applying the
//                 dReLU (mask y > 0) and summing db (bias_act.h's
//                 relu_bias_grad: one launch, its last blocks finishing
//                 the sum), then plain GEMMs.
//   kOwn          forward: a plain GEMM, then one bias(+ReLU) pass of ours
//                 (bias_activation); backward as kOwnBackward.
// Neither own mode chains through a dgrad (no bitmask): each ReLU layer
// applies its own dReLU, as unfused, unless whoever wrote its dy did
// (dy_is_pre_activation, dy_relu_applied).
//
// Chaining the fused backward. cuBLASLt applies dReLU to a GEMM's *output*,
// so the dReLU of layer l (and with it db_l) cannot ride on layer l's own
// GEMMs (dy_l is their input); it rides on the dgrad GEMM of layer l+1, whose
// output is dL/dy_l. For an MLP L0 -> L1 -> ... with fused ReLU layers:
//   * forward: L_l writes aux_l (Linear::aux_bytes bytes, kept until backward).
//   * L_{l+1} is built with dx_applies_input_relu = true and, per call,
//     input_aux = aux_l, input_db = db_l: its dgrad (DRELU_BGRAD) writes
//     dx = dL/dz_l (the pre-activation gradient of L_l) and db_l.
//   * L_l is then built with dy_is_pre_activation = true and gets that dx as
//     its dy: its wgrad has no epilogue (db_l is already written).
//   * A ReLU layer whose dy arrives raw uses dy_is_pre_activation = false:
//     its backward applies dReLU from y > 0 in place on dy (one extra launch)
//     and its wgrad computes db with BGRADB. When the producer of dy has
//     already applied that dReLU (the interaction's backward does it for
//     the bottom MLP's last layer, InteractionArguments::dx_relu), the layer
//     is built with dy_relu_applied: no dReLU launch, db still from BGRADB
//     (or the unfused bias gradient). A layer without ReLU always has
//     dy_is_pre_activation = false (wgrad BGRADB gives db).
//   * The first layer of a chain (x is data or the interaction output, not a
//     ReLU output) has dx_applies_input_relu = false.
//
// Lifecycle (CUTLASS-style): can_implement() -> workspace_bytes()/aux_bytes()
// -> construct (descriptors, layouts and cublasLtMatmulAlgoGetHeuristic, once)
// -> status() -> forward()/backward() any number of times. forward/backward
// only enqueue on the stream: no allocation, no host synchronisation, so they
// can be captured in a CUDA graph. They set the per-call bias/aux pointers on
// the held matmul descriptors, so one Linear must not run on two host threads
// at once.
#pragma once

#include <cublasLt.h>
#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "kernels/cuda/status.h"
#include "kernels/launch.h"

namespace perflab::kernels::cuda {

/// Storage and math of a layer (see the file comment).
enum class Precision { kTf32, kBf16 };

/// Activation applied after the bias.
enum class Activation { kNone, kRelu };

/// Whose kernels run a fused layer's bias, ReLU and their gradients (see
/// the file comment).
enum class Epilogues { kCublasLt, kOwnBackward, kOwn };

/// "cublaslt", "own_backward" or "own".
const char* epilogues_name(Epilogues epilogues);

/// Every device pointer (and the workspace) must be aligned to this many
/// bytes: the cuBLASLt algorithms are chosen at construction for this
/// alignment (matrices, bias and aux). Models packing parameters into one
/// buffer must pad each tensor's offset to it.
inline constexpr size_t kLinearPointerAlignment = 16;

/// Shape, modes and buffers of one layer. Shape and modes are fixed when a
/// Linear is built; the pointers are per call (they may be null at
/// construction). Buffers hold float (kTf32) or __nv_bfloat16 (kBf16).
struct LinearArguments {
  int64_t batch = 0;         ///< B: rows of x, y.
  int64_t in_features = 0;   ///< Columns of x and W.
  int64_t out_features = 0;  ///< Columns of y, rows of W.
  Precision precision = Precision::kTf32;
  Activation activation = Activation::kNone;
  bool fused = true;  ///< Fused epilogues (true) or separate kernels (false).
  /// Fused only: whose epilogues (the file comment). dx_applies_input_relu
  /// needs kCublasLt (DRELU_BGRAD reads the bitmask); dy_is_pre_activation
  /// does not (DLRM's fused head hands the layer below its dz and db).
  Epilogues epilogues = Epilogues::kCublasLt;
  /// Fused ReLU layers only: dy already is dL/dz (pre-activation) and db was
  /// already written by the layer above's dgrad (DRELU_BGRAD).
  bool dy_is_pre_activation = false;
  /// Fused only: x is the output of a fused ReLU layer; backward's dgrad
  /// applies that layer's dReLU (input_aux) and writes its db (input_db), so
  /// dx receives that layer's pre-activation gradient. Requires dx.
  bool dx_applies_input_relu = false;
  /// ReLU layers, either mode: dy arrives as dL/dz already (whoever wrote
  /// it applied this layer's dReLU, mask y > 0), but db is not written yet:
  /// backward launches no dReLU and computes db as for a raw dy. Exclusive
  /// with dy_is_pre_activation.
  bool dy_relu_applied = false;
  /// The data-gradient GEMM reads w_t, a copy of W transposed ([in, out]
  /// row-major), as a "TN" GEMM with both operands K-major, instead of W
  /// ("NN", W M-major). On Hopper a TF32 GEMM must transpose an M-major
  /// operand itself (transpose.h says why and what it cost at 1590d6a);
  /// whoever calls keeps w_t equal to Wᵀ (DLRM: once a training step).
  bool dgrad_reads_w_t = false;
  /// The weight-gradient GEMM reads dy_t, dz transposed ([out, B]
  /// row-major: batch-contiguous, K-major for that GEMM), which backward()
  /// writes from dy (after its dReLU, where it applies one) by one transpose
  /// launch just before that GEMM, on its stream. dW = dzᵀ·x has K = B:
  /// both operands, batch-major in memory, are M- or N-major, which a TF32
  /// tensor-core GEMM on Hopper must transpose itself (on an H200 at
  /// 1590d6a, batch 65,536, the TF32 weight gradients took 1.38-1.73x their
  /// forward GEMMs in the five largest DLRM layers, the bf16 ones
  /// 0.84-0.95x). With dy_t one operand is K-major, as in the data gradient
  /// (1.15-1.16x there). The transpose costs B·out elements read and
  /// written: worth it where in is large against it (not measured). Not
  /// with cuBLASLt's BGRADB epilogue on that GEMM (can_implement says so).
  bool wgrad_reads_dy_t = false;

  const void* x = nullptr;          ///< [B, in] input.
  const void* w = nullptr;          ///< [out, in] weights.
  const void* w_t = nullptr;        ///< dgrad_reads_w_t: [in, out], Wᵀ; the data gradient's A.
  void* dy_t = nullptr;             ///< wgrad_reads_dy_t: [out, B], written by backward(); the weight gradient's B.
  const void* b = nullptr;          ///< [out] bias.
  void* y = nullptr;                ///< [B, out] output (after the activation). Backward
                                    ///< reads it for ReLU layers whose dy is raw.
  void* aux = nullptr;              ///< Fused ReLU: bitmask written by forward (aux_bytes()),
                                    ///< read by the layer above's backward as input_aux.
  void* dy = nullptr;               ///< [B, out] dL/dy. A ReLU layer that applies dReLU
                                    ///< itself overwrites it with dL/dz (as the CPU model).
  void* dx = nullptr;               ///< [B, in] dL/dx; null skips the dgrad GEMM.
  void* dw = nullptr;               ///< [out, in] dL/dW (overwritten).
  void* db = nullptr;               ///< [out] dL/db (overwritten; untouched when
                                    ///< dy_is_pre_activation).
  const void* input_aux = nullptr;  ///< dx_applies_input_relu: the lower layer's aux.
  void* input_db = nullptr;         ///< dx_applies_input_relu: the lower layer's db.
};

/// One GEMM's algorithm as Linear::tune chose it: the median time of each
/// candidate cuBLASLt's heuristic returned, in its order (NaN: it would not
/// run), and the index kept (0: the heuristic's first was fastest).
struct GemmChoice {
  std::string gemm;  ///< "forward", "dgrad" or "wgrad".
  std::vector<double> median_ms;
  int chosen = 0;
  std::string kept;  ///< The kept candidate's configuration (LtGemm::describe).
};

/// Forward and backward of one fully connected layer (see the file comment).
/// A second stream for work that may run beside the step's: its own
/// cuBLASLt workspace (kLinearCublasWorkspaceBytes; two GEMMs in flight may
/// not share one), and an event the caller owns for the fork.
struct SideStream {
  cudaStream_t stream = nullptr;
  void* cublas_workspace = nullptr;
  cudaEvent_t fork = nullptr;
};

class Linear {
 public:
  /// Whether the shape and modes (and any non-null pointer's alignment) can
  /// be run; the reason when not. Host-only: needs no device.
  static Status can_implement(const LinearArguments& args);
  /// Device workspace forward/backward need (cuBLASLt's plus the unfused or
  /// own epilogues' bias-gradient partials); 256-byte aligned. May be shared by layers run
  /// one after another on one stream.
  static size_t workspace_bytes(const LinearArguments& args);
  /// Bytes of the ReLU bitmask a fused ReLU layer writes (0 otherwise). It
  /// lives from this layer's forward to the layer above's backward, so it is
  /// a per-layer buffer, not part of the shared workspace.
  static size_t aux_bytes(const LinearArguments& args);
  /// Leading dimension, in bits, of that bitmask: out rounded up to 128.
  static int64_t aux_ld_bits(int64_t out_features);
  /// What forward() launches for args' shape and modes: the cuBLASLt GEMM
  /// (kernel family "gemm|gemv|nvjet|splitK": cuBLASLt's kernel names; a
  /// matmul may add a split-K reduction) and, unfused, the bias and ReLU kernels; with
  /// each one's compulsory bytes and FLOPs. Host-only.
  static LaunchList forward_launches(const LinearArguments& args);
  /// What backward() launches; `dgrad`: whether dx is computed (args.dx
  /// non-null when it runs).
  static LaunchList backward_launches(const LinearArguments& args, bool dgrad);

  /// Plans the forward, dgrad and wgrad GEMMs for args' shape and modes on
  /// the current device. Throws CudaError on a library failure; a problem
  /// can_implement rejects, or one cuBLASLt has no algorithm for, leaves
  /// status() not ok (forward/backward then throw UsageError).
  Linear(cublasLtHandle_t handle, const LinearArguments& shape_and_modes);
  ~Linear();
  Linear(Linear&&) noexcept;
  Linear& operator=(Linear&&) noexcept;
  Linear(const Linear&) = delete;
  Linear& operator=(const Linear&) = delete;

  /// ok, or why this configuration cannot run (names the GEMM and epilogue).
  const Status& status() const;

  /// y = act(x·Wᵀ + b); fused ReLU also writes aux. Needs x, w, b, y (+aux).
  void forward(const LinearArguments& args, void* workspace, cudaStream_t stream) const;
  /// dW, db (unless dy_is_pre_activation), dx (when non-null; with
  /// dx_applies_input_relu also input_db). Needs x, w, dy, dw, db, and y for
  /// ReLU layers that apply their dReLU (neither dy_is_pre_activation nor
  /// dy_relu_applied). With `wgrad`, the weight-gradient GEMM (and
  /// cuBLASLt's bias gradient with it) runs on wgrad->stream, after this
  /// layer's dReLU/bias passes on `stream`, beside the dx GEMM (launched
  /// after it, so the dx GEMM, on the caller's chain, is the first of the
  /// two to take SMs); a pass that
  /// only sums db (own epilogues, dy_relu_applied, a one-pass row count:
  /// relu_bias_grad_one_pass) runs on wgrad->stream too, before the GEMM,
  /// so nothing on `stream` waits for it; the caller
  /// joins wgrad->stream back before anything reads dw or db, and keeps x
  /// and dy unchanged until then.
  void backward(const LinearArguments& args, void* workspace, cudaStream_t stream,
                const SideStream* wgrad = nullptr) const;

  /// Times each GEMM's heuristic candidates on args' buffers and keeps the
  /// fastest (forward, wgrad, and dgrad when args.dx is set). Overwrites
  /// what forward and backward write (y, aux, dx, dw, db, input_db), never
  /// the weights; run it at setup, on inputs that are not all zeros.
  /// `search`: each GEMM's candidates widened first by LtGemm::search (the
  /// other algorithm ids' configurations). Synchronises the host.
  std::vector<GemmChoice> tune(const LinearArguments& args, void* workspace, cudaStream_t stream,
                               int repetitions, bool search = false);

 private:
  struct Plan;
  std::unique_ptr<Plan> plan_;
};

}  // namespace perflab::kernels::cuda
