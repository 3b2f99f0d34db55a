// Criteo TSV -> split_binary conversion (buffered column writers, atomic
// rename into place) and the validating split loader.
#include "workloads/dlrm/data/binary_dataset.h"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <map>
#include <memory>
#include <type_traits>

#include "base/error.h"
#include "harness/input_file.h"
#include "harness/interrupt.h"
#include "workloads/dlrm/data/criteo_tsv.h"
#include "workloads/dlrm/data/feature_spec.h"

static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__, "binary files are little-endian");

namespace perflab::dlrm {
namespace fs = std::filesystem;
namespace {

constexpr int64_t kFlushRows = 1 << 16;

/// An output file that throws Error on any failure.
class OutFile {
 public:
  explicit OutFile(fs::path path) : path_(std::move(path)) {
    file_ = std::fopen(path_.c_str(), "wb");
    if (file_ == nullptr) fail("cannot create");
  }
  ~OutFile() {
    if (file_ != nullptr) std::fclose(file_);
  }
  OutFile(const OutFile&) = delete;
  OutFile& operator=(const OutFile&) = delete;
  void write(const void* data, size_t bytes) {
    if (bytes > 0 && std::fwrite(data, 1, bytes, file_) != bytes) fail("write failed");
  }
  void close() {
    const int rc = std::fclose(file_);
    file_ = nullptr;
    if (rc != 0) fail("write failed");
  }

 private:
  [[noreturn]] void fail(const char* what) const {
    throw Error(fmt::format("{}: {}: {}", path_.string(), what, std::strerror(errno)));
  }
  fs::path path_;
  std::FILE* file_ = nullptr;
};

/// Appends elements of `dtype` holding `values` to `bytes`.
void encode_ids(const std::vector<int32_t>& values, Dtype dtype, std::vector<char>& bytes) {
  const size_t size = static_cast<size_t>(dtype_size(dtype));
  bytes.resize(values.size() * size);
  for (size_t i = 0; i < values.size(); ++i) {
    if (dtype == Dtype::kInt8) {
      const auto v = static_cast<int8_t>(values[i]);
      std::memcpy(&bytes[i * size], &v, size);
    } else if (dtype == Dtype::kInt16) {
      const auto v = static_cast<int16_t>(values[i]);
      std::memcpy(&bytes[i * size], &v, size);
    } else {
      std::memcpy(&bytes[i * size], &values[i], size);
    }
  }
}

/// Writes one split's label.bin, numerical.bin and cat_<i>.bin, buffering
/// kFlushRows rows per column.
class SplitWriter {
 public:
  SplitWriter(const fs::path& dir, Dtype categorical_dtype)
      : categorical_dtype_(categorical_dtype),
        label_file_(dir / "label.bin"),
        numerical_file_(dir / "numerical.bin"),
        ids_(kCriteoNumCategorical) {
    for (int t = 0; t < kCriteoNumCategorical; ++t) {
      categorical_files_.push_back(std::make_unique<OutFile>(dir / fmt::format("cat_{}.bin", t)));
    }
  }
  void add(const CriteoRow& row) {
    labels_.push_back(static_cast<int8_t>(row.label));
    dense_.insert(dense_.end(), row.dense.begin(), row.dense.end());
    for (int t = 0; t < kCriteoNumCategorical; ++t) ids_[t].push_back(row.categorical[t]);
    if (static_cast<int64_t>(labels_.size()) == kFlushRows) flush();
    ++rows_;
  }
  void close() {
    flush();
    label_file_.close();
    numerical_file_.close();
    for (auto& file : categorical_files_) file->close();
  }
  int64_t rows() const { return rows_; }

 private:
  void flush() {
    label_file_.write(labels_.data(), labels_.size());
    numerical_file_.write(dense_.data(), dense_.size() * sizeof(float));
    for (int t = 0; t < kCriteoNumCategorical; ++t) {
      encode_ids(ids_[t], categorical_dtype_, bytes_);
      categorical_files_[t]->write(bytes_.data(), bytes_.size());
      ids_[t].clear();
    }
    labels_.clear();
    dense_.clear();
  }

