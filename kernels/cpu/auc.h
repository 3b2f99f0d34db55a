// Exact ROC AUC: the area under the receiver operating characteristic curve,
// computed as the Mann-Whitney U statistic with average ranks for ties.
#pragma once

#include <cstdint>

namespace perflab::kernels::cpu {

/// Exact ROC AUC of `scores` against binary `labels` (a label >= 0.5 counts as
/// positive, anything else as negative), n samples.
///
/// AUC = P(score of a random positive > score of a random negative), with a
/// tied positive/negative pair counting one half: the Mann-Whitney U statistic
/// with average ranks, divided by (positives * negatives). O(n log n) time
/// (an LSD radix sort on the scores), O(n) extra memory, single-threaded and
/// deterministic: the result depends only on the multiset of (score, label)
/// pairs, not on their order. -0.0 and +0.0 are the same score.
///
/// Returns NaN when n == 0, when only one class is present (AUC is undefined
/// then) or when any score is NaN.
double roc_auc(const float* scores, const float* labels, int64_t n);

}  // namespace perflab::kernels::cpu
