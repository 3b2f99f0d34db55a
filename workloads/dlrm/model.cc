// The DLRM model on the CPU: parameter layout, seeded initialisation, and the
// forward, backward and SGD passes built from the kernels in kernels/cpu.
#include "workloads/dlrm/model.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>
#include <utility>

#include "base/error.h"
#include "kernels/cpu/bce.h"
#include "kernels/cpu/bf16.h"
#include "kernels/cpu/embedding.h"
#include "kernels/cpu/interaction.h"
#include "kernels/cpu/linear.h"
#include "workloads/dlrm/init_random.h"

namespace perflab::dlrm {
namespace {

namespace k = perflab::kernels::cpu;

// ---- Counter-based random numbers (init_random.h: the device draws the
// same tables) --------------------------------------------------------------

using init_random::kBottomStream;
using init_random::kRoundingStream;
using init_random::kTopStream;
using init_random::stream_key;
using init_random::uniform01;

constexpr double kTwoPi = 6.283185307179586476925286766559;

/// Fills values[0, n) with N(0, stddev²) by Box-Muller on counters 2i, 2i+1.
void fill_normal(uint64_t key, double stddev, float* values, int64_t n) {
#pragma omp parallel for schedule(static)
  for (int64_t i = 0; i < n; ++i) {
    const uint64_t c = 2 * static_cast<uint64_t>(i);
    const double radius = std::sqrt(-2.0 * std::log(uniform01(key, c)));
    values[i] = static_cast<float>(stddev * radius * std::cos(kTwoPi * uniform01(key, c + 1)));
  }
}

/// Fills values[0, n) with U(-bound, bound) (init_random::table_value).
void fill_uniform(uint64_t key, double bound, float* values, int64_t n) {
#pragma omp parallel for schedule(static)
  for (int64_t i = 0; i < n; ++i) values[i] = init_random::table_value(key, bound, static_cast<uint64_t>(i));
}

void check_shape(const ModelShape& shape) {
  auto fail = [](const std::string& what) { throw UsageError("DLRM model shape: " + what); };
  if (shape.num_dense < 1) fail("num_dense must be at least 1");
  if (shape.embed_dim < 1) fail("embed_dim must be at least 1");
  if (shape.bottom_mlp.empty() || shape.bottom_mlp.back() != shape.embed_dim) {
    fail("the bottom MLP's last width must equal embed_dim");
  }
  if (shape.top_mlp.empty() || shape.top_mlp.back() != 1) {
    fail("the top MLP's last width must be 1");
  }
  for (const auto* widths : {&shape.bottom_mlp, &shape.top_mlp}) {
    for (int width : *widths) {
      if (width < 1) fail("every MLP width must be at least 1");
    }
  }
  constexpr int64_t kMaxRows = int64_t{std::numeric_limits<int32_t>::max()} + 1;
  for (int64_t rows : shape.table_sizes) {
    if (rows < 1 || rows > kMaxRows) fail("table sizes must be in [1, 2^31]");
  }
}

template <typename T>
void grow(std::vector<T>& buffer, int64_t rows, int64_t width) {
  // resize keeps the leading rows, so pending gradients survive growth.
  buffer.resize(static_cast<size_t>(rows * width));
}

}  // namespace

void initialise_table(uint64_t seed, int table, int64_t rows, int64_t dim, float* values) {
  fill_uniform(init_random::table_key(seed, table), init_random::table_bound(rows), values, rows * dim);
}

CpuModel::CpuModel(ModelShape shape, uint64_t seed, EmbeddingStorage storage, CpuPrecision precision)
    : shape_(std::move(shape)), storage_(storage), precision_(precision) {
  check_shape(shape_);
  num_tables_ = static_cast<int>(shape_.table_sizes.size());
  interaction_width_ = k::interaction_output_width(num_tables_, shape_.embed_dim);
  build_layers(shape_.bottom_mlp, shape_.num_dense, /*relu_on_last=*/true, bottom_);
  build_layers(shape_.top_mlp, interaction_width_, /*relu_on_last=*/false, top_);
  dense_grad_.assign(dense_.size(), 0.0f);
  if (storage_ == EmbeddingStorage::kTables) {
    tables_.resize(static_cast<size_t>(num_tables_));
    for (int t = 0; t < num_tables_; ++t) {
      tables_[t].resize(static_cast<size_t>(shape_.table_sizes[t] * shape_.embed_dim));
      table_rows_.push_back(tables_[t].data());
    }
  }
  bottom_act_.resize(bottom_.size());
  bottom_grad_.resize(bottom_.size());
  top_act_.resize(top_.size());
  top_grad_.resize(top_.size());
  initialise(seed);
}

void CpuModel::build_layers(const std::vector<int>& widths, int64_t in, bool relu_on_last,
                            std::vector<Layer>& layers) {
  for (size_t l = 0; l < widths.size(); ++l) {
    Layer layer;
    layer.in = in;
    layer.out = widths[l];
    layer.relu = relu_on_last || l + 1 < widths.size();
    layer.weight = static_cast<int64_t>(dense_.size());
    layer.bias = layer.weight + layer.out * layer.in;
    dense_.resize(static_cast<size_t>(layer.bias + layer.out));
    layers.push_back(layer);
    in = layer.out;
  }
}

void CpuModel::initialise(uint64_t seed) {
  const auto init_mlp = [&](const std::vector<Layer>& layers, uint64_t stream) {
    for (size_t l = 0; l < layers.size(); ++l) {
      const Layer& layer = layers[l];
      const double in = static_cast<double>(layer.in);
      const double out = static_cast<double>(layer.out);
      fill_normal(stream_key(seed, stream + 2 * l), std::sqrt(2.0 / (in + out)),
                  dense_.data() + layer.weight, layer.out * layer.in);
      fill_normal(stream_key(seed, stream + 2 * l + 1), std::sqrt(1.0 / out),
                  dense_.data() + layer.bias, layer.out);
    }
  };
  init_mlp(bottom_, kBottomStream);
  init_mlp(top_, kTopStream);
  for (size_t t = 0; t < tables_.size(); ++t) {
    initialise_table(seed, static_cast<int>(t), shape_.table_sizes[t], shape_.embed_dim, tables_[t].data());
    store(tables_[t].data(), static_cast<int64_t>(tables_[t].size()));
  }
  if (bf16()) {
    dense_bf16_.resize(dense_.size());
    k::round_to_bf16(static_cast<int64_t>(dense_.size()), dense_.data(), dense_bf16_.data());
    rounding_key_ = stream_key(seed, kRoundingStream);
  }
}

void CpuModel::store(float* v, int64_t n) const {
  if (bf16()) k::round_to_bf16(n, v, v);
}

const float* CpuModel::gemm_weights(const Layer& layer) const {
  return (bf16() ? dense_bf16_.data() : dense_.data()) + layer.weight;
}

void CpuModel::reserve_batch(int64_t batch_size) {
  if (batch_size <= capacity_) return;
  capacity_ = batch_size;
  for (size_t l = 0; l < bottom_.size(); ++l) {
    grow(bottom_act_[l], capacity_, bottom_[l].out);
    grow(bottom_grad_[l], capacity_, bottom_[l].out);
  }
  for (size_t l = 0; l < top_.size(); ++l) {
    grow(top_act_[l], capacity_, top_[l].out);
    grow(top_grad_[l], capacity_, top_[l].out);
  }
  const int64_t emb_width = num_tables_ * int64_t{shape_.embed_dim};
  grow(emb_out_, capacity_, emb_width);
  grow(emb_grad_, capacity_, emb_width);
  grow(interaction_, capacity_, interaction_width_);
  grow(interaction_grad_, capacity_, interaction_width_);
  grow(ids_, capacity_, num_tables_);
  if (bf16()) grow(dense_input_, capacity_, shape_.num_dense);
}

void CpuModel::check_batch(const BatchView& batch) const {
  if (batch.size < 1) throw UsageError("DLRM batch is empty");
  for (int64_t b = 0; b < batch.size; ++b) {
    for (int t = 0; t < num_tables_; ++t) {
      const int32_t id = batch.categorical[b * num_tables_ + t];
      if (id < 0 || id >= shape_.table_sizes[t]) {
        throw UsageError("DLRM batch: id " + std::to_string(id) + " of sample " +
                         std::to_string(b) + " is outside table " + std::to_string(t) + " of " +
                         std::to_string(shape_.table_sizes[t]) + " rows");
      }
    }
  }
}

void CpuModel::forward(const BatchView& batch, const int32_t* ids) {
  const k::EmbeddingShape emb_shape{batch.size, num_tables_, shape_.embed_dim};
  k::embedding_forward(emb_shape, table_rows_.data(), ids, emb_out_.data());
  forward_dense(batch);
}

void CpuModel::bottom_forward(const BatchView& batch) {
  const int64_t n = batch.size;
  const float* input = batch.dense;
  if (bf16()) {
    k::round_to_bf16(n * shape_.num_dense, batch.dense, dense_input_.data());
    input = dense_input_.data();
  }
  for (size_t l = 0; l < bottom_.size(); ++l) {
    const Layer& layer = bottom_[l];
    float* y = bottom_act_[l].data();
    k::linear_relu_forward({n, layer.in, layer.out}, input, gemm_weights(layer),
                           dense_.data() + layer.bias, y);
    store(y, n * layer.out);
    input = y;
  }
}

void CpuModel::forward_bottom_external(const BatchView& batch) {
  if (batch.size < 1) throw UsageError("DLRM batch is empty");
  reserve_batch(batch.size);
  bottom_forward(batch);
  bottom_ready_ = batch.size;
}

void CpuModel::forward_dense(const BatchView& batch) {
  if (bottom_ready_ != batch.size) bottom_forward(batch);
  bottom_ready_ = 0;
  const int64_t n = batch.size;
  k::interaction_forward({n, num_tables_, shape_.embed_dim}, bottom_act_.back().data(), emb_out_.data(),
                         interaction_.data());
  store(interaction_.data(), n * interaction_width_);
  const float* input = interaction_.data();
  for (size_t l = 0; l < top_.size(); ++l) {
    const Layer& layer = top_[l];
    float* y = top_act_[l].data();
    if (layer.relu) {
      k::linear_relu_forward({n, layer.in, layer.out}, input, gemm_weights(layer),
                             dense_.data() + layer.bias, y);
    } else {
      k::linear_forward({n, layer.in, layer.out}, input, gemm_weights(layer),
                        dense_.data() + layer.bias, y);
    }
    store(y, n * layer.out);  // the logits too: the bf16 GEMM writes bf16
    input = y;
  }
}

void CpuModel::backward(const BatchView& batch) {
  const int64_t n = batch.size;
  // Top MLP, last layer first; dlogit is already in top_grad_.back(). In
  // bf16 every gradient a GEMM reads is stored bf16 (dlogit here, each dx
  // as it is written).
  store(top_grad_.back().data(), n);
  for (size_t l = top_.size(); l-- > 0;) {
    const Layer& layer = top_[l];
    float* dy = top_grad_[l].data();
    const float* x = l > 0 ? top_act_[l - 1].data() : interaction_.data();
    float* dx = l > 0 ? top_grad_[l - 1].data() : interaction_grad_.data();
    if (layer.relu) {
      k::linear_relu_backward({n, layer.in, layer.out}, x, gemm_weights(layer), top_act_[l].data(), dy,
                              dx, dense_grad_.data() + layer.weight, dense_grad_.data() + layer.bias);
    } else {
      k::linear_backward({n, layer.in, layer.out}, x, gemm_weights(layer), dy, dx,
                         dense_grad_.data() + layer.weight, dense_grad_.data() + layer.bias);
    }
    store(dx, n * layer.in);
  }
  k::interaction_backward({n, num_tables_, shape_.embed_dim}, bottom_act_.back().data(),
                          emb_out_.data(), interaction_grad_.data(), bottom_grad_.back().data(),
                          emb_grad_.data());
  store(bottom_grad_.back().data(), n * shape_.embed_dim);
  store(emb_grad_.data(), n * num_tables_ * shape_.embed_dim);
  for (size_t l = bottom_.size(); l-- > 0;) {
    const Layer& layer = bottom_[l];
    const float* x = l > 0 ? bottom_act_[l - 1].data() : (bf16() ? dense_input_.data() : batch.dense);
    float* dx = l > 0 ? bottom_grad_[l - 1].data() : nullptr;  // no gradient for the data
    k::linear_relu_backward({n, layer.in, layer.out}, x, gemm_weights(layer), bottom_act_[l].data(),
                            bottom_grad_[l].data(), dx, dense_grad_.data() + layer.weight,
                            dense_grad_.data() + layer.bias);
    if (dx != nullptr) store(dx, n * layer.in);
  }
}

double CpuModel::train_step(const BatchView& batch, float learning_rate) {
  const double loss = forward_backward(batch);
  apply_gradients(learning_rate);
  return loss;
}

void CpuModel::require_tables(const char* call) const {
  if (storage_ != EmbeddingStorage::kTables) {
    throw std::logic_error(std::string("CpuModel::") + call + ": the model holds no tables (external embeddings)");
  }
}

double CpuModel::forward_backward(const BatchView& batch) {
  require_tables("forward_backward");
  check_batch(batch);
  reserve_batch(batch.size);
  // Keep the ids: apply_gradients needs them after the caller's batch is gone.
  std::copy(batch.categorical, batch.categorical + batch.size * num_tables_, ids_.begin());
  pending_batch_ = 0;
  forward(batch, ids_.data());
  const double loss =
      k::bce_with_logits(batch.size, top_act_.back().data(), batch.labels, top_grad_.back().data());
  backward(batch);
  pending_batch_ = batch.size;
  return loss;
}

float* CpuModel::embeddings_buffer(int64_t batch_size) {
  reserve_batch(batch_size);
  return emb_out_.data();
}

double CpuModel::forward_backward_external(const BatchView& batch, double gradient_scale) {
  if (batch.size < 1) throw UsageError("DLRM batch is empty");
  if (batch.size > capacity_) throw std::logic_error("CpuModel::forward_backward_external: embeddings not filled");
  pending_batch_ = 0;
  forward_dense(batch);
  float* dlogit = top_grad_.back().data();
  const double loss = k::bce_with_logits(batch.size, top_act_.back().data(), batch.labels, dlogit);
  const auto scale = static_cast<float>(gradient_scale);
  for (int64_t i = 0; i < batch.size; ++i) dlogit[i] *= scale;
  backward(batch);
  pending_batch_ = batch.size;
  return loss;
}

void CpuModel::apply_dense_gradients(float learning_rate) {
  if (pending_batch_ == 0) throw std::logic_error("CpuModel::apply_dense_gradients: no gradients");
  float* values = dense_.data();
  const float* grads = dense_grad_.data();
  const int64_t size = static_cast<int64_t>(dense_.size());
#pragma omp parallel for simd schedule(static)
  for (int64_t i = 0; i < size; ++i) values[i] -= learning_rate * grads[i];
  if (bf16()) k::round_to_bf16(size, values, dense_bf16_.data());
  pending_batch_ = 0;
}

void CpuModel::dense_parameters_changed() {
  if (bf16()) k::round_to_bf16(static_cast<int64_t>(dense_.size()), dense_.data(), dense_bf16_.data());
}

void CpuModel::predict_external(const BatchView& batch, float* probabilities) {
  if (batch.size < 1) throw UsageError("DLRM batch is empty");
  if (batch.size > capacity_) throw std::logic_error("CpuModel::predict_external: embeddings not filled");
  forward_dense(batch);
  k::sigmoid(batch.size, top_act_.back().data(), probabilities);
}

void CpuModel::apply_gradients(float learning_rate) {
  require_tables("apply_gradients");
  if (pending_batch_ == 0) throw std::logic_error("CpuModel::apply_gradients: no gradients");
  const int64_t pending = pending_batch_;
  apply_dense_gradients(learning_rate);
  k::RowRounding rounding;
  if (bf16()) rounding = {true, rounding_key_, updates_++};
  k::embedding_sgd_update({pending, num_tables_, shape_.embed_dim}, table_rows_.data(),
                          ids_.data(), emb_grad_.data(), learning_rate, update_scratch_, rounding);
}

void CpuModel::predict(const BatchView& batch, float* probabilities) {
  require_tables("predict");
  check_batch(batch);
  reserve_batch(batch.size);
  forward(batch, batch.categorical);
  k::sigmoid(batch.size, top_act_.back().data(), probabilities);
}

namespace {

struct ModelCost {
  double multiply_adds = 0;  // per sample, forward
  int64_t parameters = 0;
  int64_t dense_parameters = 0;  // the MLPs' weights and biases
};

/// Adds an MLP with the given widths on `in` inputs to `cost`.
void add_mlp(const std::vector<int>& widths, int64_t in, ModelCost& cost) {
  for (int out : widths) {
    cost.multiply_adds += static_cast<double>(in) * out;
    cost.parameters += in * out + out;
    cost.dense_parameters += in * out + out;
    in = out;
  }
}

ModelCost model_cost(const ModelShape& shape) {
  ModelCost cost;
  const auto tables = static_cast<int>(shape.table_sizes.size());
  add_mlp(shape.bottom_mlp, shape.num_dense, cost);
  add_mlp(shape.top_mlp, kernels::cpu::interaction_output_width(tables, shape.embed_dim), cost);
  const double features = tables + 1.0;
  cost.multiply_adds += features * (features - 1.0) / 2.0 * shape.embed_dim;
  for (int64_t rows : shape.table_sizes) cost.parameters += rows * shape.embed_dim;
  return cost;
}

}  // namespace

int64_t parameter_count(const ModelShape& shape) { return model_cost(shape).parameters; }

int64_t dense_parameter_count(const ModelShape& shape) { return model_cost(shape).dense_parameters; }

double forward_flops_per_sample(const ModelShape& shape) {
  return 2.0 * model_cost(shape).multiply_adds;
}

double training_flops_per_iteration(const ModelShape& shape, int64_t batch) {
  return 3.0 * forward_flops_per_sample(shape) * static_cast<double>(batch);
}

double training_bytes_floor_per_iteration(const ModelShape& shape, int64_t batch, int value_bytes) {
  const auto tables = static_cast<double>(shape.table_sizes.size());
  const auto dense_params = static_cast<double>(model_cost(shape).dense_parameters);
  const auto b = static_cast<double>(batch);
  const double embeddings = 3.0 * b * tables * shape.embed_dim * value_bytes;
  const double dense = 4.0 * dense_params * value_bytes;
  const double inputs = b * (shape.num_dense + tables + 1.0) * 4.0;
  return embeddings + dense + inputs;
}

std::vector<DenseParameter> CpuModel::dense_parameters() {
  std::vector<DenseParameter> params;
  const auto add = [&](const std::string& prefix, const std::vector<Layer>& layers) {
    for (size_t l = 0; l < layers.size(); ++l) {
      const Layer& layer = layers[l];
      const std::string name = prefix + "." + std::to_string(l);
      params.push_back({name + ".weight", dense_.data() + layer.weight,
                        dense_grad_.data() + layer.weight, layer.out * layer.in});
      params.push_back(
          {name + ".bias", dense_.data() + layer.bias, dense_grad_.data() + layer.bias, layer.out});
    }
  };
  add("bottom", bottom_);
  add("top", top_);
  return params;
}

float* CpuModel::embedding_row(int table, int64_t row) {
  require_tables("embedding_row");
  return tables_.at(static_cast<size_t>(table)).data() + row * shape_.embed_dim;
}

void CpuModel::embedding_row_gradient(int table, int64_t row, float* gradient,
                                      float* magnitude) const {
  require_tables("embedding_row_gradient");
  const int64_t dim = shape_.embed_dim;
  std::fill(gradient, gradient + dim, 0.0f);
  if (magnitude != nullptr) std::fill(magnitude, magnitude + dim, 0.0f);
  for (int64_t b = 0; b < pending_batch_; ++b) {
    const int64_t slot = b * num_tables_ + table;
    if (ids_[slot] != row) continue;
    for (int64_t d = 0; d < dim; ++d) gradient[d] += emb_grad_[slot * dim + d];
    if (magnitude != nullptr) {
      for (int64_t d = 0; d < dim; ++d) magnitude[d] += std::abs(emb_grad_[slot * dim + d]);
    }
  }
}

}  // namespace perflab::dlrm
