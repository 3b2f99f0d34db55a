// One planned cublasLtMatmul: descriptor, layouts, heuristic, run.
#include "kernels/cuda/linear_plan.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <memory>
#include <tuple>
#include <vector>

#include "base/error.h"
#include "kernels/cuda/capture.h"
#include "kernels/cuda/check.h"
#include "kernels/cuda/raii.h"

namespace perflab::kernels::cuda {
namespace {

const char* epilogue_name(cublasLtEpilogue_t epilogue) {
  switch (epilogue) {
    case CUBLASLT_EPILOGUE_DEFAULT:
      return "DEFAULT";
    case CUBLASLT_EPILOGUE_BIAS:
      return "BIAS";
    case CUBLASLT_EPILOGUE_RELU_BIAS:
      return "RELU_BIAS";
    case CUBLASLT_EPILOGUE_RELU_AUX_BIAS:
      return "RELU_AUX_BIAS";
    case CUBLASLT_EPILOGUE_DRELU_BGRAD:
      return "DRELU_BGRAD";
    case CUBLASLT_EPILOGUE_BGRADB:
      return "BGRADB";
    default:
      return "other";
  }
}

bool uses_bias_pointer(cublasLtEpilogue_t e) {
  return e == CUBLASLT_EPILOGUE_BIAS || e == CUBLASLT_EPILOGUE_RELU_BIAS || e == CUBLASLT_EPILOGUE_RELU_AUX_BIAS ||
         e == CUBLASLT_EPILOGUE_DRELU_BGRAD || e == CUBLASLT_EPILOGUE_BGRADB;
}

bool uses_aux(cublasLtEpilogue_t e) {
  return e == CUBLASLT_EPILOGUE_RELU_AUX_BIAS || e == CUBLASLT_EPILOGUE_DRELU_BGRAD;
}

template <typename T>
void set_attribute(cublasLtMatmulDesc_t desc, cublasLtMatmulDescAttributes_t attribute,
                   const T& value) {
  PERFLAB_CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(desc, attribute, &value, sizeof(value)));
}

/// The preference every query of a planned GEMM makes: our workspace and
/// the pointer alignment we promise. Returns the first refused setting's
/// status (success when none was); the caller destroys the preference.
cublasStatus_t make_preference(cublasLtMatmulPreference_t* preference) {
  PERFLAB_CUBLAS_CHECK(cublasLtMatmulPreferenceCreate(preference));
  const uint64_t workspace = kLinearCublasWorkspaceBytes;
  const auto alignment = static_cast<uint32_t>(kLinearPointerAlignment);
  cublasStatus_t status = cublasLtMatmulPreferenceSetAttribute(
      *preference, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &workspace, sizeof(workspace));
  for (auto attribute :
       {CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES,
        CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES}) {
    if (status == CUBLAS_STATUS_SUCCESS) {
      status = cublasLtMatmulPreferenceSetAttribute(*preference, attribute, &alignment, sizeof(alignment));
    }
  }
  return status;
}

bool same_algo(const cublasLtMatmulAlgo_t& a, const cublasLtMatmulAlgo_t& b) {
  return std::memcmp(a.data, b.data, sizeof(a.data)) == 0;
}

}  // namespace

LtGemm::~LtGemm() {
  if (d_ != nullptr) cublasLtMatrixLayoutDestroy(d_);
  if (b_ != nullptr) cublasLtMatrixLayoutDestroy(b_);
  if (a_ != nullptr) cublasLtMatrixLayoutDestroy(a_);
  if (desc_ != nullptr) cublasLtMatmulDescDestroy(desc_);
}

