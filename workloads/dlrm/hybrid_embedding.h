// The hybrid embedding of HugeCTR's MLPerf DLRM, on the CPU: categories
// seen often in the training data are replicated on every rank and trained
// data parallel (their gradients all-reduced), the rest stay with their
// table's owner (model parallel) and are deduplicated within the batch
// before they are exchanged: an owner sends each rank every infrequent row
// its samples need once, and gets one summed gradient per row back.
//
// Every rank reads the whole global batch, so an owner and a receiver work
// out the same list of rows to exchange on their own: no ids travel.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "workloads/dlrm/batch.h"

namespace perflab::dlrm {

/// The categories replicated on every rank.
struct FrequentCategories {
  int64_t threshold = 0;                     ///< A category is frequent when seen this often or more.
  std::vector<std::vector<int32_t>> ids;     ///< Per table, its frequent ids, ascending.
  std::vector<std::vector<int32_t>> index;   ///< Per table, id -> position in ids (-1: infrequent).
  int64_t count = 0;                         ///< Frequent categories over all tables.
  double lookup_share = 0;                   ///< Share of the training lookups that hit them.

  bool empty() const { return count == 0; }
  bool frequent(int table, int32_t id) const { return index[static_cast<size_t>(table)][static_cast<size_t>(id)] >= 0; }
};

/// The threshold rule: a category is frequent when it occurs, on average,
/// at least once per global batch of the training data
/// (count >= samples / batch). Replicating it then costs one all-reduce of
/// its gradient per iteration, where keeping it model parallel costs an
/// exchange of its row (forward) and its gradient (backward) in most
/// iterations.
int64_t frequency_threshold(int64_t train_samples, int64_t global_batch);

/// Counts every (table, id) of `samples` rows of `categorical` ([samples,
/// T], ids already checked) and keeps those seen `threshold` times or more.
FrequentCategories find_frequent(const int32_t* categorical, int64_t samples,
                                 const std::vector<int64_t>& table_sizes, int64_t threshold);

/// The threshold and what it selects, as recorded in the result.
nlohmann::json frequent_json(const FrequentCategories& frequent);

/// (table, id) pairs, sorted, without repeats.
using RowList = std::vector<std::pair<int, int32_t>>;

/// The infrequent rows of `tables` (ascending) that samples [first, first +
/// n) of `batch` look up, each once, into `rows` (cleared first; keeps its
/// capacity, so a reused list stops allocating).
void unique_infrequent_rows(const BatchView& batch, int64_t first, int64_t n, const std::vector<int>& tables,
                            const FrequentCategories& frequent, RowList& rows);

/// Where `row` sits in `rows` (it must be there).
int64_t position_of(const RowList& rows, std::pair<int, int32_t> row);

}  // namespace perflab::dlrm
