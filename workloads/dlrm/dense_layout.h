// Where CudaModel keeps the MLPs' weights and biases: one flat parameter
// buffer and one gradient buffer of the same layout, each tensor at a
// 16-byte-aligned offset (fp32 and bf16), each MLP's first weight with zero
// columns up to its padded input width (bottom_input_width,
// top_input_width). One function lays it out for the model
// (cuda_model.cc) and for the declared launches' SGD sizes
// (cuda_launches.cc), so the two cannot disagree, and a CPU test
// (tests/workloads/dlrm/dense_layout_test.cc) holds it without a device.
// Host-only.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "workloads/dlrm/model.h"

namespace perflab::dlrm {

/// The top MLP's input width on the GPU: the interaction's output width
/// rounded up to 8 elements (16-byte rows in bf16), so that cuBLASLt can
/// take its aligned kernels for the top MLP's first layer (DLE: 479 -> 480,
/// as NVIDIA's DeepLearningExamples pads). The padding columns of the
/// interaction output and of that layer's weight are zero and stay zero
/// (their weight gradient is the zero input's), so the model is the
/// unpadded one.
int64_t top_input_width(const ModelShape& shape);

/// The bottom MLP's input width on the GPU: the dense features rounded up
/// to 8 elements (DLE: 13 -> 16), for the same reason as top_input_width;
/// the padding columns of the input and of the first weight are zero and
/// stay zero.
int64_t bottom_input_width(const ModelShape& shape);

/// Dense tensors start at multiples of this many elements: 32 bytes in
/// fp32, 16 in bf16 (cuBLASLt's pointer alignment in both).
inline constexpr int64_t kDenseSlotAlignment = 8;

/// Elements a dense tensor of `size` values takes in the flat buffers
/// (rounded up to kDenseSlotAlignment).
int64_t dense_slot_elements(int64_t size);

/// One dense tensor in the flat buffers: a row-major matrix of `rows` rows
/// of `cols` values, `ld` apart (ld > cols only for each MLP's first
/// weight: its zero columns). A bias is one row.
struct DenseSlot {
  std::string name;  ///< CpuModel::dense_parameters' ("bottom.0.weight", ...)
  int64_t offset = 0;
  int64_t rows = 1, cols = 0, ld = 0;
  int64_t values() const { return rows * cols; }  ///< The model's values (CpuModel's size).
  int64_t elements() const { return dense_slot_elements(rows * ld); }  ///< What it takes, padding included.
};

/// An MLP layer's weight and bias as one range of the flat buffers (the
/// bias's slot follows the weight's), padding included: what a per-layer
/// SGD updates.
struct DenseRange {
  int64_t first = 0, count = 0;
};

/// The layout: CpuModel::dense_parameters' order (bottom MLP then top, each
/// layer's weight then its bias).
struct DenseLayout {
  std::vector<DenseSlot> slots;
  int64_t count = 0;        ///< Elements of each flat buffer.
  size_t bottom_layers = 0;  ///< Layers of the bottom MLP; the top's follow.
  size_t top_layers = 0;

  /// Layer l of the bottom (bottom = true) or the top MLP.
  DenseRange layer(bool bottom, size_t l) const;
  const DenseSlot& weight(bool bottom, size_t l) const { return slots.at(first_slot(bottom, l)); }
  const DenseSlot& bias(bool bottom, size_t l) const { return slots.at(first_slot(bottom, l) + 1); }

 private:
  size_t first_slot(bool bottom, size_t l) const;
};

/// The layout of a model of `shape` (bottom_input_width and
/// top_input_width: the padded first weights). Throws std::logic_error if
/// the result breaks its own rules (every slot aligned and after the one
/// before, each bias right after its weight, the last layer the tail):
/// what CudaModel's per-layer SGD and the fused head's update rely on.
DenseLayout dense_layout(const ModelShape& shape);

/// The CPU model's dense tensors (CpuModel::dense_parameters) as the flat
/// parameter buffer of `layout`, padding zero. Throws perflab::Error when
/// they are not the layout's tensors (names, order and sizes).
std::vector<float> pack_dense(const DenseLayout& layout, const std::vector<DenseParameter>& params);

}  // namespace perflab::dlrm
