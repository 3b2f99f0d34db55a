// A seeded synthetic Criteo-like click dataset with a known teacher, so the
// best achievable AUC (the ceiling) is known exactly.
//
// Each sample has 13 count-like dense features (log1p-transformed, as Criteo
// preprocessing does) and one Zipf-distributed id per table (id 0 the most
// frequent). Its label is Bernoulli(sigmoid(teacher logit + bias + noise)):
// the teacher is a linear term on the dense features, a scalar effect per
// (table, id) and low-rank dot products <u_i[id_i], u_j[id_j]> for some table
// pairs -- all things a DLRM (bottom MLP, embeddings, pairwise dot products,
// top MLP) can represent. Per-id teacher parameters come from a hash of
// (seed, table, id), so tables of any size cost nothing to describe. The bias
// is calibrated by bisection on a separate sample to give the target click
// rate. Every sample draws from its own counter-based random stream keyed by
// (seed, split, index): the data is bit-identical for a given config,
// whatever the number of OpenMP threads.
#pragma once

#include <cstdint>
#include <vector>

#include "workloads/dlrm/data/dataset.h"

namespace perflab::dlrm {

/// Cardinalities of the 26 Criteo 1TB categorical features as the MLPerf DLRM
/// reference hashes them (max_ind_range 40M), each capped at `cap` rows.
std::vector<int64_t> criteo_table_sizes(int64_t cap);

/// What to generate. The teacher's logit (before bias and noise) has standard
/// deviation about `teacher_scale`, split between its three terms in the
/// proportions of the three shares (normalised on the calibration sample).
struct SyntheticConfig {
  int64_t train_samples = 1 << 20;                                    ///< Training samples.
  int64_t eval_samples = 1 << 17;                                     ///< Evaluation samples.
  std::vector<int64_t> table_sizes = std::vector<int64_t>(26, 1000);  ///< Rows per table.
  double zipf_exponent = 1.05;  ///< P(id = k) proportional to (k + 1)^-exponent; >= 0.
  double click_rate = 0.25;     ///< Target fraction of positive labels, in (0, 1).
  double teacher_scale = 1.35;  ///< Standard deviation of the teacher logit.
  double teacher_noise = 0.0;   ///< Std of hidden Gaussian noise added to each logit.
  double dense_share = 0.25;    ///< Variance share of the linear dense term.
  double id_share = 0.45;       ///< Variance share of the per-id scalar effects.
  double pair_share = 0.30;     ///< Variance share of the pairwise dot-product terms.
  int num_pairs = 16;           ///< Table pairs with a dot-product term.
  int pair_rank = 4;            ///< Length of the teacher's per-id vectors u_t[id], 1..64.
  uint64_t seed = 1;            ///< Everything derives from this.
};

/// The generated splits and what is known about them.
struct SyntheticData {
  Dataset train;                ///< train_samples samples.
  Dataset eval;                 ///< eval_samples samples.
  double train_click_rate = 0;  ///< Realised fraction of positive train labels.
  double eval_click_rate = 0;   ///< Realised fraction of positive eval labels.
  double ceiling_auc = 0;       ///< Exact AUC of the teacher's click probabilities on eval
                                ///< (Bayes-optimal; NaN when eval has one class only).
  double teacher_bias = 0;      ///< Calibrated bias added to every teacher logit.
};

/// Generates train and eval splits; throws UsageError for an invalid config.
/// Runs in parallel with OpenMP; the result does not depend on the thread count.
SyntheticData generate_synthetic(const SyntheticConfig& config);

}  // namespace perflab::dlrm