  Dtype categorical_dtype_;
  OutFile label_file_, numerical_file_;
  std::vector<std::unique_ptr<OutFile>> categorical_files_;
  std::vector<int8_t> labels_;
  std::vector<float> dense_;
  std::vector<std::vector<int32_t>> ids_;
  std::vector<char> bytes_;
  int64_t rows_ = 0;
};

/// Moves the bytes of `from` past `keep` into a new file `to`, then truncates `from`.
void move_tail(const fs::path& from, const fs::path& to, uint64_t keep) {
  std::FILE* in = std::fopen(from.c_str(), "rb");
  if (in == nullptr || std::fseek(in, static_cast<long>(keep), SEEK_SET) != 0) {
    if (in != nullptr) std::fclose(in);
    throw Error(fmt::format("{}: cannot read: {}", from.string(), std::strerror(errno)));
  }
  OutFile out(to);
  std::vector<char> buffer(size_t{1} << 20);
  size_t n = 0;
  while ((n = std::fread(buffer.data(), 1, buffer.size(), in)) > 0) out.write(buffer.data(), n);
  const bool failed = std::ferror(in) != 0;
  std::fclose(in);
  if (failed) throw Error(fmt::format("{}: read failed", from.string()));
  out.close();
  fs::resize_file(from, keep);
}

void check_options(const ConvertOptions& o) {
  if (o.train_paths.empty()) throw UsageError("convert: no train TSV files given");
  if (o.output_dir.empty()) throw UsageError("convert: no output directory given");
  if (!o.test_path.empty() && o.eval_fraction != 0) {
    throw UsageError("convert: give either a test TSV file or an eval fraction, not both");
  }
  if (o.test_path.empty() && !(o.eval_fraction > 0 && o.eval_fraction < 1)) {
    throw UsageError(fmt::format(
        "convert: eval fraction {} outside (0, 1) and no test TSV file given", o.eval_fraction));
  }
  if (o.table_size < 2 || o.table_size >= INT32_MAX) {
    throw UsageError(fmt::format("convert: table size {} outside [2, 2^31 - 1)", o.table_size));
  }
  const fs::path out = o.output_dir;
  if (fs::exists(out)) {
    if (!fs::is_directory(out)) {
      throw UsageError(fmt::format("convert: {} exists and is not a directory", o.output_dir));
    }
    if (!fs::is_empty(out) && !o.overwrite) {
      throw UsageError(
          fmt::format("convert: output directory {} is not empty (allow overwriting to replace it)",
                      o.output_dir));
    }
  }
}

/// Writes everything into `dir`; returns the summary (spec_path still unset).
ConvertSummary convert_into(const ConvertOptions& o, const fs::path& dir) {
  const std::vector<int64_t> sizes(kCriteoNumCategorical, o.table_size);
  FeatureSpec spec = default_feature_spec(kCriteoNumDense, sizes);
  spec.metadata = {{"generator", "perflab convert_criteo_tsv"},
                   {"dense_transform", "log(max(x, 0) + 1), missing = 0"},
                   {"categorical_ids", "hex value % (table_size - 1) + 1, missing = 0"},
                   {"table_size", std::to_string(o.table_size)}};
  const Dtype dtype = categorical_dtype(o.table_size);
  ConvertSummary summary;
  summary.table_sizes = sizes;
  summary.categorical_dtype = dtype_name(dtype);

  fs::create_directory(dir / "train");
  fs::create_directory(dir / "test");
  CriteoRow row;
  SplitWriter train(dir / "train", dtype);
  for (const std::string& path : o.train_paths) {
    CriteoTsvReader reader(path, o.table_size);
    while (reader.next(row)) train.add(row);
  }
  train.close();
  summary.train_rows = train.rows();
  if (!o.test_path.empty()) {
    SplitWriter test(dir / "test", dtype);
    CriteoTsvReader reader(o.test_path, o.table_size);
    while (reader.next(row)) test.add(row);
    test.close();
    summary.test_rows = test.rows();
  } else {
    summary.test_rows =
        static_cast<int64_t>(static_cast<double>(summary.train_rows) * o.eval_fraction);
    summary.train_rows -= summary.test_rows;
    const auto keep = static_cast<uint64_t>(summary.train_rows);
    move_tail(dir / "train/label.bin", dir / "test/label.bin", keep);
    move_tail(dir / "train/numerical.bin", dir / "test/numerical.bin",
              keep * kCriteoNumDense * sizeof(float));
    for (int t = 0; t < kCriteoNumCategorical; ++t) {
      const std::string name = fmt::format("cat_{}.bin", t);
      move_tail(dir / "train" / name, dir / "test" / name,
                keep * static_cast<uint64_t>(dtype_size(dtype)));
    }
  }
  write_feature_spec(spec, (dir / "feature_spec.yaml").string());
  return summary;
}

// ---- Loading -----------------------------------------------------------------

enum class Channel { kLabel, kNumerical, kCategorical };

/// One split_binary file to read: its columns and where each goes.
struct FilePlan {
  std::string name;  // As the spec writes it, for messages.
  fs::path path;
  Dtype dtype = Dtype::kFloat32;
  Channel channel = Channel::kLabel;
  std::vector<int> targets;            // Per column: index into the channel.
  std::vector<int64_t> cardinalities;  // Per column, categorical only.
  int64_t rows = 0;
};

/// IEEE half-precision bits to float.
float half_to_float(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  const uint32_t exponent = (h >> 10) & 0x1fu, mantissa = h & 0x3ffu;
  if (exponent == 0) {  // Zero or subnormal: mantissa * 2^-24.
    const float magnitude = static_cast<float>(mantissa) * 0x1.0p-24f;
    return sign != 0 ? -magnitude : magnitude;
  }
  uint32_t bits = sign | (mantissa << 13);
  bits |= exponent == 0x1f ? 0x7f800000u : (exponent + 112) << 23;  // Inf/NaN, else rebias.
  float value = 0;
  std::memcpy(&value, &bits, sizeof(value));
  return value;
}

template <typename T>
double load_value(const char* bytes) {
  T value;
  std::memcpy(&value, bytes, sizeof(T));
  if constexpr (std::is_same_v<T, uint16_t>) {
    return half_to_float(value);  // uint16_t stands for float16 here.
  } else {
    return static_cast<double>(value);
  }
}

/// Reads `plan`'s file in blocks of whole rows into `data`, checking values.
template <typename T>
void read_file(const FilePlan& plan, const std::string& where, Dataset& data) {
  const size_t columns = plan.targets.size(), row_bytes = columns * sizeof(T);
  require_regular_file(plan.path);
  std::FILE* file = std::fopen(plan.path.c_str(), "rb");
  if (file == nullptr) throw Error(fmt::format("{}: cannot open {}", where, plan.name));
  std::unique_ptr<std::FILE, int (*)(std::FILE*)> closer(file, std::fclose);
  const size_t block_rows = std::max<size_t>(1, (size_t{1} << 20) / row_bytes);
  std::vector<char> buffer(block_rows * row_bytes);
  const int num_dense = data.num_dense, num_tables = data.num_tables();
  for (int64_t first = 0; first < plan.rows; first += static_cast<int64_t>(block_rows)) {
    const size_t rows =
        static_cast<size_t>(std::min<int64_t>(static_cast<int64_t>(block_rows), plan.rows - first));
    if (std::fread(buffer.data(), row_bytes, rows, file) != rows) {
      throw Error(fmt::format("{}: {}: read failed", where, plan.name));
    }
    for (size_t r = 0; r < rows; ++r) {
      const int64_t row = first + static_cast<int64_t>(r);
      for (size_t c = 0; c < columns; ++c) {
        const double value = load_value<T>(&buffer[r * row_bytes + c * sizeof(T)]);
        const int target = plan.targets[c];
        if (plan.channel == Channel::kNumerical) {
          data.dense[row * num_dense + target] = static_cast<float>(value);
        } else if (plan.channel == Channel::kLabel) {
          if (value != 0 && value != 1) {
            throw UsageError(fmt::format("{}: {}: row {}: label {} is not 0 or 1", where, plan.name,
                                         row, value));
          }
          data.labels[row] = static_cast<float>(value);
        } else {
          if (!(value >= 0 && value < static_cast<double>(plan.cardinalities[c]))) {
            throw UsageError(fmt::format("{}: {}: row {}: id {} outside [0, {})", where, plan.name,
                                         row, value, plan.cardinalities[c]));
          }
          data.categorical[row * num_tables + target] = static_cast<int32_t>(value);
        }
      }
    }
  }
}

bool dtype_allowed(Channel channel, Dtype dtype) {
  switch (channel) {
    case Channel::kLabel:
      return dtype == Dtype::kInt8 || dtype == Dtype::kBool;
    case Channel::kNumerical:
      return dtype == Dtype::kFloat32 || dtype == Dtype::kFloat16;
    case Channel::kCategorical:
      return dtype == Dtype::kInt8 || dtype == Dtype::kInt16 || dtype == Dtype::kInt32 ||
             dtype == Dtype::kInt64;
  }
  return false;
}

/// Turns the spec's chunks for `split` into checked file plans.
std::vector<FilePlan> plan_split(const FeatureSpec& spec, const fs::path& base,
                                 const std::string& split, const std::string& where) {
  auto fail = [&](const std::string& what) { throw UsageError(where + ": " + what); };
  if (spec.label_channel.size() != 1) fail("channel_spec.label must name exactly one feature");
  const auto chunks = spec.source_spec.find(split);
  if (chunks == spec.source_spec.end()) fail(fmt::format("no source_spec for split '{}'", split));
  std::map<std::string, std::pair<Channel, int>> channel_of;
  channel_of[spec.label_channel[0]] = {Channel::kLabel, 0};
  for (size_t j = 0; j < spec.numerical_channel.size(); ++j) {
    channel_of[spec.numerical_channel[j]] = {Channel::kNumerical, static_cast<int>(j)};
  }
  for (size_t t = 0; t < spec.categorical_channel.size(); ++t) {
    channel_of[spec.categorical_channel[t]] = {Channel::kCategorical, static_cast<int>(t)};
  }
  std::vector<FilePlan> plans;
  std::map<std::string, bool> covered;
  for (const SourceChunk& chunk : chunks->second) {
    if (chunk.type != "split_binary") {
      fail(fmt::format("chunk type '{}' unsupported (only split_binary)", chunk.type));
    }
    if (chunk.files.size() != 1 || chunk.features.empty()) {
      fail(fmt::format("a {} chunk needs exactly one file and at least one feature", split));
    }
    FilePlan plan;
    plan.name = chunk.files[0];
    plan.path = base / chunk.files[0];
    for (const std::string& feature : chunk.features) {
      const auto found = channel_of.find(feature);
      if (found == channel_of.end())
        fail(fmt::format("{}: '{}' is in no channel", plan.name, feature));
      if (covered[feature]) fail(fmt::format("{}: '{}' is stored twice", plan.name, feature));
      covered[feature] = true;
      const FeatureInfo& info = spec.features.at(feature);
      if (plan.targets.empty()) {
        plan.channel = found->second.first;
        plan.dtype = info.dtype;
      } else if (plan.channel != found->second.first || plan.dtype != info.dtype) {
        fail(fmt::format("{}: features of one file must share channel and dtype", plan.name));
      }
      if (!dtype_allowed(plan.channel, plan.dtype)) {
        fail(fmt::format("feature {}: dtype {} not supported for its channel", feature,
                         dtype_name(plan.dtype)));
      }
      plan.targets.push_back(found->second.second);
      plan.cardinalities.push_back(info.cardinality);
    }
    std::error_code error;
    const uintmax_t bytes = fs::file_size(plan.path, error);
    if (error) fail(fmt::format("{}: no such file", plan.name));
    const uintmax_t row_bytes = plan.targets.size() * static_cast<size_t>(dtype_size(plan.dtype));
    if (bytes % row_bytes != 0) {
      fail(fmt::format("{}: size {} bytes is not a multiple of its row size {}", plan.name, bytes,
                       row_bytes));
    }
    plan.rows = static_cast<int64_t>(bytes / row_bytes);
    if (!plans.empty() && plan.rows != plans[0].rows) {
      fail(fmt::format("{}: holds {} rows, but {} holds {}", plan.name, plan.rows, plans[0].name,
                       plans[0].rows));
    }
    plans.push_back(std::move(plan));
  }
  for (const auto& [feature, channel] : channel_of) {
    if (!covered[feature])
      fail(fmt::format("split '{}' has no file for feature '{}'", split, feature));
  }
  return plans;
}

}  // namespace

/// --force replaces the output folder: refused when an input lies inside it
/// (the replaced folder, input and all, would be deleted).
void refuse_output_holding_inputs(const ConvertOptions& options, const fs::path& target) {
  std::error_code ec;
  const fs::path out = fs::weakly_canonical(target, ec);
  if (ec) return;
  std::vector<std::string> inputs = options.train_paths;
  if (!options.test_path.empty()) inputs.push_back(options.test_path);
  for (const std::string& input : inputs) {
    const fs::path in = fs::weakly_canonical(input, ec);
    if (ec) continue;
    if (std::mismatch(out.begin(), out.end(), in.begin(), in.end()).first == out.end()) {
      throw UsageError(fmt::format("convert: the output folder {} holds the input {}; choose another --output",
                                   options.output_dir, input));
    }
  }
}

ConvertSummary convert_criteo_tsv(const ConvertOptions& options) {
  fs::path staging, previous, target;
  std::error_code ignored;
  try {
    check_options(options);
    // Work in hidden siblings of the output folder, so that the final renames
    // stay on one file system.
    const fs::path out = fs::absolute(options.output_dir).lexically_normal();
    target = out.has_filename() ? out : out.parent_path();
    refuse_output_holding_inputs(options, target);
    // A killed conversion's staging folder is removed by the next one here.
    remove_stale_partials(target.parent_path());
    staging = make_partial_dir(target);
    previous = partial_dir(target.parent_path() / (target.filename().string() + "-previous"));
    ConvertSummary summary = convert_into(options, staging);
    if (summary.train_rows == 0 || summary.test_rows == 0) {
      throw UsageError(fmt::format("convert: the {} split has no rows ({} train, {} test); nothing to convert",
                                   summary.train_rows == 0 ? "train" : "test", summary.train_rows, summary.test_rows));
    }
    fs::remove(staging / kPartialMarker);
    // The previous dataset is the user's until the new one is in place: not
    // marked, so no cleanup removes it if this process dies between renames.
    if (fs::exists(target)) fs::rename(target, previous);
    fs::rename(staging, target);
    fs::remove_all(previous, ignored);
    summary.spec_path = (target / "feature_spec.yaml").string();
    return summary;
  } catch (const fs::filesystem_error& e) {
    if (!staging.empty()) fs::remove_all(staging, ignored);
    if (!previous.empty() && fs::exists(previous, ignored) && !fs::exists(target, ignored)) {
      fs::rename(previous, target, ignored);
    }
    throw Error(fmt::format("convert: {}", e.what()));
  } catch (...) {
    if (!staging.empty()) fs::remove_all(staging, ignored);
    throw;
  }
}

Dataset load_binary_split(const std::string& spec_path, const std::string& split) {
  const FeatureSpec spec = read_feature_spec(spec_path);
  const std::vector<FilePlan> plans =
      plan_split(spec, fs::path(spec_path).parent_path(), split, spec_path);
  Dataset data;
  data.num_dense = static_cast<int>(spec.numerical_channel.size());
  for (const std::string& name : spec.categorical_channel) {
    data.table_sizes.push_back(spec.features.at(name).cardinality);
  }
  const auto rows = static_cast<size_t>(plans.empty() ? 0 : plans[0].rows);
  data.labels.resize(rows);
  data.dense.resize(rows * static_cast<size_t>(data.num_dense));
  data.categorical.resize(rows * static_cast<size_t>(data.num_tables()));
  for (const FilePlan& plan : plans) {
    switch (plan.dtype) {
      case Dtype::kBool:
      case Dtype::kInt8:
        read_file<int8_t>(plan, spec_path, data);
        break;
      case Dtype::kInt16:
        read_file<int16_t>(plan, spec_path, data);
        break;
      case Dtype::kInt32:
        read_file<int32_t>(plan, spec_path, data);
        break;
      case Dtype::kInt64:
        read_file<int64_t>(plan, spec_path, data);
        break;
      case Dtype::kFloat16:
        read_file<uint16_t>(plan, spec_path, data);
        break;
      case Dtype::kFloat32:
        read_file<float>(plan, spec_path, data);
        break;
    }
  }
  return data;
}

}  // namespace perflab::dlrm
