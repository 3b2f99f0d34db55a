// NumPy .npy reading and writing. The format: the magic "\x93NUMPY", a major
// and minor version byte, the header length (uint16 little-endian for 1.0,
// uint32 for 2.0/3.0), then a Python dict literal such as
//   {'descr': '<f4', 'fortran_order': False, 'shape': (3, 4), }
// padded with spaces and a final '\n' so the data starts at a multiple of 64
// bytes, then the raw elements.
#include "workloads/transducer/npy.h"

#include <cctype>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <iterator>
#include <limits>

#include "harness/atomic_file.h"
#include "base/error.h"
#include "harness/input_file.h"

namespace perflab::transducer {
namespace {

constexpr char kMagic[] = "\x93NUMPY";
constexpr size_t kMagicSize = 6;
constexpr size_t kAlignment = 64;

/// Bytes per element of a supported dtype, 0 for anything else.
size_t dtype_size(const std::string& dtype) {
  if (dtype == "<f4" || dtype == "<i4") return 4;
  if (dtype == "<f8" || dtype == "<i8") return 8;
  return 0;
}

/// Element count of `shape`, or -1 when a dimension is negative or the
/// product overflows what a byte count can hold.
int64_t checked_count(const std::vector<int64_t>& shape) {
  int64_t count = 1;
  for (int64_t dim : shape) {
    if (dim < 0) return -1;
    if (dim != 0 && count > std::numeric_limits<int64_t>::max() / 8 / dim) return -1;
    count *= dim;
  }
  return count;
}

/// Parses the header dict; every failure is a UsageError naming the file.
class HeaderParser {
 public:
  HeaderParser(const std::string& text, const std::string& file) : text_(text), file_(file) {}

  /// The text after `'key':`, with leading spaces skipped.
  size_t value_of(const std::string& key) const {
    size_t at = find_key(key);
    at = skip_spaces(at);
    if (at >= text_.size() || text_[at] != ':') fail("no ':' after '" + key + "'");
    return skip_spaces(at + 1);
  }

  std::string string_value(const std::string& key) const {
    const size_t at = value_of(key);
    if (at >= text_.size() || (text_[at] != '\'' && text_[at] != '"')) {
      fail("'" + key + "' is not a string");
    }
    const size_t end = text_.find(text_[at], at + 1);
    if (end == std::string::npos) fail("unterminated string for '" + key + "'");
    return text_.substr(at + 1, end - at - 1);
  }

  bool bool_value(const std::string& key) const {
    const size_t at = value_of(key);
    if (text_.compare(at, 4, "True") == 0) return true;
    if (text_.compare(at, 5, "False") == 0) return false;
    fail("'" + key + "' is not True or False");
  }

  std::vector<int64_t> tuple_value(const std::string& key) const {
    size_t at = value_of(key);
    if (at >= text_.size() || text_[at] != '(') fail("'" + key + "' is not a tuple");
    std::vector<int64_t> values;
    at = skip_spaces(at + 1);
    while (at < text_.size() && text_[at] != ')') {
      size_t digits = at;
      while (digits < text_.size() && std::isdigit(static_cast<unsigned char>(text_[digits]))) {
        ++digits;
      }
      if (digits == at || digits - at > 18) fail("bad dimension in '" + key + "'");
      values.push_back(std::stoll(text_.substr(at, digits - at)));
      at = skip_spaces(digits);
      if (at < text_.size() && text_[at] == 'L') at = skip_spaces(at + 1);  // Python 2 longs
      if (at < text_.size() && text_[at] == ',') at = skip_spaces(at + 1);
    }
    if (at >= text_.size()) fail("unterminated tuple for '" + key + "'");
    return values;
  }

  [[noreturn]] void fail(const std::string& why) const {
    throw UsageError(file_ + ": bad .npy header: " + why);
  }

