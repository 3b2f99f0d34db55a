// Tests for .npy reading and writing (workloads/transducer/npy.h): round trips
// of every dtype, files written by NumPy (skipped when NumPy is not
// importable), files NumPy must read back, and malformed files.
#include "workloads/transducer/npy.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "base/error.h"

namespace perflab::transducer {
namespace {

namespace fs = std::filesystem;

bool numpy_available() { return std::system("python3 -c 'import numpy' >/dev/null 2>&1") == 0; }

std::string slurp(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

void spit(const fs::path& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary) << bytes;
}

class NpyTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    dir_ = fs::temp_directory_path() /
           ("perflab_npy_test." + std::to_string(::getpid()) + "." + info->name());
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  /// Runs a Python script (NumPy imported as np, `d` = the test's directory).
  int python(const std::string& body) {
    const fs::path script = dir_ / "script.py";
    spit(script, "import sys\nimport numpy as np\nd = sys.argv[1]\n" + body);
    return std::system(("python3 " + script.string() + " " + dir_.string()).c_str());
  }

  void expect_usage_error(const fs::path& path, const std::string& needle) {
    try {
      read_npy(path);
      ADD_FAILURE() << "no error reading " << path << "; expected '" << needle << "'";
    } catch (const UsageError& e) {
      EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find(path.string()), std::string::npos) << e.what();
    }
  }

  fs::path dir_;
};

template <typename T>
void round_trip(const fs::path& path, const std::vector<int64_t>& shape) {
  int64_t count = 1;
  for (int64_t dim : shape) count *= dim;
  std::vector<T> values(static_cast<size_t>(count));
  for (size_t i = 0; i < values.size(); ++i) values[i] = static_cast<T>(i * 7 % 13) - T(5) / 2;
  write_npy(path, npy_dtype<T>(), shape, values.data());
  const NpyArray array = read_npy(path);
  EXPECT_EQ(array.dtype, npy_dtype<T>());
  EXPECT_EQ(array.shape, shape);
  EXPECT_EQ(array.element_count(), count);
  ASSERT_EQ(array.data.size(), values.size() * sizeof(T));
  for (size_t i = 0; i < values.size(); ++i) {
    ASSERT_EQ(array.as<T>()[i], values[i]) << path << " element " << i;
  }
  // The data starts on a 64-byte boundary.
  EXPECT_EQ((fs::file_size(path) - array.data.size()) % 64, 0u) << path;
}

TEST_F(NpyTest, RoundTripsEveryDtype) {
  round_trip<float>(dir_ / "f4.npy", {2, 3, 5});
  round_trip<double>(dir_ / "f8.npy", {7});
  round_trip<int32_t>(dir_ / "i4.npy", {3, 1, 4});
  round_trip<int64_t>(dir_ / "i8.npy", {});  // a scalar
  round_trip<float>(dir_ / "empty.npy", {0, 3});
}

TEST_F(NpyTest, LongHeaderUsesVersionTwo) {
  const std::vector<int64_t> shape(22000, 1);  // "1, " per dimension: over 65535 bytes
  round_trip<double>(dir_ / "long.npy", shape);
  EXPECT_EQ(slurp(dir_ / "long.npy")[6], 2);
  round_trip<double>(dir_ / "short.npy", {3});
  EXPECT_EQ(slurp(dir_ / "short.npy")[6], 1);
}

TEST_F(NpyTest, TypedAccessorChecksDtype) {
  const float values[] = {1, 2};
  write_npy(dir_ / "a.npy", "<f4", {2}, values);
  NpyArray array = read_npy(dir_ / "a.npy");
  EXPECT_EQ(array.as<float>()[1], 2.0f);
  EXPECT_THROW(array.as<double>(), UsageError);
  EXPECT_THROW(array.as<int32_t>(), UsageError);
  array.as<float>()[0] = 5;
  write_npy(dir_ / "b.npy", array);
  EXPECT_EQ(read_npy(dir_ / "b.npy").as<float>()[0], 5.0f);
  array.data.pop_back();
  EXPECT_THROW(write_npy(dir_ / "c.npy", array), UsageError);
  EXPECT_THROW(write_npy(dir_ / "d.npy", "<u2", {2}, values), UsageError);
  EXPECT_THROW(write_npy(dir_ / "e.npy", "<f4", {-2}, values), UsageError);
}

