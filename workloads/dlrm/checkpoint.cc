#include "workloads/dlrm/checkpoint.h"

#include <fmt/format.h>

#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/error.h"
#include "harness/atomic_file.h"

namespace perflab::dlrm {

namespace {

constexpr const char* kMagic = "perflab-dlrm-checkpoint 1";

const char* precision_name(CpuPrecision p) { return p == CpuPrecision::kBf16 ? "bf16" : "fp32"; }

int64_t table_floats(const ModelShape& shape) {
  int64_t rows = 0;
  for (int64_t r : shape.table_sizes) rows += r;
  return rows * shape.embed_dim;
}

nlohmann::json shape_json(const ModelShape& s) {
  return {{"num_dense", s.num_dense}, {"table_sizes", s.table_sizes}, {"embed_dim", s.embed_dim},
          {"bottom_mlp", s.bottom_mlp}, {"top_mlp", s.top_mlp}};
}

void append(std::string& out, const float* values, int64_t n) {
  out.append(reinterpret_cast<const char*>(values), static_cast<size_t>(n) * sizeof(float));
}

}  // namespace

std::filesystem::path checkpoint_path(const std::string& pattern, uint64_t seed) {
  std::string out = pattern;
  const std::string seed_text = std::to_string(seed);
  for (size_t at = out.find("{seed}"); at != std::string::npos; at = out.find("{seed}", at + seed_text.size())) {
    out.replace(at, 6, seed_text);
  }
  return out;
}

void save_checkpoint(CpuModel& model, uint64_t seed, const std::filesystem::path& path) {
  const ModelShape& shape = model.shape();
  const std::vector<DenseParameter> dense = model.dense_parameters();
  int64_t dense_floats = 0;
  for (const DenseParameter& p : dense) dense_floats += p.size;
  const nlohmann::json header = {{"shape", shape_json(shape)},
                                 {"precision", precision_name(model.precision())},
                                 {"seed", seed},
                                 {"dense_floats", dense_floats},
                                 {"table_floats", table_floats(shape)}};
  std::string out = std::string(kMagic) + "\n" + header.dump() + "\n";
  out.reserve(out.size() + static_cast<size_t>(dense_floats + table_floats(shape)) * sizeof(float));
  for (const DenseParameter& p : dense) append(out, p.value, p.size);
  for (size_t t = 0; t < shape.table_sizes.size(); ++t) {
    append(out, model.embedding_row(static_cast<int>(t), 0), shape.table_sizes[t] * shape.embed_dim);
  }
  std::filesystem::create_directories(path.has_parent_path() ? path.parent_path() : std::filesystem::path("."));
  write_file_atomically(path, out);
}

namespace {

UsageError bad_checkpoint(const std::filesystem::path& path, const std::string& why) {
  return UsageError(fmt::format("dlrm: serve_model={}: {}", path.string(), why));
}

/// Opens the checkpoint and checks its header against a model of `shape`
/// in `precision`; the stream is left at the first parameter.
std::ifstream open_checkpoint(const std::filesystem::path& path, const ModelShape& shape, CpuPrecision precision,
                              int64_t dense_floats) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw bad_checkpoint(path, "cannot be read (write one with save_model=PATH in a training run)");
  std::string magic, header_line;
  if (!std::getline(in, magic) || magic != kMagic) throw bad_checkpoint(path, "not a perflab DLRM checkpoint");
  if (!std::getline(in, header_line)) throw bad_checkpoint(path, "cut short (no header)");
  nlohmann::json header;
  try {
    header = nlohmann::json::parse(header_line);
  } catch (const nlohmann::json::exception&) {
    throw bad_checkpoint(path, "its header is not JSON");
  }
  if (!header.is_object()) throw bad_checkpoint(path, "its header is not a JSON object");
  const nlohmann::json want = shape_json(shape);
  const nlohmann::json got = header.value("shape", nlohmann::json::object());
  for (const auto& [key, value] : want.items()) {
    if (!got.is_object() || !got.contains(key) || got.at(key) != value) {
      throw bad_checkpoint(path, fmt::format("the checkpoint's {} is {}, this model's is {}: it does not match the model",
                                             key, got.is_object() && got.contains(key) ? got.at(key).dump() : "missing",
                                             value.dump()));
    }
  }
  const nlohmann::json trained = header.value("precision", nlohmann::json("?"));
  if (trained != precision_name(precision)) {
    throw bad_checkpoint(path, fmt::format("trained in {}, served in {}: set precision to match", trained.dump(),
                                           precision_name(precision)));
  }
  if (header.value("dense_floats", nlohmann::json(-1)) != dense_floats ||
      header.value("table_floats", nlohmann::json(-1)) != table_floats(shape)) {
    throw bad_checkpoint(path, "its parameter counts do not match the model");
  }
  // Its length too, so a cut-short file is refused when the run is set up.
  std::error_code ec;
  const auto size = static_cast<double>(std::filesystem::file_size(path, ec));
  const double expected =
      static_cast<double>(in.tellg()) + static_cast<double>(dense_floats + table_floats(shape)) * sizeof(float);
  if (!ec && size < expected) throw bad_checkpoint(path, "cut short (fewer parameters than its header says)");
  if (!ec && size > expected) throw bad_checkpoint(path, "longer than its header says");
  return in;
}

}  // namespace

void check_checkpoint(const std::filesystem::path& path, const ModelShape& shape, CpuPrecision precision) {
  open_checkpoint(path, shape, precision, dense_parameter_count(shape));
}

void load_checkpoint(const std::filesystem::path& path, CpuModel& model) {
  const ModelShape& shape = model.shape();
  const std::vector<DenseParameter> dense = model.dense_parameters();
  int64_t dense_floats = 0;
  for (const DenseParameter& p : dense) dense_floats += p.size;
  std::ifstream in = open_checkpoint(path, shape, model.precision(), dense_floats);
  auto read = [&](float* dst, int64_t n) {
    const auto bytes = static_cast<std::streamsize>(n) * static_cast<std::streamsize>(sizeof(float));
    in.read(reinterpret_cast<char*>(dst), bytes);
    if (in.gcount() != bytes) throw bad_checkpoint(path, "cut short (fewer parameters than its header says)");
  };
  for (const DenseParameter& p : dense) read(p.value, p.size);
  for (size_t t = 0; t < shape.table_sizes.size(); ++t) {
    read(model.embedding_row(static_cast<int>(t), 0), shape.table_sizes[t] * shape.embed_dim);
  }
  if (in.peek() != std::char_traits<char>::eof()) throw bad_checkpoint(path, "longer than its header says");
  model.dense_parameters_changed();
}

}  // namespace perflab::dlrm
