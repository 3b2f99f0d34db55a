// DLRM's registered presets: each resolves, and its quality target is the
// one the shipped compliance rules (workloads/dlrm/rules/dlrm.yaml) check.
#include <fstream>
#include <map>
#include <regex>
#include <sstream>

#include <gtest/gtest.h>

#include "base/error.h"
#include "harness/registry.h"
#include "workloads/dlrm/dlrm_benchmark.h"
#include "workloads/dlrm/model.h"

namespace perflab {
namespace {

std::map<std::string, double> rules_targets() {
  std::ifstream in(std::string(PERFLAB_SOURCE_DIR) + "/workloads/dlrm/rules/dlrm.yaml");
  std::stringstream text;
  text << in.rdbuf();
  std::map<std::string, double> out;
  std::regex line(R"(^\s*'([a-z0-9_]+)':\s*([0-9.]+),\s*$)");
  std::string s;
  while (std::getline(text, s)) {
    std::smatch m;
    if (std::regex_match(s, m, line)) out[m[1]] = std::stod(m[2]);
  }
  return out;
}

TEST(DlrmPresets, TargetsMatchTheShippedRules) {
  const WorkloadInfo& info = Registry::instance().get("dlrm");
  auto targets = rules_targets();
  ASSERT_EQ(targets.size(), info.presets.size()) << "one rules target per preset";
  for (const Preset& p : info.presets) {
    ParamValues v = resolve_params("dlrm", info.params, &p, {});
    ASSERT_TRUE(targets.count(p.name)) << "no rules target for preset " << p.name;
    EXPECT_DOUBLE_EQ(v.get_float("target_auc"), targets[p.name]) << "preset " << p.name;
  }
}

TEST(DlrmPresets, LayerListsParse) {
  EXPECT_EQ(dlrm::parse_layers("top_mlp", "1024-1024-512-256-1"),
            (std::vector<int>{1024, 1024, 512, 256, 1}));
  EXPECT_THROW(dlrm::parse_layers("top_mlp", "1024--1"), UsageError);
  EXPECT_THROW(dlrm::parse_layers("top_mlp", "a-1"), UsageError);
  EXPECT_THROW(dlrm::parse_layers("top_mlp", ""), UsageError);
  EXPECT_THROW(dlrm::parse_layers("top_mlp", "0-1"), UsageError);
}

}  // namespace
}  // namespace perflab

namespace perflab::dlrm {
namespace {

TEST(DlrmModelFacts, CountsMatchTheBuiltModel) {
  ModelShape shape;
  shape.table_sizes = {5, 7, 3};
  shape.embed_dim = 4;
  shape.bottom_mlp = {8, 4};
  shape.top_mlp = {6, 1};
  CpuModel model(shape, 1);
  int64_t dense = 0;
  for (const auto& p : model.dense_parameters()) dense += p.size;
  EXPECT_EQ(parameter_count(shape), dense + (5 + 7 + 3) * 4);
  // Bottom 13*8 + 8*4, top (4 + 6 pairs)*6 + 6*1, interaction 6 pairs of dim 4.
  EXPECT_DOUBLE_EQ(forward_flops_per_sample(shape), 2.0 * (13 * 8 + 8 * 4 + 10 * 6 + 6 + 6 * 4));
  EXPECT_DOUBLE_EQ(training_flops_per_iteration(shape, 10), 30.0 * forward_flops_per_sample(shape));
  // Dense parameters: bottom 13*8+8 + 8*4+4 = 148, top 10*6+6 + 6*1+1 = 73 -> 221.
  // 10 samples: embeddings 3*10*3*4 values, dense 4*221 values (4 bytes each),
  // inputs 10*(13 + 3 + 1)*4 bytes.
  EXPECT_DOUBLE_EQ(training_bytes_floor_per_iteration(shape, 10, 4),
                   3.0 * 10 * 3 * 4 * 4 + 4.0 * 221 * 4 + 10.0 * 17 * 4);
}

}  // namespace
}  // namespace perflab::dlrm