TEST_F(NpyTest, ReadsFilesWrittenByNumpy) {
  if (!numpy_available()) GTEST_SKIP() << "python3 cannot import numpy to write the fixtures";
  ASSERT_EQ(python("np.save(d + '/f4.npy', np.arange(6, dtype='<f4').reshape(2, 3) / 4)\n"
                   "np.save(d + '/f8.npy', np.array([1e300, -2.5, 0.1]))\n"
                   "np.save(d + '/i4.npy', np.array([[-7], [2**31 - 1]], dtype='<i4'))\n"
                   "np.save(d + '/i8.npy', np.array(-2**40, dtype='<i8'))\n"
                   "with open(d + '/v2.npy', 'wb') as f:\n"
                   "    np.lib.format.write_array(f, np.arange(5, dtype='<i4'), version=(2, 0))\n"
                   "np.save(d + '/fortran.npy', np.asfortranarray(np.ones((2, 3), '<f4')))\n"
                   "np.save(d + '/big.npy', np.ones(3, '>f4'))\n"
                   "np.save(d + '/half.npy', np.ones(3, '<f2'))\n"),
            0);
  const NpyArray f4 = read_npy(dir_ / "f4.npy");
  EXPECT_EQ(f4.shape, (std::vector<int64_t>{2, 3}));
  for (int i = 0; i < 6; ++i) EXPECT_EQ(f4.as<float>()[i], static_cast<float>(i) / 4) << i;
  const NpyArray f8 = read_npy(dir_ / "f8.npy");
  EXPECT_EQ(std::vector<double>(f8.as<double>(), f8.as<double>() + 3),
            (std::vector<double>{1e300, -2.5, 0.1}));
  const NpyArray i4 = read_npy(dir_ / "i4.npy");
  EXPECT_EQ(i4.shape, (std::vector<int64_t>{2, 1}));
  EXPECT_EQ(i4.as<int32_t>()[0], -7);
  EXPECT_EQ(i4.as<int32_t>()[1], 2147483647);
  const NpyArray i8 = read_npy(dir_ / "i8.npy");
  EXPECT_TRUE(i8.shape.empty());
  EXPECT_EQ(i8.as<int64_t>()[0], -(int64_t{1} << 40));
  const NpyArray v2 = read_npy(dir_ / "v2.npy");
  EXPECT_EQ(slurp(dir_ / "v2.npy")[6], 2);
  EXPECT_EQ(v2.shape, (std::vector<int64_t>{5}));
  EXPECT_EQ(v2.as<int32_t>()[4], 4);
  expect_usage_error(dir_ / "fortran.npy", "Fortran-order");
  expect_usage_error(dir_ / "big.npy", "big-endian dtype >f4");
  expect_usage_error(dir_ / "half.npy", "unsupported dtype <f2");
}

TEST_F(NpyTest, NumpyReadsOurFiles) {
  if (!numpy_available()) GTEST_SKIP() << "python3 cannot import numpy to check the files";
  const float f4[] = {1.5f, -2, 3.25f, 0, 1e-30f, 7};
  const int64_t i8[] = {-(int64_t{1} << 50), 3};
  write_npy(dir_ / "f4.npy", "<f4", {3, 2}, f4);
  write_npy(dir_ / "i8.npy", "<i8", {2}, i8);
  EXPECT_EQ(python("a = np.load(d + '/f4.npy')\n"
                   "assert a.dtype == np.float32 and a.shape == (3, 2), a\n"
                   "assert (a.ravel() == np.array([1.5, -2, 3.25, 0, 1e-30, 7], "
                   "np.float32)).all(), a\n"
                   "b = np.load(d + '/i8.npy')\n"
                   "assert b.dtype == np.int64 and list(b) == [-2**50, 3], b\n"),
            0);
}

TEST_F(NpyTest, RejectsMalformedFiles) {
  const double values[] = {1, 2, 3, 4};
  write_npy(dir_ / "good.npy", "<f8", {4}, values);
  const std::string good = slurp(dir_ / "good.npy");
  const size_t data_start = good.size() - sizeof(values);

  spit(dir_ / "magic.npy", "\x93NUMPX" + good.substr(6));
  expect_usage_error(dir_ / "magic.npy", "bad magic");
  spit(dir_ / "tiny.npy", "\x93NU");
  expect_usage_error(dir_ / "tiny.npy", "bad magic");
  spit(dir_ / "header.npy", good.substr(0, 30));
  expect_usage_error(dir_ / "header.npy", "truncated .npy header");
  spit(dir_ / "data.npy", good.substr(0, good.size() - 1));
  expect_usage_error(dir_ / "data.npy", "truncated .npy data");
  spit(dir_ / "trailing.npy", good + "x");
  expect_usage_error(dir_ / "trailing.npy", "unexpected bytes");
  std::string version = good;
  version[6] = 4;
  spit(dir_ / "version.npy", version);
  expect_usage_error(dir_ / "version.npy", "format version 4.0");
  std::string fortran = good;
  const size_t at = fortran.find("False");
  fortran.replace(at, 5, "True ");
  spit(dir_ / "fortran.npy", fortran);
  expect_usage_error(dir_ / "fortran.npy", "Fortran-order");
  std::string no_shape = good;
  no_shape.replace(no_shape.find("'shape'"), 7, "'shapf'");
  spit(dir_ / "no_shape.npy", no_shape);
  expect_usage_error(dir_ / "no_shape.npy", "no 'shape' key");
  std::string bad_dim = good;
  bad_dim.replace(bad_dim.find("(4,)"), 4, "(x,)");
  spit(dir_ / "bad_dim.npy", bad_dim);
  expect_usage_error(dir_ / "bad_dim.npy", "bad dimension");
  EXPECT_EQ(data_start % 64, 0u);

  EXPECT_THROW(read_npy(dir_ / "missing.npy"), UsageError);  // a file the user named: exit 2
}

}  // namespace
}  // namespace perflab::transducer