Status LtGemm::plan(cublasLtHandle_t handle, const GemmSpec& spec) {
  const bool tf32 = spec.precision == Precision::kTf32;
  const cudaDataType_t type = tf32 ? CUDA_R_32F : CUDA_R_16BF;
  const cublasComputeType_t compute = tf32 ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F;
  compute_ = compute;
  type_ = type;
  epilogue_ = spec.epilogue;
  PERFLAB_CUBLAS_CHECK(cublasLtMatmulDescCreate(&desc_, compute, CUDA_R_32F));
  set_attribute(desc_, CUBLASLT_MATMUL_DESC_TRANSA, spec.trans_a);
  set_attribute(desc_, CUBLASLT_MATMUL_DESC_TRANSB, spec.trans_b);
  set_attribute(desc_, CUBLASLT_MATMUL_DESC_EPILOGUE, spec.epilogue);
  // The heuristic reads the bias/aux pointers' values for their alignment
  // (cublasLt.h): plan with a stand-in aligned to exactly what we promise.
  const void* stand_in = reinterpret_cast<const void*>(uintptr_t{kLinearPointerAlignment});
  if (uses_bias_pointer(spec.epilogue)) set_bias(stand_in);
  if (uses_aux(spec.epilogue)) {
    set_aux(stand_in);
    set_attribute(desc_, CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_LD, spec.aux_ld_bits);
  }
  PERFLAB_CUBLAS_CHECK(cublasLtMatrixLayoutCreate(&a_, type, spec.a_rows, spec.a_cols,
                                                  static_cast<int64_t>(spec.a_rows)));
  PERFLAB_CUBLAS_CHECK(cublasLtMatrixLayoutCreate(&b_, type, spec.b_rows, spec.b_cols,
                                                  static_cast<int64_t>(spec.b_rows)));
  PERFLAB_CUBLAS_CHECK(cublasLtMatrixLayoutCreate(&d_, type, spec.d_rows, spec.d_cols,
                                                  static_cast<int64_t>(spec.d_rows)));

  cublasLtMatmulPreference_t preference = nullptr;
  cublasStatus_t status = make_preference(&preference);
  std::vector<cublasLtMatmulHeuristicResult_t> results(kLinearAlgorithmCandidates);
  int found = 0;
  if (status == CUBLAS_STATUS_SUCCESS) {
    status = cublasLtMatmulAlgoGetHeuristic(handle, desc_, a_, b_, d_, d_, preference, kLinearAlgorithmCandidates,
                                            results.data(), &found);
  }
  cublasLtMatmulPreferenceDestroy(preference);
  if (status != CUBLAS_STATUS_SUCCESS || found == 0) {
    return Status::invalid(fmt::format(
        "cuBLASLt has no algorithm for the {} GEMM (m={}, n={}, k={}, {}, epilogue {}): {}",
        spec.name, spec.d_rows, spec.d_cols,
        spec.trans_a == CUBLAS_OP_T ? spec.a_rows : spec.a_cols, tf32 ? "tf32" : "bf16",
        epilogue_name(spec.epilogue),
        status != CUBLAS_STATUS_SUCCESS ? cublasLtGetStatusString(status) : "none found"));
  }
  candidates_.clear();
  for (int i = 0; i < found; ++i) {
    if (results[static_cast<size_t>(i)].state == CUBLAS_STATUS_SUCCESS) {
      candidates_.push_back(results[static_cast<size_t>(i)].algo);
    }
  }
  if (candidates_.empty()) candidates_.push_back(results[0].algo);
  algo_ = candidates_.front();
  name_ = spec.name;
  return Status::success();
}

int LtGemm::search(cublasLtHandle_t handle, int per_algorithm, int most) {
  if (desc_ == nullptr || per_algorithm < 1) return 0;
  constexpr int kMostIds = 256;
  std::vector<int> ids(kMostIds);
  int id_count = 0;
  if (cublasLtMatmulAlgoGetIds(handle, compute_, CUDA_R_32F, type_, type_, type_, type_, kMostIds, ids.data(),
                               &id_count) != CUBLAS_STATUS_SUCCESS) {
    return 0;
  }
  // Queried with the stand-in pointers plan() promised, not whatever a
  // call left in the descriptor: a candidate must run at the alignment we
  // promise, not at a luckier one.
  const void* stand_in = reinterpret_cast<const void*>(uintptr_t{kLinearPointerAlignment});
  if (uses_bias_pointer(epilogue_)) set_bias(stand_in);
  if (uses_aux(epilogue_)) set_aux(stand_in);
  cublasLtMatmulPreference_t preference = nullptr;
  cublasStatus_t status = make_preference(&preference);
  const uint32_t mode = CUBLASLT_SEARCH_LIMITED_BY_ALGO_ID;
  if (status == CUBLAS_STATUS_SUCCESS) {
    status = cublasLtMatmulPreferenceSetAttribute(preference, CUBLASLT_MATMUL_PREF_SEARCH_MODE, &mode, sizeof(mode));
  }
  // Every id's configurations first, then taken a rank at a time (each
  // id's best, then each one's second, ...): the cap keeps the best of
  // every id rather than all of the first ids'.
  std::vector<std::vector<cublasLtMatmulAlgo_t>> by_id;
  std::vector<cublasLtMatmulHeuristicResult_t> results(static_cast<size_t>(per_algorithm));
  for (int k = 0; k < id_count && status == CUBLAS_STATUS_SUCCESS; ++k) {
    // The heuristic limited to this id reads the id from the results' algos.
    bool initialised = true;
    for (cublasLtMatmulHeuristicResult_t& r : results) {
      r = {};
      initialised = initialised && cublasLtMatmulAlgoInit(handle, compute_, CUDA_R_32F, type_, type_, type_, type_,
                                                          ids[static_cast<size_t>(k)], &r.algo) == CUBLAS_STATUS_SUCCESS;
    }
    int found = 0;
    if (!initialised || cublasLtMatmulAlgoGetHeuristic(handle, desc_, a_, b_, d_, d_, preference, per_algorithm,
                                                       results.data(), &found) != CUBLAS_STATUS_SUCCESS) {
      continue;  // an id these types or this device cannot run: not a candidate
    }
    std::vector<cublasLtMatmulAlgo_t> configurations;
    for (int i = 0; i < found; ++i) {
      const cublasLtMatmulHeuristicResult_t& r = results[static_cast<size_t>(i)];
      if (r.state != CUBLAS_STATUS_SUCCESS || r.workspaceSize > kLinearCublasWorkspaceBytes) continue;
      cublasLtMatmulHeuristicResult_t checked{};
      if (cublasLtMatmulAlgoCheck(handle, desc_, a_, b_, d_, d_, &r.algo, &checked) == CUBLAS_STATUS_SUCCESS &&
          checked.workspaceSize <= kLinearCublasWorkspaceBytes) {
        configurations.push_back(r.algo);
      }
    }
    if (!configurations.empty()) by_id.push_back(std::move(configurations));
  }
  if (preference != nullptr) cublasLtMatmulPreferenceDestroy(preference);
  int added = 0;
  for (size_t rank = 0; rank < static_cast<size_t>(per_algorithm); ++rank) {
    for (const std::vector<cublasLtMatmulAlgo_t>& configurations : by_id) {
      if (static_cast<int>(candidates_.size()) >= most) return added;
      if (rank >= configurations.size()) continue;
      const cublasLtMatmulAlgo_t& algo = configurations[rank];
      const bool known = std::any_of(candidates_.begin(), candidates_.end(),
                                     [&](const cublasLtMatmulAlgo_t& c) { return same_algo(c, algo); });
      if (!known) {
        candidates_.push_back(algo);
        ++added;
      }
    }
  }
  return added;
}

