// The binary DLRM dataset on disk, laid out as DeepLearningExamples' DLRM
// expects it: a feature_spec.yaml beside train/ and test/ folders of
// split_binary files (label.bin, numerical.bin, cat_<i>.bin). Converts Criteo
// TSV into that layout and loads one split of it into memory.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "workloads/dlrm/data/dataset.h"

namespace perflab::dlrm {

/// What convert_criteo_tsv reads and writes.
struct ConvertOptions {
  std::vector<std::string> train_paths;  ///< Criteo TSV files for the train split, in order.
  std::string test_path;         ///< Criteo TSV for the test split; empty to use eval_fraction.
  double eval_fraction = 0;      ///< Without test_path: the last floor(rows * fraction) train
                                 ///< rows become the test split; in (0, 1).
  std::string output_dir;        ///< Created; holds feature_spec.yaml, train/, test/.
  int64_t table_size = 1 << 20;  ///< Rows of every table; hashed ids fold into it (>= 2).
  bool overwrite = false;        ///< Replace an existing non-empty output_dir.
};

/// What convert_criteo_tsv wrote.
struct ConvertSummary {
  std::string spec_path;             ///< output_dir/feature_spec.yaml.
  int64_t train_rows = 0;            ///< Samples in the train split.
  int64_t test_rows = 0;             ///< Samples in the test split.
  std::vector<int64_t> table_sizes;  ///< Cardinality of each categorical feature (26).
  std::string categorical_dtype;     ///< dtype of the cat_<i>.bin files.
};

/// Converts Criteo TSV into the binary layout in one streaming pass. Writes
/// into a temporary sibling folder and renames it to output_dir only once
/// everything is written, so a failure (malformed row, full disk) leaves no
/// output_dir behind, and an existing one untouched. Refuses a non-empty
/// existing output_dir unless overwrite is set. Throws UsageError for bad
/// options or input rows ("file:line: reason"), Error for I/O failures.
ConvertSummary convert_criteo_tsv(const ConvertOptions& options);

/// Loads split `split` ("train", "test") of the dataset that `spec_path`
/// describes. Accepts label dtypes int8 and bool, numerical float32 and
/// float16 (converted), categorical int8/int16/int32/int64. Throws one-line
/// UsageErrors naming the spec and the file for an invalid spec, a missing
/// file, a file size that does not match the row count of the others, a label
/// other than 0/1 or an id outside [0, cardinality).
Dataset load_binary_split(const std::string& spec_path, const std::string& split);

}  // namespace perflab::dlrm
