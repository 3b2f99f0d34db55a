// One training batch as the CUDA step reads it, packed into one block of
// bytes, so the step's input arrives in one host-to-device copy instead of
// three (dense features, ids, labels).
//
// A block: this rank's samples' dense rows, each padded with zeros to the
// model's input width (CudaModel::dense_input_width, so the first layer
// reads them in place), as floats or, for a bf16 model, as bf16 (rounded to
// nearest even, as the device's cast rounds every value but a NaN's bits:
// the step then casts nothing);
// then the global batch's ids (every rank looks up
// every sample's rows); then this rank's labels. Each section starts at a
// multiple of kPackAlignment bytes of the block, and blocks follow each
// other at that alignment, so a block copied to a device allocation (256-byte
// aligned) keeps every section aligned for 16-byte loads.
//
// Host-only: the CUDA run packs its training set once into pinned memory
// (workloads/dlrm/cuda_run.cc) and copies one block a step.
#pragma once

#include <cstddef>
#include <cstdint>

#include "workloads/dlrm/data/dataset.h"

namespace perflab::dlrm {

inline constexpr int64_t kPackAlignment = 256;

struct PackedBatchLayout {
  int64_t local = 0;   ///< This rank's samples (dense rows and labels).
  int64_t width = 0;   ///< Values a dense row takes (num_dense padded).
  bool dense_bf16 = false;  ///< Dense values as bf16 bits (else floats).
  int64_t batch = 0;   ///< The global batch (ids).
  int64_t tables = 0;  ///< Ids a sample.
  /// Byte offsets of each section in a block, and a block's size (a
  /// multiple of kPackAlignment).
  int64_t dense_offset = 0, ids_offset = 0, labels_offset = 0, bytes = 0;
};

/// The layout of a block; throws UsageError for a size below 1 or a width
/// below the dataset's features (checked by pack_batch).
PackedBatchLayout packed_batch_layout(int64_t local, int64_t width, int64_t batch, int64_t tables,
                                      bool dense_bf16 = false);

/// Writes batch `index` of `train` into `out` (layout.bytes bytes): the
/// dense rows and labels of samples [index * batch + first_sample, + local),
/// the ids of samples [index * batch, + batch), zeros elsewhere. Throws
/// UsageError when the samples lie outside the dataset or its features do
/// not fit the layout.
void pack_batch(const Dataset& train, int64_t index, int64_t first_sample, const PackedBatchLayout& layout,
                std::byte* out);

}  // namespace perflab::dlrm