std::string LtGemm::describe(int i) const {
  if (i < 0 || i >= static_cast<int>(candidates_.size())) return "-";
  const cublasLtMatmulAlgo_t& algo = candidates_[static_cast<size_t>(i)];
  const auto get = [&](cublasLtMatmulAlgoConfigAttributes_t attribute, auto value) {
    size_t written = 0;
    return cublasLtMatmulAlgoConfigGetAttribute(&algo, attribute, &value, sizeof(value), &written) ==
                   CUBLAS_STATUS_SUCCESS
               ? static_cast<int64_t>(value)
               : int64_t{-1};
  };
  return fmt::format("algo {} tile {} stages {} split-k {} reduction {} swizzle {} option {} cluster {} inner {}",
                     get(CUBLASLT_ALGO_CONFIG_ID, int32_t{0}), get(CUBLASLT_ALGO_CONFIG_TILE_ID, uint32_t{0}),
                     get(CUBLASLT_ALGO_CONFIG_STAGES_ID, uint32_t{0}), get(CUBLASLT_ALGO_CONFIG_SPLITK_NUM, int32_t{0}),
                     get(CUBLASLT_ALGO_CONFIG_REDUCTION_SCHEME, uint32_t{0}),
                     get(CUBLASLT_ALGO_CONFIG_CTA_SWIZZLING, uint32_t{0}),
                     get(CUBLASLT_ALGO_CONFIG_CUSTOM_OPTION, uint32_t{0}),
                     get(CUBLASLT_ALGO_CONFIG_CLUSTER_SHAPE_ID, uint16_t{0}),
                     get(CUBLASLT_ALGO_CONFIG_INNER_SHAPE_ID, uint16_t{0}));
}

int tune_batch(double once_ms) {
  if (!(once_ms > 0)) return kTuneMaxBatch;
  const double n = std::ceil(kTuneBatchMs / once_ms);
  return n >= kTuneMaxBatch ? kTuneMaxBatch : std::max(1, static_cast<int>(n));
}

namespace {

/// The median of `times` (not empty), sorted in place.
double median_of(std::vector<double>& times) {
  std::sort(times.begin(), times.end());
  const size_t n = times.size();
  return n % 2 == 1 ? times[n / 2] : 0.5 * (times[n / 2 - 1] + times[n / 2]);
}

}  // namespace

