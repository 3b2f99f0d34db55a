// The at-scale model (collectives/model.h) against values worked by hand
// from the formulas in docs/collectives-model.md, the published single-node
// H100 figures, and the calibration fit (collectives/model_fit.h).
#include "collectives/model.h"

#include <gtest/gtest.h>

#include "collectives/byte_size.h"
#include "collectives/model_fit.h"
#include "base/error.h"

namespace perflab::collectives {
namespace {

constexpr uint64_t k256M = uint64_t{256} << 20;

Prediction must_predict(CollOp op, NcclAlgo a, NcclProto p, uint64_t bytes, Topology t, const char* preset) {
  auto pr = predict(op, a, p, bytes, t, find_link_preset(preset));
  EXPECT_TRUE(pr) << nccl_algo_name(a) << ' ' << nccl_proto_name(p) << ": "
                  << unavailable_reason(op, a, p, t, find_link_preset(preset));
  return pr.value_or(Prediction{});
}

TEST(ModelFormulas, BusFactorsAreNcclTests) {
  EXPECT_DOUBLE_EQ(bus_factor(CollOp::kAllReduce, 8), 1.75);
  EXPECT_DOUBLE_EQ(bus_factor(CollOp::kAllGather, 8), 0.875);
  EXPECT_DOUBLE_EQ(bus_factor(CollOp::kReduceScatter, 4), 0.75);
  EXPECT_DOUBLE_EQ(bus_factor(CollOp::kBroadcast, 8), 1.0);
}

TEST(ModelFormulas, RingAllReduceOneNodeByHand) {
  // 8 x H100: latency 8.4 + 14 steps x 3.4 = 56 us; algbw 18 x 20.6 x 8/14 GB/s.
  Prediction p = must_predict(CollOp::kAllReduce, NcclAlgo::kRing, NcclProto::kSimple, k256M, {1, 8}, "h100");
  EXPECT_NEAR(p.terms.latency_us, 56.0, 1e-9);
  EXPECT_NEAR(p.terms.algbw_gbs, 370.8 * 8 / 14, 1e-9);
  const double time = 56.0 + 268435456.0 / (1000 * 370.8 * 8 / 14);
  EXPECT_NEAR(p.time_us, time, 1e-6);
  EXPECT_NEAR(p.busbw_gbs, 268435456.0 / (1000 * time) * 1.75, 1e-9);
  // LL: 6.6 + 14 x 0.6 = 15 us, bus min(141, 0.5 x 370.8) = 141 GB/s.
  Prediction ll = must_predict(CollOp::kAllReduce, NcclAlgo::kRing, NcclProto::kLL, 8, {1, 8}, "h100");
  EXPECT_NEAR(ll.terms.latency_us, 15.0, 1e-9);
  EXPECT_NEAR(ll.terms.algbw_gbs, 141.0 * 8 / 14, 1e-9);
  // LL128: 14 + 14 x 1.9 us, bus 0.92 x 370.8.
  Prediction ll128 = must_predict(CollOp::kAllReduce, NcclAlgo::kRing, NcclProto::kLL128, 8, {1, 8}, "h100");
  EXPECT_NEAR(ll128.terms.latency_us, 14.0 + 14 * 1.9, 1e-9);
  EXPECT_NEAR(ll128.terms.algbw_gbs, 0.92 * 370.8 * 8 / 14, 1e-9);
  // At 8 bytes NCCL's rule (least time) takes LL.
  auto best = predict_best_protocol(CollOp::kAllReduce, NcclAlgo::kRing, 8, {1, 8}, find_link_preset("h100"));
  ASSERT_TRUE(best);
  EXPECT_EQ(best->proto, NcclProto::kLL);
}

TEST(ModelFormulas, NvlsAllReduceOneNodeByHand) {
  // Latency: NVLink NVLS SIMPLE, 25 us (no base). Bandwidth: 0.85 x 370.8 x 8/9.
  Prediction p = must_predict(CollOp::kAllReduce, NcclAlgo::kNvls, NcclProto::kSimple, k256M, {1, 8}, "h100");
  EXPECT_NEAR(p.terms.latency_us, 25.0, 1e-9);
  EXPECT_NEAR(p.terms.algbw_gbs, 0.85 * 370.8 * 8 / 9, 1e-9);
  EXPECT_NEAR(p.time_us, 25.0 + 268435456.0 / (1000 * 0.85 * 370.8 * 8 / 9), 1e-6);
  // All-gather on one node: 0.85 x 370.8 x 8/7, latency 25 us.
  Prediction ag = must_predict(CollOp::kAllGather, NcclAlgo::kNvls, NcclProto::kSimple, k256M, {1, 8}, "h100");
  EXPECT_NEAR(ag.terms.algbw_gbs, 0.85 * 370.8 * 8 / 7, 1e-9);
}

TEST(ModelFormulas, SixtyFourNodesOfEightH100WithNdrAndSharpByHand) {
  const Topology t{64, 8};  // 512 ranks
  const char* preset = "h100-ndr-sharp";
  // Ring: 8.4 + (1022 - 126) x max(3.4, 3 x 1.0) + 126 x 14, then x1.4 (plateau:
  // 256 MiB / (16 channels x 512 ranks) >= 64 B); bus min(370.8, 8 x 50).
  Prediction ring = must_predict(CollOp::kAllReduce, NcclAlgo::kRing, NcclProto::kSimple, k256M, t, preset);
  EXPECT_NEAR(ring.terms.latency_us, (8.4 + 896 * 3.4 + 126 * 14.0) * 1.4, 1e-9);
  EXPECT_NEAR(ring.terms.algbw_gbs, 370.8 * 512 / 1022, 1e-9);
  // Tree: 8.4 + 2 x (7 x 4.0 + log2(64) x 14); bus 0.92 x 370.8, x0.5, x0.9 (tree
  // correction at log2(256 MiB / 64) = 22).
  Prediction tree = must_predict(CollOp::kAllReduce, NcclAlgo::kTree, NcclProto::kSimple, k256M, t, preset);
  EXPECT_NEAR(tree.terms.latency_us, 8.4 + 2 * (7 * 4.0 + 6 * 14.0), 1e-9);
  EXPECT_NEAR(tree.terms.algbw_gbs, 0.92 * 370.8 * 0.5 * 0.9, 1e-9);
  // CollNet chain (SHARP): 2 x 7 x 2.8 + 30; min(370.8 / 2, 8 x 50).
  Prediction chain = must_predict(CollOp::kAllReduce, NcclAlgo::kCollNetChain, NcclProto::kSimple, k256M, t, preset);
  EXPECT_NEAR(chain.terms.latency_us, 2 * 7 * 2.8 + 30, 1e-9);
  EXPECT_NEAR(chain.terms.algbw_gbs, 185.4, 1e-9);
  // CollNet direct: 2 x (3.7 + 7 x 0.4) + 31; 0.85 x min(370.8 x 8/14, 400).
  Prediction direct = must_predict(CollOp::kAllReduce, NcclAlgo::kCollNetDirect, NcclProto::kSimple, k256M, t, preset);
  EXPECT_NEAR(direct.terms.latency_us, 2 * (3.7 + 7 * 0.4) + 31, 1e-9);
  EXPECT_NEAR(direct.terms.algbw_gbs, 0.85 * 370.8 * 8 / 14, 1e-9);
  // NVLS with SHARP across nodes: 25 + 18; min(0.85 x 370.8 x 8/9, 400).
  Prediction nvls = must_predict(CollOp::kAllReduce, NcclAlgo::kNvls, NcclProto::kSimple, k256M, t, preset);
  EXPECT_NEAR(nvls.terms.latency_us, 43.0, 1e-9);
  EXPECT_NEAR(nvls.terms.algbw_gbs, 0.85 * 370.8 * 8 / 9, 1e-9);
  // NVLS tree: 25 + 2 x 6 x 20.9; min(280.16, 400 / 2, 16 x 45.5 x 512/1022).
  Prediction nvls_tree = must_predict(CollOp::kAllReduce, NcclAlgo::kNvlsTree, NcclProto::kSimple, k256M, t, preset);
  EXPECT_NEAR(nvls_tree.terms.latency_us, 25 + 12 * 20.9, 1e-9);
  EXPECT_NEAR(nvls_tree.terms.algbw_gbs, 200.0, 1e-9);
  // The ordering the numbers imply: SHARP (with NVLS) first, ring last at 512 ranks.
  EXPECT_LT(nvls.time_us, chain.time_us);
  EXPECT_LT(chain.time_us, tree.time_us);
  EXPECT_LT(tree.time_us, ring.time_us);
}

TEST(ModelFormulas, HdrHalvesTheRingButNotSharp) {
  // 8 x 25 GB/s per node: the ring's bus is the NICs (200), CollNet chain's
  // algbw min(185.4, 200): SHARP sends each byte through the network once.
  const Topology t{16, 8};
  Prediction ring = must_predict(CollOp::kAllReduce, NcclAlgo::kRing, NcclProto::kSimple, k256M, t, "h100-hdr-sharp");
  EXPECT_NEAR(ring.terms.algbw_gbs, 200.0 * 128 / 254, 1e-9);
  Prediction chain =
      must_predict(CollOp::kAllReduce, NcclAlgo::kCollNetChain, NcclProto::kSimple, k256M, t, "h100-hdr-sharp");
  EXPECT_NEAR(chain.terms.algbw_gbs, 185.4, 1e-9);
}

TEST(ModelFormulas, BroadcastIsOneRingPass) {
  // Latency base + one hop (6.6 + 0.6 for LL on NVLink); algbw = bus.
  Prediction p = must_predict(CollOp::kBroadcast, NcclAlgo::kRing, NcclProto::kLL, 1024, {1, 8}, "h200");
  EXPECT_NEAR(p.terms.latency_us, 7.2, 1e-9);
  EXPECT_NEAR(p.terms.algbw_gbs, 141.0, 1e-9);
  EXPECT_NEAR(p.busbw_gbs, p.algbw_gbs, 1e-12);
}

TEST(ModelAllToAll, OneNodeIsNvlinkBound) {
  // 8 x H100: 7 of 8 shares over 370.8 GB/s; one base and one NVLink round
  // (7 peers fit one batch of 8): 8.4 + 3.4 us.
  const AllToAllPrediction p = predict_all_to_all(k256M, {1, 8}, find_link_preset("h100"));
  EXPECT_NEAR(p.terms.latency_us, 11.8, 1e-9);
  EXPECT_DOUBLE_EQ(p.nvlink_bytes, k256M * 7.0 / 8);
  EXPECT_DOUBLE_EQ(p.network_bytes, 0);
  EXPECT_NEAR(p.terms.algbw_gbs, 370.8 * 8 / 7, 1e-9);
  EXPECT_NEAR(p.time_us, 11.8 + k256M * 7.0 / 8 / 370800.0, 1e-9);
  EXPECT_NEAR(p.busbw_gbs, p.algbw_gbs * 7 / 8, 1e-12);
  // At large sizes busbw approaches NVLink's 370.8 from below.
  EXPECT_LT(p.busbw_gbs, 370.8);
  EXPECT_GT(p.busbw_gbs, 0.98 * 370.8);
}

TEST(ModelAllToAll, AcrossNodesTheNicRailBinds) {
  // 16 x 8 on NDR: per GPU 8/128 of the buffer over NVLink, 120/128 through
  // its 50 GB/s rail; 1 NVLink round, 15 network rounds of 14 + 3 us.
  const uint64_t bytes = uint64_t{64} << 20;
  const AllToAllPrediction p = predict_all_to_all(bytes, {16, 8}, find_link_preset("h100-ndr"));
  EXPECT_NEAR(p.terms.latency_us, 8.4 + 3.4 + 15 * 17.0, 1e-9);
  EXPECT_DOUBLE_EQ(p.network_bytes, bytes * 120.0 / 128);
  EXPECT_NEAR(p.terms.algbw_gbs, 50.0 * 128 / 120, 1e-9);
  // HDR halves the rail: the transfer takes twice as long.
  const AllToAllPrediction hdr = predict_all_to_all(bytes, {16, 8}, find_link_preset("h100-hdr"));
  EXPECT_NEAR(hdr.time_us - hdr.terms.latency_us, 2 * (p.time_us - p.terms.latency_us), 1e-6);
  // SHARP does not reduce an all-to-all: the same with and without it.
  const AllToAllPrediction sharp = predict_all_to_all(bytes, {16, 8}, find_link_preset("h100-ndr-sharp"));
  EXPECT_DOUBLE_EQ(sharp.time_us, p.time_us);
}

TEST(ModelAllToAll, RefusesWhatValidateTopologyRefuses) {
  EXPECT_THROW(predict_all_to_all(1024, {1, 1}, find_link_preset("h100")), UsageError);
  EXPECT_THROW(predict_all_to_all(1024, {4, 8}, find_link_preset("h100")), UsageError);
}

// Published single-node figures (issue 10; nccl-tests on 8 x H100 SXM):
// all-reduce busbw about 370 GB/s with ring and about 480 GB/s with NVLS at
// 256 MB and above. Tolerance 5%.
TEST(ModelValidation, EightH100MatchPublishedRingAndNvlsWithinFivePercent) {
  const LinkPreset& h100 = find_link_preset("h100");
  for (uint64_t bytes = k256M; bytes <= (uint64_t{8} << 30); bytes *= 2) {
    auto ring = predict_best_protocol(CollOp::kAllReduce, NcclAlgo::kRing, bytes, {1, 8}, h100);
    auto nvls = predict_best_protocol(CollOp::kAllReduce, NcclAlgo::kNvls, bytes, {1, 8}, h100);
    ASSERT_TRUE(ring && nvls);
    EXPECT_NEAR(ring->busbw_gbs / 370.0, 1.0, 0.05) << format_bytes(bytes) << ": ring " << ring->busbw_gbs;
    EXPECT_NEAR(nvls->busbw_gbs / 480.0, 1.0, 0.05) << format_bytes(bytes) << ": NVLS " << nvls->busbw_gbs;
  }
}

TEST(ModelAvailability, ReasonsInWords) {
  const Topology one{1, 8}, many{64, 8};
  const LinkPreset& ndr = find_link_preset("h100-ndr");
  EXPECT_EQ(unavailable_reason(CollOp::kAllReduce, NcclAlgo::kRing, NcclProto::kLL, many, ndr), "");
  EXPECT_EQ(unavailable_reason(CollOp::kAllReduce, NcclAlgo::kCollNetChain, NcclProto::kSimple, many, ndr),
            "CollNet needs SHARP; preset 'h100-ndr' has none");
  EXPECT_EQ(unavailable_reason(CollOp::kAllReduce, NcclAlgo::kCollNetChain, NcclProto::kSimple, one,
                               find_link_preset("h100-ndr-sharp")),
            "CollNet needs at least 2 nodes (NCCL_COLLNET_NODE_THRESHOLD, default 2)");
  EXPECT_EQ(unavailable_reason(CollOp::kAllReduce, NcclAlgo::kNvls, NcclProto::kLL, one, ndr),
            "NVLS runs only SIMPLE");
  EXPECT_EQ(unavailable_reason(CollOp::kAllReduce, NcclAlgo::kNvls, NcclProto::kSimple, many, ndr),
            "NVLS across nodes needs CollNet (SHARP); NVLS_TREE runs without it");
  EXPECT_EQ(unavailable_reason(CollOp::kAllReduce, NcclAlgo::kNvlsTree, NcclProto::kSimple, one, ndr),
            "NVLS_TREE needs at least 2 nodes");
  EXPECT_EQ(unavailable_reason(CollOp::kBroadcast, NcclAlgo::kTree, NcclProto::kSimple, one, ndr),
            "NCCL runs broadcast with RING only");
  EXPECT_EQ(unavailable_reason(CollOp::kAllGather, NcclAlgo::kTree, NcclProto::kSimple, one, ndr),
            "TREE is modelled for all_reduce only");
  EXPECT_EQ(unavailable_reason(CollOp::kAllReduce, NcclAlgo::kPat, NcclProto::kSimple, one, ndr),
            "PAT is not modelled");
  EXPECT_FALSE(predict(CollOp::kAllReduce, NcclAlgo::kNvls, NcclProto::kLL, 8, one, ndr));
}

TEST(ModelInput, PresetsTopologiesAndNames) {
  EXPECT_EQ(link_presets().size(), 10u);
  EXPECT_DOUBLE_EQ(find_link_preset("h200-ndr").nic_gbs(), 50.0);
  EXPECT_DOUBLE_EQ(find_link_preset("h100-hdr").nic_gbs(), 25.0);
  EXPECT_TRUE(find_link_preset("h100-hdr-sharp").sharp);
  EXPECT_FALSE(find_link_preset("h100").sharp);
  EXPECT_NEAR(find_link_preset("h200").nvlink_gbs(), 370.8, 1e-9);
  try {
    find_link_preset("a100");
    FAIL();
  } catch (const UsageError& e) {
    EXPECT_EQ(std::string(e.what()).rfind("--link: unknown preset 'a100' (one of: h100, h100-hdr, ", 0), 0u) << e.what();
  }
  const LinkPreset& h100 = find_link_preset("h100");
  EXPECT_THROW(validate_topology({0, 8}, h100), UsageError);
  EXPECT_THROW(validate_topology({1, 0}, h100), UsageError);
  EXPECT_THROW(validate_topology({1, 1}, h100), UsageError);
  EXPECT_THROW(validate_topology({2, 8}, h100), UsageError);  // no network
  EXPECT_THROW(validate_topology({1 << 20, 8}, find_link_preset("h100-ndr")), UsageError);
  EXPECT_NO_THROW(validate_topology({2, 8}, find_link_preset("h100-ndr")));
  EXPECT_EQ(parse_coll_op("AllReduce"), CollOp::kAllReduce);
  EXPECT_EQ(parse_coll_op("reduce_scatter"), CollOp::kReduceScatter);
  EXPECT_FALSE(parse_coll_op("all_to_all"));
  EXPECT_EQ(parse_model_algo("sharp"), NcclAlgo::kCollNetChain);
  EXPECT_EQ(parse_model_algo("nvls-tree"), NcclAlgo::kNvlsTree);
  EXPECT_EQ(parse_model_algo("ring"), NcclAlgo::kRing);
  EXPECT_FALSE(parse_model_algo("1"));
  EXPECT_FALSE(parse_model_algo("butterfly"));
}

TEST(ByteSizes, ParseListsAndFormat) {
  EXPECT_EQ(parse_byte_size("8"), 8u);
  EXPECT_EQ(parse_byte_size("1K"), 1024u);
  EXPECT_EQ(parse_byte_size("256m"), uint64_t{256} << 20);
  EXPECT_EQ(parse_byte_size("8G"), uint64_t{8} << 30);
  for (const char* bad : {"", "0", "-1", "1.5K", "K", "8X", "99999999999999999999", "2000T"}) {
    EXPECT_THROW(parse_byte_size(bad), UsageError) << bad;
  }
  EXPECT_EQ(parse_size_list("8,1K..8K"), (std::vector<uint64_t>{8, 1024, 2048, 4096, 8192}));
  EXPECT_EQ(parse_size_list("1K..1M", 4), (std::vector<uint64_t>{1024, 4096, 16384, 65536, 262144, 1048576}));
  EXPECT_EQ(parse_size_list("4K,1K,4K"), (std::vector<uint64_t>{1024, 4096}));
  EXPECT_THROW(parse_size_list("8K..1K"), UsageError);
  EXPECT_THROW(parse_size_list("1K,,2K"), UsageError);
  EXPECT_THROW(parse_size_list("1K..1M", 1), UsageError);
  EXPECT_EQ(parse_size_list("1..1T").size(), 41u);
  std::string many;
  for (int i = 1; i <= 4097; ++i) many += std::to_string(i) + ",";
  many.pop_back();
  EXPECT_THROW(parse_size_list(many), UsageError);
  EXPECT_EQ(format_bytes(8), "8 B");
  EXPECT_EQ(format_bytes(1024), "1 KiB");
  EXPECT_EQ(format_bytes(uint64_t{256} << 20), "256 MiB");
  EXPECT_EQ(format_bytes(uint64_t{3} << 29), "1.5 GiB");
}

/// Points made by the model itself with known multipliers.
std::vector<MeasuredPoint> synthetic(double latency_scale, double transfer_scale, const LinkPreset& link) {
  std::vector<MeasuredPoint> points;
  for (uint64_t bytes = 1024; bytes <= (uint64_t{1} << 30); bytes *= 8) {
    for (int nodes : {2, 4}) {
      auto pr = predict_best_protocol(CollOp::kAllReduce, NcclAlgo::kRing, bytes, {nodes, 8}, link);
      const double transfer = static_cast<double>(bytes) / (1000 * pr->terms.algbw_gbs);
      points.push_back({CollOp::kAllReduce, nodes * 8, nodes, bytes,
                        latency_scale * pr->terms.latency_us + transfer_scale * transfer, NcclAlgo::kRing,
                        "synthetic"});
    }
  }
  return points;
}

TEST(ModelCalibration, RecoversKnownMultipliers) {
  const LinkPreset& link = find_link_preset("h100-ndr");
  CalibrationResult r = calibrate(synthetic(2.0, 1.25, link), link);
  ASSERT_EQ(r.fits.size(), 1u);
  const TermFit& f = r.fits[0];
  EXPECT_TRUE(f.separated);
  EXPECT_EQ(f.points, 14);  // 7 sizes (1 KiB x 8^k to 256 MiB) x 2 node counts
  EXPECT_NEAR(f.scales.latency_scale, 2.0, 1e-6);
  EXPECT_NEAR(f.scales.transfer_scale, 1.25, 1e-6);
  EXPECT_LT(f.rms_after, 1e-9);
  EXPECT_GT(f.rms_before, 0.1);
  EXPECT_GE(f.max_before, f.rms_before);
  // Applied, the calibrated model predicts a size and scale it was not fitted on.
  const Topology t{32, 8};
  auto plain = predict(CollOp::kAllReduce, NcclAlgo::kRing, NcclProto::kSimple, 3 << 20, t, link);
  auto tuned = predict(CollOp::kAllReduce, NcclAlgo::kRing, NcclProto::kSimple, 3 << 20, t, link, r.calibration);
  ASSERT_TRUE(plain && tuned);
  EXPECT_NEAR(tuned->time_us,
              2.0 * plain->terms.latency_us + 1.25 * (3 << 20) / (1000 * plain->terms.algbw_gbs), 1e-6);
}

TEST(ModelCalibration, OneSizeFitsOneCommonScale) {
  const LinkPreset& link = find_link_preset("h100");
  auto pr = predict_best_protocol(CollOp::kAllReduce, NcclAlgo::kRing, 1 << 20, {1, 8}, link);
  std::vector<MeasuredPoint> points = {
      {CollOp::kAllReduce, 8, 1, 1 << 20, 1.5 * pr->time_us, NcclAlgo::kRing, "a.csv:2"},
      {CollOp::kAllReduce, 8, 1, 1 << 20, 1.5 * pr->time_us, NcclAlgo::kRing, "a.csv:3"}};
  CalibrationResult r = calibrate(points, link);
  EXPECT_FALSE(r.fits[0].separated);
  EXPECT_NEAR(r.fits[0].scales.latency_scale, 1.5, 1e-9);
  EXPECT_NEAR(r.fits[0].scales.transfer_scale, 1.5, 1e-9);
  EXPECT_NEAR(r.fits[0].rms_before, 1.0 / 3.0, 1e-9);
}

TEST(ModelCalibration, PointsTheModelCannotPlaceAreOneLine) {
  const LinkPreset& link = find_link_preset("h100-ndr");
  auto expect_error = [&](MeasuredPoint p, const std::string& message) {
    try {
      calibrate({p}, link);
      ADD_FAILURE() << "no error for " << message;
    } catch (const UsageError& e) {
      EXPECT_EQ(e.what(), message);
    }
  };
  expect_error({CollOp::kAllReduce, 12, 5, 1024, 10, NcclAlgo::kRing, "m.csv:4"},
               "m.csv:4: 12 ranks on 5 nodes: the model needs at least 2 ranks, the same number on every node");
  expect_error({CollOp::kAllReduce, 16, 2, 1024, 0, NcclAlgo::kRing, "m.csv:5"},
               "m.csv:5: time_us and bytes must be positive");
  expect_error({CollOp::kAllReduce, 16, 2, 1024, 10, NcclAlgo::kCollNetChain, "m.csv:6"},
               "m.csv:6: all_reduce COLLNET_CHAIN on 2 nodes x 8 GPUs with preset 'h100-ndr': CollNet needs "
               "SHARP; preset 'h100-ndr' has none");
  EXPECT_THROW(calibrate({}, link), UsageError);
}

}  // namespace
}  // namespace perflab::collectives
