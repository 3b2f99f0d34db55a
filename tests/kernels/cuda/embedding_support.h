// Shared by the CUDA embedding's tests (embedding_cuda_test.cc: the checks
// and the gather; embedding_update_cuda_test.cc: the sort and the sparse
// SGD): problem shapes with no, some, heavy and skewed duplication of ids,
// their seeded host inputs, and device copies with the Arguments that point
// at them.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "base/random.h"
#include "kernels/cuda/device_buffer.h"
#include "kernels/cuda/embedding.h"

namespace perflab::kernels::cuda::embedding_test {
/// kZipf: 4,099 rows a table, ids skewed as DLRM's data are (a few hot rows
/// read hundreds of times, many rows once or twice): long and short runs
/// side by side in the sorted order.
enum class Duplication { kNone, kRandom, kHeavy, kZipf };

struct Problem {
  int64_t batch;
  int num_tables;
  int64_t dim;
  Duplication duplication;

  std::string describe() const {
    const char* dup = duplication == Duplication::kNone     ? "none"
                      : duplication == Duplication::kRandom ? "random"
                      : duplication == Duplication::kHeavy  ? "heavy"
                                                            : "zipf";
    std::ostringstream s;
    s << "B=" << batch << " T=" << num_tables << " D=" << dim << " duplication=" << dup;
    return s.str();
  }
};

/// Host copies of one problem's inputs: all tables in one flat array.
struct HostInputs {
  std::vector<int64_t> rows;     // per table
  std::vector<int64_t> offsets;  // first row of each table
  int64_t total_rows = 0;
  std::vector<float> tables;  // [total_rows, dim]
  std::vector<int32_t> ids;   // [batch, T]
  std::vector<float> grad;    // [batch, T, dim]
};

inline HostInputs make_inputs(const Problem& p, uint32_t seed) {
  HostInputs in;
  for (int t = 0; t < p.num_tables; ++t) {
    int64_t rows = 0;
    switch (p.duplication) {
      case Duplication::kNone:
        rows = p.batch + t;
        break;  // id = b: every row once
      case Duplication::kRandom:
        rows = 1 + (t * 131 + 17) % 97;
        break;  // 1..97 rows
      case Duplication::kHeavy:
        rows = 1 + t % 3;
        break;  // 1..3 rows
      case Duplication::kZipf:
        rows = 4099;
        break;
    }
    in.offsets.push_back(in.total_rows);
    in.rows.push_back(rows);
    in.total_rows += rows;
  }
  in.tables = test_support::random_vector(static_cast<size_t>(in.total_rows * p.dim), seed);
  in.grad =
      test_support::random_vector(static_cast<size_t>(p.batch * p.num_tables * p.dim), seed + 1);
  std::mt19937 gen(seed + 2);
  in.ids.resize(static_cast<size_t>(p.batch * p.num_tables));
  for (int64_t b = 0; b < p.batch; ++b) {
    for (int t = 0; t < p.num_tables; ++t) {
      const int64_t rows = in.rows[static_cast<size_t>(t)];
      int64_t id = 0;
      switch (p.duplication) {
        case Duplication::kNone:
          id = b;
          break;
        case Duplication::kRandom:
          id = static_cast<int64_t>(gen() % static_cast<uint32_t>(rows));
          break;
        case Duplication::kHeavy:
          id = b % 5 == 0 ? rows - 1 : 0;
          break;
        case Duplication::kZipf: {
          // rows * x^4 for x uniform in [0, 1): row 0 takes 12.5% of a
          // table's reads; at batch 8,193 rows past about 2,000 are read
          // less than once on average.
          const double x = static_cast<double>(gen()) / 4294967296.0;
          id = std::min<int64_t>(rows - 1, static_cast<int64_t>(static_cast<double>(rows) * x * x * x * x));
          break;
        }
      }
      in.ids[static_cast<size_t>(b * p.num_tables + t)] = static_cast<int32_t>(id);
    }
  }
  return in;
}

inline std::vector<float*> table_pointers(std::vector<float>& flat, const HostInputs& in, int64_t dim) {
  std::vector<float*> ptrs;
  for (int64_t offset : in.offsets) ptrs.push_back(flat.data() + offset * dim);
  return ptrs;
}

/// Device copies plus the Arguments that point at them.
struct DeviceInputs {
  DeviceBuffer<float> tables;
  DeviceBuffer<int64_t> offsets;
  DeviceBuffer<int32_t> ids;
  DeviceBuffer<float> grad;
  DeviceBuffer<float> lr;
  EmbeddingArguments args;

  DeviceInputs(const Problem& p, const HostInputs& in, float learning_rate)
      : tables(in.tables),
        offsets(in.offsets),
        ids(in.ids),
        grad(in.grad),
        lr(std::vector<float>{learning_rate}) {
    args.batch = p.batch;
    args.num_tables = p.num_tables;
    args.dim = p.dim;
    args.total_rows = in.total_rows;
    args.tables = tables.data();
    args.table_row_offsets = offsets.data();
    args.ids = ids.data();
    args.grad = grad.data();
    args.lr_device = lr.data();
  }
};

/// Round to nearest even, as __float2bfloat16_rn (inputs here are finite).
inline uint16_t bf16_bits(float value) {
  uint32_t u = 0;
  std::memcpy(&u, &value, sizeof(u));
  u += 0x7fffu + ((u >> 16) & 1u);
  return static_cast<uint16_t>(u >> 16);
}

}  // namespace perflab::kernels::cuda::embedding_test
