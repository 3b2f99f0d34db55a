// NumPy .npy files: read and write dense little-endian arrays in C order, so
// the transducer workload can load reference inputs and dump tensors that
// NumPy reads back.
//
// Supported: header format versions 1.0 and 2.0 (and 3.0, which differs from
// 2.0 only in allowing a UTF-8 header), dtypes '<f4', '<f8', '<i4', '<i8',
// fortran_order False. Fortran order, big-endian and other dtypes are refused
// with a UsageError naming the file. .npz archives (zip files of .npy
// members) are not supported: unpack them first (numpy.load(...)[name]).
// Readers assume a little-endian host, as every platform perflab runs on is.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

namespace perflab::transducer {

/// A dense array as stored in a .npy file.
struct NpyArray {
  std::string dtype;           ///< NumPy type string: "<f4", "<f8", "<i4" or "<i8".
  std::vector<int64_t> shape;  ///< Dimensions, outermost first; empty for a scalar.
  std::vector<char> data;      ///< element_count() * item_size() bytes, C order.

  /// Product of the dimensions (1 for a scalar, 0 if any dimension is 0).
  int64_t element_count() const;
  /// Bytes per element of `dtype`.
  size_t item_size() const;

  /// The elements as T; throws perflab::UsageError when T does not match
  /// dtype (float "<f4", double "<f8", int32_t "<i4", int64_t "<i8").
  template <typename T>
  const T* as() const;
  template <typename T>
  T* as();
};

/// The NumPy type string of T: "<f4", "<f8", "<i4" or "<i8".
template <typename T>
const char* npy_dtype();
template <>
const char* npy_dtype<float>();
template <>
const char* npy_dtype<double>();
template <>
const char* npy_dtype<int32_t>();
template <>
const char* npy_dtype<int64_t>();

/// Reads `path`. Throws perflab::Error when the file cannot be read and
/// perflab::UsageError naming the file when it is not a supported .npy file
/// (bad magic, unsupported version or dtype, Fortran order, big-endian,
/// truncated header or data, trailing bytes).
NpyArray read_npy(const std::filesystem::path& path);

/// The same for a file's bytes already in memory; `file` names it in errors.
NpyArray parse_npy(const std::string& bytes, const std::string& file);

/// Writes element_count(shape) elements of `dtype` from `data` to `path` as a
/// version 1.0 file (2.0 if the header needs more than 65535 bytes), via a
/// temporary file renamed into place. Throws UsageError for an unsupported
/// dtype or a negative dimension, perflab::Error when writing fails.
void write_npy(const std::filesystem::path& path, const std::string& dtype,
               const std::vector<int64_t>& shape, const void* data);

/// write_npy(path, array.dtype, array.shape, array.data.data()), after
/// checking that array.data holds exactly the bytes the shape needs.
void write_npy(const std::filesystem::path& path, const NpyArray& array);

}  // namespace perflab::transducer