GemmChoice LtGemm::tune(cublasLtHandle_t handle, const void* a, const void* b, void* d, void* workspace,
                        cudaStream_t stream, int repetitions) {
  GemmChoice choice;
  choice.gemm = name_;
  const float alpha = 1.0f;
  const float beta = 0.0f;
  // On a stream of its own (capturable, which the legacy default stream
  // the model tunes on is not), after everything already on `stream` (the
  // operands' fills).
  const Stream tuning;
  const Event ready;
  stream_waits_for(tuning.get(), stream, ready.get());
  // marks[0] before a candidate's first timed replay, marks[r + 1] after
  // replay r: the replays are queued back to back, so no host call sits
  // between two marks.
  std::vector<std::unique_ptr<Event>> marks;
  for (int r = 0; r <= std::max(repetitions, 1); ++r) marks.push_back(std::make_unique<Event>(true));
  const auto matmul = [&](size_t i) {
    return cublasLtMatmul(handle, desc_, &alpha, a, a_, b, b_, &beta, d, d_, d, d_, &candidates_[i], workspace,
                          kLinearCublasWorkspaceBytes, tuning.get());
  };
  const auto sync = [&] {
    PERFLAB_CUDA_CHECK(cudaStreamSynchronize(tuning.get()));  // sync outside the iteration: setup, tuning
  };
  const auto between = [&](int from, int to) {
    float ms = 0;
    PERFLAB_CUDA_CHECK(cudaEventElapsedTime(&ms, marks[static_cast<size_t>(from)]->get(),
                                            marks[static_cast<size_t>(to)]->get()));
    return static_cast<double>(ms);
  };
  double best = std::numeric_limits<double>::infinity();
  for (size_t i = 0; i < candidates_.size(); ++i) {
    double median = std::numeric_limits<double>::quiet_NaN();
    // A warm-up launch (the first call loads the candidate's kernel), then
    // one launch between two marks: its time, which also counts the host's
    // cublasLtMatmul call (the device idles after the first mark until the
    // kernel arrives), only sizes the timed batch.
    bool runs = matmul(i) == CUBLAS_STATUS_SUCCESS;
    if (runs) {
      sync();
      PERFLAB_CUDA_CHECK(cudaEventRecord(marks[0]->get(), tuning.get()));
      runs = matmul(i) == CUBLAS_STATUS_SUCCESS;
      PERFLAB_CUDA_CHECK(cudaEventRecord(marks[1]->get(), tuning.get()));
      sync();
    }
    if (runs) {
      const int batch = tune_batch(between(0, 1));
      // `batch` launches back to back in a graph, its replays back to back:
      // the kernels' own time, as a captured step runs them.
      begin_capture(tuning.get());
      for (int k = 0; k < batch && runs; ++k) runs = matmul(i) == CUBLAS_STATUS_SUCCESS;
      GraphExec graph;
      if (runs) {
        try {
          graph.end_capture(tuning.get());
        } catch (const CudaError&) {  // a capture this candidate invalidated, or a graph that will not instantiate
          runs = false;
        }
      } else {
        abort_capture(tuning.get());  // a candidate that will not run in a capture is skipped, not fatal
      }
      if (runs && repetitions > 0) {
        graph.launch(tuning.get());  // its own warm-up
        PERFLAB_CUDA_CHECK(cudaEventRecord(marks[0]->get(), tuning.get()));
        for (int r = 0; r < repetitions; ++r) {
          graph.launch(tuning.get());
          PERFLAB_CUDA_CHECK(cudaEventRecord(marks[static_cast<size_t>(r) + 1]->get(), tuning.get()));
        }
        sync();
        std::vector<double> times;
        for (int r = 0; r < repetitions; ++r) times.push_back(between(r, r + 1) / batch);
        median = median_of(times);
      }
    }
    if (!runs) (void)cudaGetLastError();  // cuBLASLt's refusal leaves no error for a later check to misname
    choice.median_ms.push_back(median);
    if (!std::isnan(median) && median < best) {
      best = median;
      choice.chosen = static_cast<int>(i);
    }
  }
  sync();
  if (std::isinf(best)) {
    throw Error(fmt::format("Linear: none of cuBLASLt's {} candidates for the {} GEMM would run", candidates_.size(),
                            name_));
  }
  algo_ = candidates_[static_cast<size_t>(choice.chosen)];
  choice.kept = describe(choice.chosen);
  return choice;
}

void LtGemm::set_bias(const void* bias) const {
  set_attribute(desc_, CUBLASLT_MATMUL_DESC_BIAS_POINTER, bias);
}

void LtGemm::set_aux(const void* aux) const {
  set_attribute(desc_, CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_POINTER, aux);
}

void LtGemm::run(cublasLtHandle_t handle, const void* a, const void* b, void* d, void* workspace,
                 cudaStream_t stream) const {
  const float alpha = 1.0f;
  const float beta = 0.0f;
  PERFLAB_CUBLAS_CHECK(cublasLtMatmul(handle, desc_, &alpha, a, a_, b, b_, &beta, d, d_, d, d_,
                                      &algo_, workspace, kLinearCublasWorkspaceBytes, stream));
}

}  // namespace perflab::kernels::cuda
