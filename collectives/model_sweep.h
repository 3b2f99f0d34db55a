// The model over a size range (collectives/model.h): for each size every
// algorithm at its fastest protocol, the best algorithm, the sizes where the
// best changes, and the sentence `perflab model` leads with. Pure.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "collectives/model.h"

namespace perflab::collectives {

/// What to predict.
struct ModelQuery {
  CollOp op = CollOp::kAllReduce;
  Topology topo;
  std::string link = "h100";
  std::vector<uint64_t> sizes;   ///< Bytes, ascending.
  std::vector<NcclAlgo> algos;   ///< Empty: TREE, RING, COLLNET_DIRECT, COLLNET_CHAIN, NVLS, NVLS_TREE.
  std::vector<NcclProto> protos; ///< Empty: LL, LL128, SIMPLE.
  Calibration calibration;
};

/// One size: a prediction per algorithm of the table (parallel to
/// ModelTable::algos), and the index of the fastest.
struct ModelRow {
  uint64_t bytes = 0;
  std::vector<std::optional<Prediction>> by_algo;
  int best = -1;
};

struct ModelTable {
  ModelQuery query;
  LinkPreset link;
  std::vector<NcclAlgo> algos;                              ///< Those that run here.
  std::vector<std::pair<NcclAlgo, std::string>> not_run;    ///< The others, and why.
  std::vector<ModelRow> rows;
};

/// The best algorithm changes between two neighbouring sizes.
struct Crossover {
  uint64_t last_bytes = 0;   ///< Largest size where `before` is best.
  uint64_t first_bytes = 0;  ///< Smallest size where `after` is best.
  NcclAlgo before = NcclAlgo::kRing, after = NcclAlgo::kRing;
};

/// Runs the model. UsageError (one line) for an unknown preset, a bad
/// topology, no sizes, or no requested algorithm that runs here.
ModelTable run_model(const ModelQuery& query);

std::vector<Crossover> crossovers(const ModelTable& table);

/// How the sentence and tables name an algorithm: "ring", "tree", "SHARP
/// (CollNet direct)", "SHARP (CollNet chain)", "NVLS", "NVLS tree".
std::string algo_label(NcclAlgo algo);

/// "at 64 nodes x 8 H100, 256 MiB all_reduce: ring 8.19 ms, tree 1.98 ms,
/// SHARP (CollNet chain) 1.52 ms, ...; best NVLS" at the table's size
/// nearest to `reference_bytes` (256 MiB by default).
std::string model_sentence(const ModelTable& table, uint64_t reference_bytes = uint64_t{256} << 20);

/// "12.3 us", "4.56 ms", "1.23 s": three significant digits.
std::string format_time_us(double us);

}  // namespace perflab::collectives
