// DLRM serving on one GPU (issue 28): the engine LoadGen drives on the cuda
// backend. The dense network runs as CudaModel's forward pass with external
// embeddings (cuda_model.h), one model per plan size (max_batch, a quarter
// of it, ... down to 1: cuBLASLt plans are made for a batch size); a batch
// runs on the smallest plan that holds it, padded to its size (the padding
// rows' outputs are dropped). Each batch:
//   1. queued row updates are written to the host tables (and to the GPU's
//      copy: all_device tables, or cached rows re-read by the cache);
//   2. dense features and ids are gathered into pinned buffers and copied
//      to the GPU (copies);
//   3. the embeddings are looked up as the placement says (lookup):
//        all_device  EmbeddingForward on tables in GPU memory;
//        host        EmbeddingForward on the pinned, mapped host tables
//                    (every row over PCIe/C2C);
//        hot_cache   the GPU cache (kernels/cuda/embedding_cache.h): hits
//                    from GPU memory, misses from the mapped host tables;
//   4. the bottom MLP, interaction and top MLP (dense), the logits copied
//      back and σ taken on the host; meanwhile the cache inserts the
//      batch's misses on a second stream (insert), which the next batch's
//      lookup waits for.
// Parts are timed with CUDA events; the hit counters stay on the GPU until
// report(). Predictions agree with the CPU model within TF32's (or bf16's)
// rounding and are identical across placements (the rows are copies).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "harness/inference_run.h"
#include "workloads/dlrm/data/dataset.h"
#include "workloads/dlrm/model.h"
#include "workloads/dlrm/serve/serve_engine.h"
#include "workloads/dlrm/serve/serve_options.h"

namespace perflab::dlrm {

struct CudaServeSettings {
  bool bf16 = false;   ///< bf16 Linear layers (fp32 master weights): precision=bf16.
  bool fused = true;   ///< cuBLASLt epilogues (the fused toggle).
  bool interaction_tensor_cores = false;  ///< interaction=tensor_cores.
};

/// Builds the engine on the current device from `model` (its parameters and
/// tables are copied to the GPU or to pinned host memory; the CpuModel is
/// not kept). `samples` and `train` must outlive it. UsageError, one line,
/// when the samples do not fit the model or the placement does not fit the
/// GPU's memory; CudaError on a CUDA failure.
std::unique_ptr<DlrmServeEngine> make_dlrm_cuda_engine(std::unique_ptr<CpuModel> model, const Dataset& samples,
                                                       const Dataset& train, const ServeOptions& options,
                                                       int64_t max_batch, uint64_t seed,
                                                       const CudaServeSettings& settings);

/// Bytes of GPU memory the engine needs for `shape` served as `options` say
/// at `max_batch` (tables or cache, dense parameters, activations), for the
/// run's memory check before anything is allocated.
double dlrm_serving_device_bytes(const ModelShape& shape, const ServeOptions& options, int64_t max_batch);

}  // namespace perflab::dlrm
