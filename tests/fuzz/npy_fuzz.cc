// Fuzzes the .npy reader (workloads/transducer/npy.h), as `perflab
// transducer loss` reads its inputs. Properties: a bad file is a UsageError;
// an array read holds exactly the bytes its dtype and shape need; writing it
// with write_npy and reading that back gives the same array.
#include <cstdint>
#include <string>

#include "base/error.h"
#include "tests/fuzz/fuzz_check.h"
#include "workloads/transducer/npy.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace perflab::fuzz;
  using perflab::transducer::NpyArray;
  NpyArray array;
  try {
    array = perflab::transducer::parse_npy(std::string(reinterpret_cast<const char*>(data), size), "fuzz.npy");
  } catch (const perflab::UsageError&) {
    return 0;
  }
  require(array.item_size() > 0, "a supported dtype: " + array.dtype);
  int64_t count = 1;
  for (int64_t dim : array.shape) {
    require(dim >= 0, "dimensions are not negative");
    count *= dim;  // checked by the reader: cannot overflow here
  }
  require(count == array.element_count(), "element_count is the product of the shape");
  require(array.data.size() == static_cast<size_t>(count) * array.item_size(),
          "the data is exactly what the shape needs");

  static const std::string path = private_temp_file("array.npy");
  perflab::transducer::write_npy(path, array);
  const NpyArray back = perflab::transducer::read_npy(path);
  require(back.dtype == array.dtype && back.shape == array.shape && back.data == array.data,
          "write_npy then read_npy gives the array back");
  return 0;
}
