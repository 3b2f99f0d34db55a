// A trained DLRM on disk, for serving what training produced (issue 28):
// `--set save_model=PATH` writes each seed's model when its run ends,
// `--mode inference --set serve_model=PATH` serves it.
//
// Format (little-endian): the line "perflab-dlrm-checkpoint 1", a line of
// JSON (the shape: num_dense, table_sizes, embed_dim, bottom_mlp, top_mlp;
// the precision; the seed; the float counts that follow), then the dense
// parameters as fp32 in CpuModel::dense_parameters order, then every
// embedding table's rows, table by table. Written to a temporary file and
// renamed (a reader never sees half a checkpoint).
#pragma once

#include <cstdint>
#include <filesystem>

#include "workloads/dlrm/model.h"

namespace perflab::dlrm {

/// Writes `model` (trained from `seed`) to `path`. Error naming the path
/// when it cannot be written.
void save_checkpoint(CpuModel& model, uint64_t seed, const std::filesystem::path& path);

/// Fills `model` from the checkpoint at `path`. UsageError, one line, when
/// the file is missing, is not a checkpoint, is cut short, or holds a model
/// of another shape or precision than `model`'s (naming what differs).
void load_checkpoint(const std::filesystem::path& path, CpuModel& model);

/// The checks load_checkpoint makes before reading a parameter, for a model
/// of `shape` in `precision` (a run checks before it serves anything).
void check_checkpoint(const std::filesystem::path& path, const ModelShape& shape, CpuPrecision precision);

/// `pattern` with every "{seed}" replaced by the seed.
std::filesystem::path checkpoint_path(const std::string& pattern, uint64_t seed);

}  // namespace perflab::dlrm
