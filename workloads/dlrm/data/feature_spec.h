// The feature specification of NVIDIA DeepLearningExamples' recommender models
// (feature_spec.yaml): which features exist, their dtypes and cardinalities,
// which channel (label, numerical, categorical) each feeds, and which binary
// files hold each split.
//
//   metadata: {...}                        free-form, scalars kept as text
//   feature_spec: {name: {dtype: int16, cardinality: 1000}, ...}
//   channel_spec: {label: [label], numerical: [num_0, ...], categorical: [cat_0, ...]}
//   source_spec:
//     train: [{type: split_binary, features: [num_0, ...], files: [train/numerical.bin]}, ...]
//     test: [...]
//
// A split_binary chunk is one file of rows, each row the chunk's features in
// order, little-endian, all of one dtype. Files are relative to the spec's folder.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace perflab::dlrm {

/// Element types a feature may have, named as numpy names them.
enum class Dtype { kBool, kInt8, kInt16, kInt32, kInt64, kFloat16, kFloat32 };

/// Parses a numpy dtype name ("int16", "float32", ...); throws UsageError
/// "unknown dtype 'x'" otherwise.
Dtype parse_dtype(const std::string& name);
/// The numpy name of a dtype.
const char* dtype_name(Dtype dtype);
/// Bytes per element.
int dtype_size(Dtype dtype);
/// The smallest of int8/int16/int32 whose maximum exceeds `cardinality`, as
/// DeepLearningExamples picks it; throws UsageError when none does.
Dtype categorical_dtype(int64_t cardinality);

/// One feature's entry in feature_spec.
struct FeatureInfo {
  Dtype dtype = Dtype::kFloat32;  ///< Element type in its file.
  int64_t cardinality = 0;        ///< Distinct ids (categorical features only; 0 otherwise).
};

/// One entry of a split's source list.
struct SourceChunk {
  std::string type = "split_binary";  ///< Only split_binary is supported.
  std::vector<std::string> features;  ///< Columns of each row, in order.
  std::vector<std::string> files;     ///< Relative to the spec's folder.
};

/// A parsed feature_spec.yaml.
struct FeatureSpec {
  std::vector<std::pair<std::string, std::string>> metadata;    ///< In file order.
  std::map<std::string, FeatureInfo> features;                  ///< feature_spec.
  std::vector<std::string> label_channel;                       ///< channel_spec.label.
  std::vector<std::string> numerical_channel;                   ///< channel_spec.numerical.
  std::vector<std::string> categorical_channel;                 ///< channel_spec.categorical.
  std::map<std::string, std::vector<SourceChunk>> source_spec;  ///< Per split name.
};

/// The layout DeepLearningExamples' preprocessing writes: features label,
/// num_0.., cat_0..; per split (train, test) <split>/label.bin (int8),
/// <split>/numerical.bin (float32, all numerical features) and one
/// <split>/cat_<i>.bin per categorical feature (categorical_dtype(cardinality)).
FeatureSpec default_feature_spec(int num_numerical, const std::vector<int64_t>& cardinalities);

/// Reads and checks the structure of a spec (sections present, known dtypes,
/// channel features declared, cardinalities of categoricals positive). Throws
/// UsageError "path: reason" (with the line where yaml-cpp gives one).
FeatureSpec read_feature_spec(const std::string& path);

/// Writes `spec` as YAML to `path`; throws Error when the file cannot be written.
void write_feature_spec(const FeatureSpec& spec, const std::string& path);

}  // namespace perflab::dlrm
