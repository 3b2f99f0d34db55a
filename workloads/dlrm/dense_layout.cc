// CudaModel's flat dense buffers, laid out without a device (dense_layout.h).
#include "workloads/dlrm/dense_layout.h"

#include <fmt/format.h>

#include <algorithm>
#include <stdexcept>

#include "base/error.h"
#include "base/round_up.h"

#include "kernels/cpu/interaction.h"

namespace perflab::dlrm {
int64_t bottom_input_width(const ModelShape& shape) { return round_up(shape.num_dense, 8); }

int64_t top_input_width(const ModelShape& shape) {
  return round_up(kernels::cpu::interaction_output_width(static_cast<int>(shape.table_sizes.size()), shape.embed_dim),
                  8);
}

int64_t dense_slot_elements(int64_t size) { return round_up(size, kDenseSlotAlignment); }

size_t DenseLayout::first_slot(bool bottom, size_t l) const {
  if (l >= (bottom ? bottom_layers : top_layers)) {
    throw std::out_of_range(fmt::format("DenseLayout: the {} MLP has no layer {}", bottom ? "bottom" : "top", l));
  }
  return 2 * (bottom ? l : bottom_layers + l);
}

DenseRange DenseLayout::layer(bool bottom, size_t l) const {
  const DenseSlot& w = weight(bottom, l);
  const DenseSlot& b = bias(bottom, l);
  return {w.offset, b.offset + b.elements() - w.offset};
}

DenseLayout dense_layout(const ModelShape& shape) {
  DenseLayout layout;
  layout.bottom_layers = shape.bottom_mlp.size();
  layout.top_layers = shape.top_mlp.size();
  const int64_t interaction =
      kernels::cpu::interaction_output_width(static_cast<int>(shape.table_sizes.size()), shape.embed_dim);
  const auto add = [&](const std::string& name, int64_t rows, int64_t cols, int64_t ld) {
    DenseSlot slot{name, layout.count, rows, cols, ld};
    layout.count += slot.elements();
    layout.slots.push_back(std::move(slot));
  };
  for (bool bottom : {true, false}) {
    const std::vector<int>& widths = bottom ? shape.bottom_mlp : shape.top_mlp;
    // Each MLP's first weight has zero columns up to its padded input.
    int64_t in = bottom ? shape.num_dense : interaction;
    int64_t ld = bottom ? bottom_input_width(shape) : top_input_width(shape);
    for (size_t l = 0; l < widths.size(); ++l) {
      const std::string name = fmt::format("{}.{}", bottom ? "bottom" : "top", l);
      add(name + ".weight", widths[l], in, ld);
      add(name + ".bias", 1, widths[l], widths[l]);
      in = ld = widths[l];
    }
  }

  // Its own rules, checked here so a change that breaks one fails on the
  // CPU (dense_layout_test) instead of in CudaModel's constructor on a GPU.
  int64_t next = 0;
  for (const DenseSlot& s : layout.slots) {
    if (s.offset != next || s.offset % kDenseSlotAlignment != 0 || s.ld < s.cols || s.cols < 1) {
      throw std::logic_error(fmt::format("dense_layout: {} at {} breaks the layout", s.name, s.offset));
    }
    next = s.offset + s.elements();
  }
  for (bool bottom : {true, false}) {
    for (size_t l = 0; l < (bottom ? layout.bottom_layers : layout.top_layers); ++l) {
      if (layout.bias(bottom, l).offset != layout.weight(bottom, l).offset + layout.weight(bottom, l).elements()) {
        throw std::logic_error(fmt::format("dense_layout: {} does not follow its weight", layout.bias(bottom, l).name));
      }
    }
  }
  if (next != layout.count) throw std::logic_error("dense_layout: the slots do not cover the buffers");
  // The fused head's update takes the buffers' tail from its weight on.
  if (layout.top_layers > 0) {
    const DenseRange last = layout.layer(false, layout.top_layers - 1);
    if (last.first + last.count != layout.count) throw std::logic_error("dense_layout: the last layer is not the tail");
  }
  return layout;
}

std::vector<float> pack_dense(const DenseLayout& layout, const std::vector<DenseParameter>& params) {
  if (params.size() != layout.slots.size()) {
    throw Error(fmt::format("dlrm: the model has {} dense tensors, the layout {}", params.size(), layout.slots.size()));
  }
  std::vector<float> flat(static_cast<size_t>(layout.count), 0.0f);
  for (size_t i = 0; i < params.size(); ++i) {
    const DenseSlot& slot = layout.slots[i];
    if (params[i].name != slot.name || params[i].size != slot.values()) {
      throw Error(fmt::format("dlrm: {} holds {} values, not {}'s {} x {}", params[i].name, params[i].size, slot.name,
                              slot.rows, slot.cols));
    }
    for (int64_t r = 0; r < slot.rows; ++r) {
      std::copy(params[i].value + r * slot.cols, params[i].value + (r + 1) * slot.cols,
                flat.begin() + slot.offset + r * slot.ld);
    }
  }
  return flat;
}

}  // namespace perflab::dlrm
