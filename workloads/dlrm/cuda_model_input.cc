// CudaModel's dense input (cuda_model.h): how a batch's dense rows reach
// the bottom MLP's first layer. Read in place when they come as its padded
// rows (fp32, or bf16 for a bf16 model: DeviceBatch::dense_bf16), else
// padded (and cast, in bf16) into the model's own input buffer.
#include <fmt/format.h>

#include <stdexcept>

#include "base/error.h"
#include "kernels/cuda/check.h"
#include "kernels/cuda/sgd.h"
#include "workloads/dlrm/cuda_model.h"
#include "workloads/dlrm/cuda_model_parts.h"

namespace perflab::dlrm {

using model_parts::as;
using model_parts::count;
namespace kc = perflab::kernels::cuda;

namespace {

/// Whether the batch's dense rows are the bottom MLP's padded rows already.
bool dense_rows_padded(const DeviceBatch& batch, int64_t num_dense, int64_t width) {
  return (batch.dense_stride == 0 ? num_dense : batch.dense_stride) == width;
}

}  // namespace

const void* CudaModel::first_input(const DeviceBatch& batch) const {
  if (bf16_) return batch.dense_bf16 != nullptr ? batch.dense_bf16 : dense_in_bf16_.data();
  return dense_rows_padded(batch, shape_.num_dense, bottom_in_) ? batch.dense : dense_in_.data();
}

void CudaModel::pad_dense_input(const DeviceBatch& batch, cudaStream_t stream) {
  if (batch.dense_bf16 != nullptr) {  // bf16 rows of bottom_in_, read in place
    if (!bf16_) throw Error("dlrm cuda: an fp32 model was given a batch of bf16 dense rows");
    return;
  }
  const int64_t b = local_, n = shape_.num_dense;
  const int64_t stride = batch.dense_stride == 0 ? n : batch.dense_stride;
  if (stride != n && stride != bottom_in_) {
    throw Error(fmt::format("dlrm cuda: a batch's dense rows are {} floats apart; the model reads rows of {} "
                            "(num_dense) or {} (dense_input_width)", stride, n, bottom_in_));
  }
  const bool in_place = dense_rows_padded(batch, n, bottom_in_);
  if (bf16_) {
    // Padded rows cast whole (their zeros stay zeros), or each row into its place.
    kc::CastArguments cast{b * (in_place ? bottom_in_ : n), batch.dense, as<__nv_bfloat16>(dense_in_bf16_)};
    if (!in_place) {
      cast.row = n;
      cast.dst_stride = bottom_in_;
    }
    kc::CastFloatToBf16::run(cast, nullptr, stream);
  } else if (!in_place) {
    // Rows of n floats into rows of bottom_in_: a strided copy, no kernel of ours.
    PERFLAB_CUDA_CHECK(cudaMemcpy2DAsync(dense_in_.data(), count(bottom_in_) * sizeof(float), batch.dense,
                                         count(n) * sizeof(float), count(n) * sizeof(float), count(b),
                                         cudaMemcpyDeviceToDevice, stream));
  }
}

void CudaModel::check_step_input(const DeviceBatch& batch) const {
  // The declared step (step_launches) casts the dense input unless the
  // batches bring it in bf16: the batch must be the kind declared.
  if ((batch.dense_bf16 != nullptr) != (bf16_ && options_.dense_input_bf16)) {
    throw std::logic_error(batch.dense_bf16 != nullptr
                               ? "CudaModel::train_step: bf16 dense rows, but the model was built for fp32 ones"
                               : "CudaModel::train_step: fp32 dense rows, but the model was built for bf16 ones "
                                 "(dense_input_bf16)");
  }
}

}  // namespace perflab::dlrm
