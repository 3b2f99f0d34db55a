// RNN-T (transducer) loss on the CPU, with its gradient with respect to the
// joint network's logits. This is the reference the CUDA loss is tested
// against.
//
// For sequence b with T_b frames and U_b labels y_1..y_U_b, the joint network
// gives logits z[t, u, :] over V symbols (blank included) for every frame
// t < T_b and label position u <= U_b. With lp = log_softmax(z) over V:
//   alpha(0, 0)  = 0
//   alpha(t, u)  = logaddexp(alpha(t-1, u) + lp(t-1, u, blank),      [blank: (t-1,u) -> (t,u)]
//                            alpha(t, u-1) + lp(t, u-1, y_u))        [label: (t,u-1) -> (t,u)]
//   beta(T_b-1, U_b) = lp(T_b-1, U_b, blank)                         [the final blank]
//   beta(t, u)   = logaddexp(beta(t+1, u) + lp(t, u, blank), beta(t, u+1) + lp(t, u, y_{u+1}))
//   cost_b = -log P(y|x) = -(alpha(T_b-1, U_b) + lp(T_b-1, U_b, blank)) = -beta(0, 0)
// Terms whose source lies outside the grid are -inf. All recursions run in log
// space (log-sum-exp), so long sequences do not underflow.
//
// Gradient of cost_b with respect to the logits, for t < T_b, u <= U_b:
//   gamma(t, u)       = exp(alpha(t, u) + beta(t, u) + cost_b)     (occupancy of node (t,u))
//   grad(t, u, v)     = softmax(t, u, v) * gamma(t, u)
//                       - [v == blank] * exp(alpha(t,u) + lp(t,u,blank) + next_blank(t,u) + cost_b)
//                       - [v == y_{u+1}] * exp(alpha(t,u) + lp(t,u,y_{u+1}) + beta(t,u+1) + cost_b)
//   next_blank(t, u)  = beta(t+1, u) if t < T_b-1; 0 at (T_b-1, U_b); -inf otherwise
// and the label term only exists for u < U_b. (From d cost/d lp(k) =
// -exp(alpha + lp(k) + beta_next(k) + cost) and d lp(k)/d z(v) = [k==v] -
// softmax(v); the two subtracted terms sum to gamma, so every row of the
// gradient sums to zero over v.) Rows outside the valid grid (padding) get 0.
//
// Layouts (all row-major, one "row" = V logits of one (b, t, u)):
//   padded: logits/grad [B, T, U+1, V], row (b, t, u) = (b*T + t)*(U+1) + u
//   packed: logits/grad [R, V], R = Σ_b T_b*(U_b+1), row (b, t, u) =
//           offsets[b] + t*(U_b+1) + u with offsets from rnnt_packed_offsets
// labels are [B, U] int32 in both layouts (entries past U_b are ignored),
// logit_lengths (T_b) and label_lengths (U_b) are [B] int32.
//
// Threads split the work by rows (log-softmax, gradient) and by sequence
// (recursions); every value is computed by one thread in a fixed order, so
// results do not depend on the thread count. Nothing here allocates: the
// caller passes a workspace of rnnt_workspace_elements() accumulator values.
#pragma once

#include <cstdint>

namespace perflab::kernels::cpu {

/// Problem size of an RNN-T loss (padded dimensions; lengths are per sequence).
struct RnntShape {
  int64_t batch = 0;       ///< B: sequences.
  int64_t max_time = 0;    ///< T: frames per sequence in the padded layout (T_b <= T).
  int64_t max_labels = 0;  ///< U: labels per sequence at most (U_b <= U); U+1 label positions.
  int64_t vocab = 0;       ///< V: symbols, blank included.
};

/// How costs and gradient are reduced over the batch.
enum class RnntReduction {
  kNone,  ///< Per-sequence costs; gradient of each cost_b (same as kSum, sequences share nothing).
  kSum,   ///< loss = Σ_b cost_b; gradient of the sum.
  kMean,  ///< loss = (Σ_b cost_b) / B, B = shape.batch; gradient divided by B as well.
};

/// Blank index and reduction.
struct RnntOptions {
  int64_t blank = -1;  ///< Blank symbol in [0, V); -1 means V-1.
  RnntReduction reduction = RnntReduction::kMean;
};

/// The blank index options select for `vocab` symbols (V-1 when options.blank is -1).
int64_t rnnt_blank(const RnntShape& shape, const RnntOptions& options);

/// Writes offsets[0..B] with offsets[b] = Σ_{c<b} T_c*(U_c+1) (offsets[B] is
/// the packed row count) and returns offsets[B]. Throws UsageError naming the
/// sequence when a length is negative.
int64_t rnnt_packed_offsets(int64_t batch, const int32_t* logit_lengths,
                            const int32_t* label_lengths, int64_t* offsets);

/// Rows of the padded layout: B*T*(U+1).
int64_t rnnt_padded_rows(const RnntShape& shape);

/// Workspace the loss needs, in accumulator elements, for `rows` logit rows
/// (rnnt_padded_rows or the packed row count): three values per row.
int64_t rnnt_workspace_elements(int64_t rows);

/// Checks shape, blank, lengths (1 <= T_b <= T, 0 <= U_b <= U) and labels
/// (0 <= y < V, y != blank for the first U_b of each sequence). Throws
/// UsageError naming the offending sequence. The loss functions call it.
void rnnt_validate(const RnntShape& shape, const RnntOptions& options, const int32_t* labels,
                   const int32_t* logit_lengths, const int32_t* label_lengths);

/// RNN-T loss on padded logits [B, T, U+1, V] of type Scalar, recursions in
/// Acc. Writes costs[b] = -log P(y_b|x_b) (unreduced, for every reduction)
/// and, unless grad is nullptr, the gradient of the reduced loss into grad
/// (same shape as logits; every padding row is zeroed). Returns the reduced
/// loss: Σ costs for kNone and kSum, Σ costs / B for kMean (sums in batch
/// order). Padding is never read. Instantiated for <float, double> (the
/// reference for fp32 logits), <double, double> and <float, float>.
template <typename Scalar, typename Acc>
double rnnt_loss(const RnntShape& shape, const RnntOptions& options, const Scalar* logits,
                 const int32_t* labels, const int32_t* logit_lengths, const int32_t* label_lengths,
                 double* costs, Scalar* grad, Acc* workspace);

/// The same on packed logits [R, V] (R = rnnt_packed_offsets(...)); `offsets`
/// are the B+1 values that function wrote. Results equal the padded layout's.
template <typename Scalar, typename Acc>
double rnnt_loss_packed(const RnntShape& shape, const RnntOptions& options, const Scalar* logits,
                        const int32_t* labels, const int32_t* logit_lengths,
                        const int32_t* label_lengths, const int64_t* offsets, double* costs,
                        Scalar* grad, Acc* workspace);

}  // namespace perflab::kernels::cpu
