// Reader for the Criteo click logs' TSV format (Kaggle display-ad challenge
// and the 1TB click logs): one sample a line, 40 tab-separated fields.
//
// Field 1 is the label (0 or 1); fields 2-14 (I1..I13) are integer counts and
// fields 15-40 (C1..C26) categorical values written as 8 hexadecimal digits.
// Any field but the label may be empty. Rows are preprocessed as the DLRM
// references do:
//  - dense: a missing value is 0, a negative one clamps to 0, then log(x + 1);
//  - categorical: the hex value (32 bits) becomes id = value % (table_size - 1) + 1,
//    with id 0 reserved for a missing value, so every table has exactly
//    table_size rows. One fixed size for all tables keeps conversion a single
//    streaming pass (per-table sizes from distinct counts would need a second).
// A line may end in CRLF. A malformed line is a UsageError "file:line: reason".
#pragma once

#include <array>
#include <cstdint>
#include <cstdio>
#include <string>
#include <string_view>
#include <vector>

#include "workloads/dlrm/data/dataset.h"

namespace perflab::dlrm {

constexpr int kCriteoNumDense = 13;        ///< Integer features I1..I13.
constexpr int kCriteoNumCategorical = 26;  ///< Categorical features C1..C26.
constexpr int kCriteoNumFields = 1 + kCriteoNumDense + kCriteoNumCategorical;

/// One preprocessed Criteo sample.
struct CriteoRow {
  float label = 0;                                           ///< 0 or 1.
  std::array<float, kCriteoNumDense> dense{};                ///< log(max(x, 0) + 1).
  std::array<int32_t, kCriteoNumCategorical> categorical{};  ///< In [0, table_size).
};

/// Parses one line (newline removed; a trailing '\r' is ignored) into `row`.
/// Throws UsageError whose message is the reason alone, without a location.
/// table_size must be at least 2.
void parse_criteo_line(std::string_view line, int64_t table_size, CriteoRow& row);

/// Streams a Criteo TSV file one row at a time with a fixed-size buffer, so
/// files of any size can be read.
class CriteoTsvReader {
 public:
  /// Bytes read from the file at a time; a line may span any number of reads.
  static constexpr size_t kDefaultBufferBytes = size_t{1} << 20;

  /// Opens `path`. Throws UsageError when it does not exist or table_size < 2,
  /// Error when it cannot be opened for another reason. `buffer_bytes` (at
  /// least 1) changes how the file is read, never what is read.
  CriteoTsvReader(std::string path, int64_t table_size, size_t buffer_bytes = kDefaultBufferBytes);
  ~CriteoTsvReader();
  CriteoTsvReader(const CriteoTsvReader&) = delete;
  CriteoTsvReader& operator=(const CriteoTsvReader&) = delete;

  /// Reads the next row into `row`; false at the end of the file. Throws
  /// UsageError "path:line: reason" for a malformed line, Error on a read failure.
  bool next(CriteoRow& row);

  /// 1-based number of the line last read (0 before the first).
  int64_t line_number() const { return line_number_; }

 private:
  bool next_line(std::string_view& line);
  bool refill();

  std::string path_;
  int64_t table_size_;
  std::FILE* file_ = nullptr;
  std::vector<char> buffer_;
  size_t pos_ = 0, len_ = 0;
  std::string carry_;  // A line split across buffer refills.
  int64_t line_number_ = 0;
};

/// Reads a whole Criteo TSV file into memory: 13 dense features, 26 tables of
/// table_size rows each. For files that fit in memory; convert larger ones.
Dataset read_criteo_tsv(const std::string& path, int64_t table_size);

}  // namespace perflab::dlrm
