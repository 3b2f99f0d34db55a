// Criteo TSV parsing: field splitting, integer and hex-id parsing, and a
// buffered line reader.
#include "workloads/dlrm/data/criteo_tsv.h"

#include <filesystem>

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <limits>
#include <utility>

#include "base/error.h"
#include "harness/input_file.h"

namespace perflab::dlrm {
namespace {

constexpr size_t kMaxLineBytes = size_t{1} << 20;

/// "field 3 (I2)": 1-based field number and the Criteo column name.
std::string field_name(int field) {
  if (field == 0) return "field 1 (label)";
  if (field <= kCriteoNumDense) return fmt::format("field {} (I{})", field + 1, field);
  return fmt::format("field {} (C{})", field + 1, field - kCriteoNumDense);
}

/// A field's text for an error message, shortened when long.
std::string quoted(std::string_view text) {
  if (text.size() > 24) return fmt::format("'{}...'", text.substr(0, 24));
  return fmt::format("'{}'", text);
}

/// Parses an optionally signed decimal integer; missing -> 0, negative -> 0.
float parse_dense(std::string_view text, int field) {
  if (text.empty()) return 0.0f;
  size_t i = 0;
  const bool negative = text[0] == '-';
  if (text[0] == '-' || text[0] == '+') i = 1;
  if (i == text.size()) {
    throw UsageError(fmt::format("{}: {} is not an integer", field_name(field), quoted(text)));
  }
  int64_t value = 0;
  for (; i < text.size(); ++i) {
    const char c = text[i];
    if (c < '0' || c > '9') {
      throw UsageError(fmt::format("{}: {} is not an integer", field_name(field), quoted(text)));
    }
    if (value > (int64_t{1} << 53)) {
      throw UsageError(fmt::format("{}: {} is out of range", field_name(field), quoted(text)));
    }
    value = value * 10 + (c - '0');
  }
  if (negative) return 0.0f;
  return static_cast<float>(std::log1p(static_cast<double>(value)));
}

/// Parses up to 8 hex digits; missing -> id 0, else value % (table_size - 1) + 1.
int32_t parse_categorical(std::string_view text, int field, int64_t table_size) {
  if (text.empty()) return 0;
  if (text.size() > 8) {
    throw UsageError(
        fmt::format("{}: {} is longer than 8 hex digits", field_name(field), quoted(text)));
  }
  uint64_t value = 0;
  for (const char c : text) {
    int digit = 0;
    if (c >= '0' && c <= '9') {
      digit = c - '0';
    } else if (c >= 'a' && c <= 'f') {
      digit = c - 'a' + 10;
    } else if (c >= 'A' && c <= 'F') {
      digit = c - 'A' + 10;
    } else {
      throw UsageError(
          fmt::format("{}: {} is not a hexadecimal id", field_name(field), quoted(text)));
    }
    value = value * 16 + static_cast<uint64_t>(digit);
  }
  return static_cast<int32_t>(value % static_cast<uint64_t>(table_size - 1) + 1);
}

void check_table_size(int64_t table_size) {
  if (table_size < 2 || table_size > std::numeric_limits<int32_t>::max()) {
    throw UsageError(fmt::format("Criteo table size {} outside [2, 2^31 - 1]", table_size));
  }
}

}  // namespace

void parse_criteo_line(std::string_view line, int64_t table_size, CriteoRow& row) {
  check_table_size(table_size);
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  std::array<std::string_view, kCriteoNumFields> fields;
  int count = 0;
  size_t start = 0;
  for (;;) {
    const size_t tab = line.find('\t', start);
    const std::string_view field = line.substr(start, tab - start);
    if (count < kCriteoNumFields) fields[count] = field;
    ++count;
    if (tab == std::string_view::npos) break;
    start = tab + 1;
  }
  if (count != kCriteoNumFields) {
    throw UsageError(
        fmt::format("expected {} tab-separated fields, found {}", kCriteoNumFields, count));
  }
  if (fields[0] != "0" && fields[0] != "1") {
    throw UsageError(fmt::format("label must be 0 or 1, found {}", quoted(fields[0])));
  }
  row.label = fields[0] == "1" ? 1.0f : 0.0f;
  for (int j = 0; j < kCriteoNumDense; ++j) row.dense[j] = parse_dense(fields[1 + j], 1 + j);
  for (int t = 0; t < kCriteoNumCategorical; ++t) {
    const int field = 1 + kCriteoNumDense + t;
    row.categorical[t] = parse_categorical(fields[field], field, table_size);
  }
}

CriteoTsvReader::CriteoTsvReader(std::string path, int64_t table_size, size_t buffer_bytes)
    : path_(std::move(path)), table_size_(table_size), buffer_(std::max<size_t>(buffer_bytes, 1)) {
  check_table_size(table_size);
  // A folder is one line; a pipe is fine (read in one pass: --input <(zcat day_0.gz)).
  if (std::error_code ec; std::filesystem::is_directory(path_, ec)) {
    throw UsageError(path_ + ": is a folder, not a file");
  }
  file_ = std::fopen(path_.c_str(), "rb");
  if (file_ == nullptr && errno == ENOENT) throw UsageError(path_ + ": no such file");
  if (file_ == nullptr) {
    throw Error(fmt::format("{}: cannot open: {}", path_, std::strerror(errno)));
  }
}

CriteoTsvReader::~CriteoTsvReader() {
  if (file_ != nullptr) std::fclose(file_);
}

bool CriteoTsvReader::next(CriteoRow& row) {
  std::string_view line;
  if (!next_line(line)) return false;
  try {
    parse_criteo_line(line, table_size_, row);
  } catch (const UsageError& e) {
    throw UsageError(fmt::format("{}:{}: {}", path_, line_number_, e.what()));
  }
  return true;
}

bool CriteoTsvReader::next_line(std::string_view& line) {
  carry_.clear();
  for (;;) {
    if (pos_ < len_) {
      const char* start = buffer_.data() + pos_;
      const auto* newline = static_cast<const char*>(std::memchr(start, '\n', len_ - pos_));
      const size_t n = newline != nullptr ? static_cast<size_t>(newline - start) : len_ - pos_;
      if (carry_.size() + n > kMaxLineBytes) {
        throw UsageError(fmt::format("{}:{}: line longer than {} bytes", path_, line_number_ + 1,
                                     kMaxLineBytes));
      }
      if (newline != nullptr) {
        pos_ += n + 1;
        ++line_number_;
        if (carry_.empty()) {
          line = std::string_view(start, n);
        } else {
          carry_.append(start, n);
          line = carry_;
        }
        return true;
      }
      carry_.append(start, n);
      pos_ = len_;
    }
    if (!refill()) {
      if (carry_.empty()) return false;  // A final line without a newline is still a line.
      ++line_number_;
      line = carry_;
      return true;
    }
  }
}

bool CriteoTsvReader::refill() {
  pos_ = 0;
  len_ = std::fread(buffer_.data(), 1, buffer_.size(), file_);
  if (len_ == 0 && std::ferror(file_) != 0) {
    throw Error(fmt::format("{}: read failed: {}", path_, std::strerror(errno)));
  }
  return len_ > 0;
}

Dataset read_criteo_tsv(const std::string& path, int64_t table_size) {
  CriteoTsvReader reader(path, table_size);
  Dataset data;
  data.num_dense = kCriteoNumDense;
  data.table_sizes.assign(kCriteoNumCategorical, table_size);
  CriteoRow row;
  while (reader.next(row)) {
    data.labels.push_back(row.label);
    data.dense.insert(data.dense.end(), row.dense.begin(), row.dense.end());
    data.categorical.insert(data.categorical.end(), row.categorical.begin(), row.categorical.end());
  }
  return data;
}

}  // namespace perflab::dlrm
