// Fuzzes the Criteo TSV reader (workloads/dlrm/data/criteo_tsv.h), as
// `perflab data convert` and dlrm's data=FILE.tsv read files. The first two
// bytes choose the reader's buffer (1 to 64 bytes, so lines span many reads)
// and the table size (2 to 257); the rest is the file. Properties: a bad
// file is a UsageError naming file:line; every row read is in range (label
// 0 or 1, dense values finite and >= 0, ids inside the table); the rows and
// the error are the same whatever the buffer size.
#include <cmath>
#include <cstdint>
#include <fstream>
#include <string>
#include <vector>

#include "base/error.h"
#include "tests/fuzz/fuzz_check.h"
#include "workloads/dlrm/data/criteo_tsv.h"

namespace perflab::fuzz {
namespace {

using dlrm::CriteoRow;
using dlrm::CriteoTsvReader;

struct Outcome {
  std::vector<CriteoRow> rows;
  std::string error;  ///< The UsageError's message; empty when the file read cleanly.
};

Outcome read_all(const std::string& path, int64_t table_size, size_t buffer_bytes) {
  Outcome out;
  try {
    CriteoTsvReader reader(path, table_size, buffer_bytes);
    CriteoRow row;
    while (reader.next(row)) out.rows.push_back(row);
  } catch (const UsageError& e) {
    out.error = e.what();
  }
  return out;
}

bool same_row(const CriteoRow& a, const CriteoRow& b) {
  return a.label == b.label && a.dense == b.dense && a.categorical == b.categorical;
}

void check_row(const CriteoRow& row, int64_t table_size) {
  require(row.label == 0.0f || row.label == 1.0f, "label is 0 or 1");
  for (float x : row.dense) require(std::isfinite(x) && x >= 0.0f, "dense value finite and >= 0");
  for (int32_t id : row.categorical) require(id >= 0 && id < table_size, "id inside the table");
}

}  // namespace
}  // namespace perflab::fuzz

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace perflab::fuzz;
  if (size < 2) return 0;
  const size_t buffer_bytes = 1 + data[0] % 64;
  const int64_t table_size = 2 + data[1];
  static const std::string path = private_temp_file("criteo.tsv");
  std::ofstream(path, std::ios::binary | std::ios::trunc)
      .write(reinterpret_cast<const char*>(data + 2), static_cast<std::streamsize>(size - 2));

  const Outcome small = read_all(path, table_size, buffer_bytes);
  const Outcome whole = read_all(path, table_size, CriteoTsvReader::kDefaultBufferBytes);
  require(small.error == whole.error, "the same error whatever the buffer: '" + small.error + "' vs '" +
                                          whole.error + "'");
  require(small.rows.size() == whole.rows.size(), "the same rows whatever the buffer");
  for (size_t i = 0; i < small.rows.size(); ++i) {
    require(same_row(small.rows[i], whole.rows[i]), "row " + std::to_string(i) + " differs with the buffer");
    check_row(small.rows[i], table_size);
  }
  if (!whole.error.empty()) {
    const std::string prefix = path + ":";
    require(whole.error.compare(0, prefix.size(), prefix) == 0 && whole.error.size() > prefix.size() &&
                whole.error[prefix.size()] >= '1' && whole.error[prefix.size()] <= '9',
            "the error names file:line: " + whole.error);
  }
  return 0;
}