 private:
  size_t find_key(const std::string& key) const {
    for (const char quote : {'\'', '"'}) {
      const size_t at = text_.find(std::string(1, quote) + key + quote);
      if (at != std::string::npos) return at + key.size() + 2;
    }
    fail("no '" + key + "' key");
  }

  size_t skip_spaces(size_t at) const {
    while (at < text_.size() && std::isspace(static_cast<unsigned char>(text_[at]))) ++at;
    return at;
  }

  const std::string& text_;
  const std::string& file_;
};

uint32_t read_le(const std::string& bytes, size_t at, size_t width) {
  uint32_t value = 0;
  for (size_t i = 0; i < width; ++i) {
    value |= static_cast<uint32_t>(static_cast<unsigned char>(bytes[at + i])) << (8 * i);
  }
  return value;
}

std::string header_dict(const std::string& dtype, const std::vector<int64_t>& shape) {
  std::string dims;
  for (size_t i = 0; i < shape.size(); ++i) {
    dims += (i ? ", " : "") + std::to_string(shape[i]);
  }
  if (shape.size() == 1) dims += ",";  // Python's one-element tuple
  return "{'descr': '" + dtype + "', 'fortran_order': False, 'shape': (" + dims + "), }";
}

template <typename T>
void check_type(const std::string& dtype) {
  if (dtype != npy_dtype<T>()) {
    throw UsageError("npy array holds " + dtype + ", not " + npy_dtype<T>());
  }
}

}  // namespace

template <>
const char* npy_dtype<float>() {
  return "<f4";
}
template <>
const char* npy_dtype<double>() {
  return "<f8";
}
template <>
const char* npy_dtype<int32_t>() {
  return "<i4";
}
template <>
const char* npy_dtype<int64_t>() {
  return "<i8";
}

int64_t NpyArray::element_count() const {
  int64_t count = 1;
  for (int64_t dim : shape) count *= dim;
  return count;
}

size_t NpyArray::item_size() const { return dtype_size(dtype); }

template <typename T>
const T* NpyArray::as() const {
  check_type<T>(dtype);
  return reinterpret_cast<const T*>(data.data());
}

template <typename T>
T* NpyArray::as() {
  check_type<T>(dtype);
  return reinterpret_cast<T*>(data.data());
}

template const float* NpyArray::as<float>() const;
template const double* NpyArray::as<double>() const;
template const int32_t* NpyArray::as<int32_t>() const;
template const int64_t* NpyArray::as<int64_t>() const;
template float* NpyArray::as<float>();
template double* NpyArray::as<double>();
template int32_t* NpyArray::as<int32_t>();
template int64_t* NpyArray::as<int64_t>();

NpyArray read_npy(const std::filesystem::path& path) {
  const std::string file = path.string();
  // No size cap beyond the file's: the header's shape bounds what is read.
  return parse_npy(read_document(path, std::numeric_limits<std::uintmax_t>::max()), file);
}

NpyArray parse_npy(const std::string& bytes, const std::string& file) {
  if (bytes.size() < kMagicSize || bytes.compare(0, kMagicSize, kMagic, kMagicSize) != 0) {
    throw UsageError(file + ": not a .npy file (bad magic)");
  }
  if (bytes.size() < kMagicSize + 2) throw UsageError(file + ": truncated .npy header");
  const int major = static_cast<unsigned char>(bytes[kMagicSize]);
  const int minor = static_cast<unsigned char>(bytes[kMagicSize + 1]);
  if (major < 1 || major > 3 || minor != 0) {
    throw UsageError(file + ": unsupported .npy format version " + std::to_string(major) + "." +
                     std::to_string(minor) + " (supported: 1.0, 2.0, 3.0)");
  }
  const size_t length_width = major == 1 ? 2 : 4;
  const size_t header_start = kMagicSize + 2 + length_width;
  if (bytes.size() < header_start) throw UsageError(file + ": truncated .npy header");
  const size_t header_size = read_le(bytes, kMagicSize + 2, length_width);
  if (bytes.size() < header_start + header_size) {
    throw UsageError(file + ": truncated .npy header (" + std::to_string(header_size) +
                     " bytes announced)");
  }
  const std::string header = bytes.substr(header_start, header_size);
  const HeaderParser parser(header, file);

  NpyArray array;
  array.dtype = parser.string_value("descr");
  if (parser.bool_value("fortran_order")) {
    throw UsageError(file + ": Fortran-order arrays are not supported (save with C order)");
  }
  array.shape = parser.tuple_value("shape");
  if (!array.dtype.empty() && array.dtype[0] == '>') {
    throw UsageError(file + ": big-endian dtype " + array.dtype + " is not supported");
  }
  if (dtype_size(array.dtype) == 0) {
    throw UsageError(file + ": unsupported dtype " + array.dtype +
                     " (supported: <f4, <f8, <i4, <i8)");
  }
  const int64_t count = checked_count(array.shape);
  if (count < 0) parser.fail("shape too large");
  const size_t data_start = header_start + header_size;
  const size_t expected = static_cast<size_t>(count) * array.item_size();
  const size_t found = bytes.size() - data_start;
  if (found < expected) {
    throw UsageError(file + ": truncated .npy data: the shape needs " + std::to_string(expected) +
                     " bytes, the file holds " + std::to_string(found));
  }
  if (found > expected) {
    throw UsageError(file + ": " + std::to_string(found - expected) +
                     " unexpected bytes after the .npy data");
  }
  array.data.assign(bytes.begin() + static_cast<std::ptrdiff_t>(data_start), bytes.end());
  return array;
}

void write_npy(const std::filesystem::path& path, const std::string& dtype,
               const std::vector<int64_t>& shape, const void* data) {
  const size_t item = dtype_size(dtype);
  if (item == 0) {
    throw UsageError("cannot write " + path.string() + ": unsupported dtype " + dtype +
                     " (supported: <f4, <f8, <i4, <i8)");
  }
  const int64_t count = checked_count(shape);
  if (count < 0) throw UsageError("cannot write " + path.string() + ": invalid shape");

  // Pad so that magic + version + length field + header + '\n' is a multiple
  // of 64; version 1.0 stores the header length in 16 bits, 2.0 in 32.
  const std::string dict = header_dict(dtype, shape);
  const auto padded = [&](size_t length_width) {
    const size_t prefix = kMagicSize + 2 + length_width;
    const size_t total = (prefix + dict.size() + 1 + kAlignment - 1) / kAlignment * kAlignment;
    return dict + std::string(total - prefix - dict.size() - 1, ' ') + '\n';
  };
  std::string header = padded(2);
  size_t length_width = 2;
  if (header.size() > 65535) {
    length_width = 4;
    header = padded(4);
  }

  std::string bytes(kMagic, kMagicSize);
  bytes += static_cast<char>(length_width == 2 ? 1 : 2);
  bytes += '\0';
  for (size_t i = 0; i < length_width; ++i) {
    bytes += static_cast<char>((header.size() >> (8 * i)) & 0xff);
  }
  bytes += header;
  const size_t data_bytes = static_cast<size_t>(count) * item;
  if (data_bytes > 0) bytes.append(static_cast<const char*>(data), data_bytes);
  write_file_atomically(path, bytes);
}

void write_npy(const std::filesystem::path& path, const NpyArray& array) {
  const int64_t count = checked_count(array.shape);
  if (dtype_size(array.dtype) != 0 && count >= 0 &&
      array.data.size() != static_cast<size_t>(count) * array.item_size()) {
    throw UsageError("cannot write " + path.string() + ": the array holds " +
                     std::to_string(array.data.size()) + " bytes, its shape needs " +
                     std::to_string(static_cast<size_t>(count) * array.item_size()));
  }
  write_npy(path, array.dtype, array.shape, array.data.data());
}

}  // namespace perflab::transducer
