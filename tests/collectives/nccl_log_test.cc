// The NCCL debug-log reader and the SHARP verdict (collectives/nccl_log.h) on
// fixtures written from NCCL 2.19-2.28's message formats
// (tests/collectives/fixtures/*.log; docs/collectives-model.md lists the
// messages and their sources).
#include "collectives/nccl_log.h"

#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <sstream>

#include <gtest/gtest.h>

#include "base/error.h"

namespace perflab::collectives {
namespace {

NcclLogFacts fixture(const std::string& name) {
  return read_nccl_log(std::string(PERFLAB_SOURCE_DIR) + "/tests/collectives/fixtures/" + name);
}

/// The choices as "op bytes ALGO PROTO xcount" lines, for whole-list checks.
std::string choices(const NcclLogFacts& f) {
  std::ostringstream out;
  for (const NcclChoice& c : f.choices) {
    out << (c.op.empty() ? "-" : c.op) << ' ' << c.bytes << ' ' << nccl_algo_name(c.algo) << ' '
        << nccl_proto_name(c.proto) << " x" << c.count << '\n';
  }
  return out.str();
}

TEST(NcclAlgoNames, NumericIndicesFollowNcclsEnumOrder) {
  const char* names[] = {"TREE", "RING", "COLLNET_DIRECT", "COLLNET_CHAIN", "NVLS", "NVLS_TREE", "PAT"};
  for (int i = 0; i < 7; ++i) {
    ASSERT_EQ(parse_nccl_algo(std::to_string(i)), static_cast<NcclAlgo>(i)) << i;
    EXPECT_EQ(nccl_algo_name(static_cast<NcclAlgo>(i)), names[i]);
    EXPECT_EQ(parse_nccl_algo(names[i]), static_cast<NcclAlgo>(i));
  }
  EXPECT_EQ(parse_nccl_algo("nvls_tree"), NcclAlgo::kNvlsTree);
  EXPECT_FALSE(parse_nccl_algo("7"));
  EXPECT_FALSE(parse_nccl_algo("-1"));
  EXPECT_FALSE(parse_nccl_algo("RINGS"));
  EXPECT_EQ(parse_nccl_proto("0"), NcclProto::kLL);
  EXPECT_EQ(parse_nccl_proto("1"), NcclProto::kLL128);
  EXPECT_EQ(parse_nccl_proto("2"), NcclProto::kSimple);
  EXPECT_EQ(parse_nccl_proto("Simple"), NcclProto::kSimple);
  EXPECT_FALSE(parse_nccl_proto("3"));
  EXPECT_TRUE(is_in_network(NcclAlgo::kCollNetChain));
  EXPECT_TRUE(is_in_network(NcclAlgo::kNvlsTree));
  EXPECT_FALSE(is_in_network(NcclAlgo::kTree));
  EXPECT_FALSE(is_in_network(NcclAlgo::kPat));
}

TEST(NcclLog, SingleGpuWithoutPlugin) {
  NcclLogFacts f = fixture("single_gpu_no_plugin_2.21.log");
  EXPECT_EQ(f.version, "2.21.5+cuda12.4");
  EXPECT_EQ(f.version_code, 22105);
  EXPECT_EQ(f.nranks, 1);
  EXPECT_EQ(f.nnodes, 1);
  EXPECT_EQ(f.network, "Socket");
  EXPECT_TRUE(f.net_plugin_missing);
  EXPECT_EQ(f.net_plugin, "");
  EXPECT_EQ(f.collnet_plugin, "");
  EXPECT_EQ(f.nvls_multicast, false);
  EXPECT_EQ(f.channels.coll, 32);
  EXPECT_EQ(f.channels.collnet, 32);
  EXPECT_EQ(f.channels.nvls, 0);
  EXPECT_EQ(f.channels.p2p, 32);
  EXPECT_EQ(f.channels.p2p_per_peer, 32);
  EXPECT_TRUE(f.choices.empty());
  EXPECT_EQ(f.unrecognised, 0);
  EXPECT_EQ(f.lines, 16);

  SharpVerdict v = sharp_verdict(true, f, "nccl", 1, 1);
  EXPECT_TRUE(v.requested);
  EXPECT_FALSE(v.in_effect);
  EXPECT_EQ(v.reason, "fewer than 2 GPUs");
  EXPECT_EQ(sharp_verdict(true, f, "single", 1, 1).reason, "single-rank backend: fewer than 2 GPUs");
}

TEST(NcclLog, EightGpusWithNvlsNamedForm) {
  NcclLogFacts f = fixture("nvls_8gpu_2.28.log");
  EXPECT_EQ(f.version, "2.28.9+cuda12.9");
  EXPECT_EQ(f.version_code, 22809);
  EXPECT_EQ(f.nranks, 8);
  EXPECT_EQ(f.nnodes, 1);
  EXPECT_EQ(f.network, "IB");
  EXPECT_TRUE(f.net_plugin_missing);
  EXPECT_EQ(f.nvls_multicast, true);
  EXPECT_EQ(f.collnet_node_threshold, 2);
  EXPECT_EQ(f.channels.coll, 24);
  EXPECT_EQ(f.channels.nvls, 16);
  EXPECT_EQ(f.env.at("NCCL_NVLS_ENABLE"), "1");
  EXPECT_EQ(f.env.at("NCCL_COLLNET_ENABLE"), "1");
  EXPECT_EQ(choices(f),
            "AllReduce 8 RING LL x2\n"
            "AllReduce 65536 RING LL x1\n"
            "AllReduce 1048576 NVLS SIMPLE x1\n"
            "AllReduce 268435456 NVLS SIMPLE x2\n"
            "AllGather 1048576 RING LL128 x1\n"
            "ReduceScatter 1048576 NVLS SIMPLE x1\n");
  const NcclChoice& big = f.choices[3];
  EXPECT_EQ(big.channel_lo, 0);
  EXPECT_EQ(big.channel_hi, 15);
  EXPECT_FALSE(big.predicted_us);
  EXPECT_EQ(big.line, 19);
  EXPECT_EQ(big.last_line, 20);

  auto c = nccl_choice_for(f, "all_gather", 1048576);
  ASSERT_TRUE(c);
  EXPECT_EQ(c->algo, NcclAlgo::kRing);
  EXPECT_EQ(c->proto, NcclProto::kLL128);
  EXPECT_FALSE(nccl_choice_for(f, "all_gather", 8));
  EXPECT_FALSE(nccl_choice_for(f, "broadcast", 1048576));

  SharpVerdict v = sharp_verdict(true, f, "nccl", 8, 1);
  EXPECT_TRUE(v.in_effect);
  EXPECT_EQ(v.reason, "NCCL chose NVLS for 3 of the 6 op/size pairs logged (from 1 MiB)");
  // Asked off, NVLS chosen all the same: reported, not hidden.
  SharpVerdict off = sharp_verdict(false, f, "nccl", 8, 1);
  EXPECT_FALSE(off.requested);
  EXPECT_TRUE(off.in_effect);
  EXPECT_EQ(off.reason, "not requested, yet NCCL chose NVLS for 3 of the 6 op/size pairs logged (from 1 MiB)");
  EXPECT_EQ(sharp_verdict(true, f, "mpi", 8, 1).reason, "MPI backend");
  EXPECT_FALSE(sharp_verdict(true, f, "mpi", 8, 1).in_effect);
}

TEST(NcclLog, TwoNodesWithTheSharpPluginNumericForm) {
  NcclLogFacts f = fixture("collnet_sharp_2node_2.21.log");
  EXPECT_EQ(f.version_code, 22105);
  EXPECT_EQ(f.nranks, 16);
  EXPECT_EQ(f.nnodes, 2);
  EXPECT_EQ(f.net_plugin, "IBext_v8");
  EXPECT_FALSE(f.net_plugin_missing);
  EXPECT_EQ(f.collnet_plugin, "SHARP");
  EXPECT_TRUE(f.collnet_connected);
  EXPECT_FALSE(f.collnet_init_failed);
  EXPECT_FALSE(f.collnet_node_threshold);
  EXPECT_EQ(f.network, "IBext_v8");
  // Algo 1 proto 0 = RING LL; 0/1 = TREE LL128; 3/2 = COLLNET_CHAIN SIMPLE; 5/2 = NVLS_TREE SIMPLE.
  EXPECT_EQ(choices(f),
            "- 8 RING LL x1\n"
            "- 65536 TREE LL128 x1\n"
            "- 1048576 COLLNET_CHAIN SIMPLE x1\n"
            "- 16777216 COLLNET_CHAIN SIMPLE x1\n"
            "- 268435456 NVLS_TREE SIMPLE x1\n");
  ASSERT_TRUE(f.choices[2].predicted_us);
  EXPECT_NEAR(*f.choices[2].predicted_us, 48.3, 1e-4);
  // The 2.21 line names no op: it matches whichever op the caller ran.
  auto c = nccl_choice_for(f, "all_reduce", 16777216);
  ASSERT_TRUE(c);
  EXPECT_EQ(c->algo, NcclAlgo::kCollNetChain);

  SharpVerdict v = sharp_verdict(true, f, "nccl", 16, 2);
  EXPECT_TRUE(v.in_effect);
  EXPECT_EQ(v.reason, "NCCL chose COLLNET_CHAIN and NVLS_TREE for 3 of the 5 op/size pairs logged (from 1 MiB)");
  // nranks/nnodes <= 0 take the log's.
  EXPECT_TRUE(sharp_verdict(true, f, "nccl", 0, 0).in_effect);
}

TEST(NcclLog, CollNetRequestedButNoPlugin) {
  NcclLogFacts f = fixture("collnet_plugin_missing_2.23.log");
  EXPECT_EQ(f.version_code, 22304);
  EXPECT_EQ(f.nnodes, 2);
  EXPECT_TRUE(f.net_plugin_missing);
  EXPECT_EQ(f.collnet_plugin, "");
  EXPECT_EQ(f.nvls_multicast, false);
  EXPECT_EQ(choices(f),
            "AllReduce 1024 TREE LL x1\n"
            "AllReduce 1048576 RING SIMPLE x1\n"
            "AllReduce 67108864 RING SIMPLE x1\n"
            "Broadcast 1048576 RING SIMPLE x1\n");
  SharpVerdict v = sharp_verdict(true, f, "nccl", 8, 2);
  EXPECT_FALSE(v.in_effect);
  EXPECT_EQ(v.reason,
            "no CollNet plugin loaded; NVLS multicast not available; NCCL chose TREE and RING for every size");
}

TEST(NcclLog, OneNodeIsBelowTheCollNetThreshold) {
  NcclLogFacts f = fixture("below_threshold_pcie_2.24.log");
  EXPECT_EQ(f.net_plugin, "IBext_v9");
  EXPECT_EQ(f.collnet_plugin, "SHARP");
  EXPECT_EQ(f.collnet_node_threshold, 2);
  EXPECT_EQ(f.nnodes, 1);
  // Single node: CollNet does not apply, so the reason is NVLS's, then NCCL's choice.
  SharpVerdict v = sharp_verdict(true, f, "nccl", 4, 1);
  EXPECT_FALSE(v.in_effect);
  EXPECT_EQ(v.reason, "NVLS multicast not available; NCCL chose RING for every size");
  // Across nodes, under a raised threshold, the threshold is named with its numbers.
  NcclLogFacts raised = parse_nccl_log(
      "h:1:2 [0] NCCL INFO NET/Plugin: Loaded collnet plugin SHARP (v9)\n"
      "h:1:2 [0] NCCL INFO NCCL_COLLNET_NODE_THRESHOLD set by environment to 4.\n"
      "h:1:2 [0] NCCL INFO Communicator has 3 nodes which is less than CollNet node threshold 4, disabling CollNet\n"
      "h:1:2 [0] NCCL INFO AllReduce: 4096 Bytes -> Algo TREE proto LL channel{Lo..Hi}={0..1}\n");
  EXPECT_EQ(raised.nnodes, 3);
  EXPECT_EQ(raised.env.at("NCCL_COLLNET_NODE_THRESHOLD"), "4");
  EXPECT_EQ(sharp_verdict(true, raised, "nccl", 24, 3).reason,
            "below CollNet's node threshold (3 nodes < NCCL_COLLNET_NODE_THRESHOLD 4); NCCL chose TREE for every "
            "size");
}

TEST(NcclLog, OldVersionsDoNotLogTheirChoice) {
  NcclLogFacts f = fixture("old_no_tuning_2.19.log");
  EXPECT_EQ(f.version, "2.19.3+cuda12.2");  // the bare VERSION-level line
  EXPECT_EQ(f.version_code, 21903);
  EXPECT_TRUE(f.net_plugin_missing);
  EXPECT_EQ(f.nranks, 8);
  EXPECT_FALSE(f.nnodes);
  EXPECT_EQ(f.channels.coll, 32);
  EXPECT_FALSE(f.channels.collnet);  // 2.19 prints no collnet count
  EXPECT_EQ(f.channels.nvls, 16);
  SharpVerdict v = sharp_verdict(true, f, "nccl", 8, 1);
  EXPECT_FALSE(v.in_effect);
  EXPECT_EQ(v.reason,
            "NCCL 2.19.3+cuda12.2 does not log its algorithm choices (they are logged from NCCL 2.20), so "
            "in-network reduction cannot be confirmed");
}

TEST(NcclLog, GarbageLinesAreSkippedNotMisread) {
  NcclLogFacts f = fixture("garbage_interleaved_2.22.log");
  EXPECT_EQ(f.version, "2.22.3+cuda12.5");  // behind a timestamp prefix
  EXPECT_EQ(f.nranks, 4);
  EXPECT_EQ(f.nnodes, 2);
  EXPECT_EQ(f.network, "IB");
  EXPECT_TRUE(f.collnet_init_failed);
  EXPECT_EQ(f.env.at("NCCL_NVLS_ENABLE"), "0");
  EXPECT_FALSE(f.channels.coll);  // "x collnet channels" is not a count
  ASSERT_EQ(f.warnings.size(), 1u);
  EXPECT_EQ(f.warnings[0], "Cannot initialize CollNet, using point-to-point network instead");
  // Algo 9, a 23-digit size, a line cut short and binary bytes are all left out.
  EXPECT_EQ(choices(f), "- 2097152 RING SIMPLE x1\n- 4096 TREE LL x1\n");
  EXPECT_EQ(f.unrecognised, 3);  // mpirun's lines and ssh's warning
  SharpVerdict v = sharp_verdict(true, f, "nccl", 4, 2);
  EXPECT_EQ(v.reason,
            "no CollNet plugin loaded; CollNet could not be initialised; NCCL_NVLS_ENABLE=0; NCCL chose TREE "
            "and RING for every size");
}

TEST(NcclLog, EmptyAndTuningLessLogs) {
  NcclLogFacts f = parse_nccl_log("");
  EXPECT_EQ(f.lines, 0);
  EXPECT_TRUE(f.version.empty());
  f = parse_nccl_log("h:1:1 [0] NCCL INFO NCCL version 2.26.5+cuda12.8\nh:1:1 [0] NCCL INFO comm 0x1 rank 0 "
                     "nRanks 2 nNodes 1 localRanks 2 localRank 0 MNNVL 0\n");
  EXPECT_EQ(f.version_code, 22605);
  SharpVerdict v = sharp_verdict(true, f, "nccl", 2, 1);
  EXPECT_FALSE(v.in_effect);
  EXPECT_EQ(v.reason,
            "the NCCL log shows no algorithm choice (NCCL_DEBUG_SUBSYS without TUNING, or no collective ran), "
            "so in-network reduction cannot be confirmed");
  EXPECT_EQ(sharp_verdict(false, f, "nccl", 2, 1).reason, "not requested");
}

TEST(NcclLog, ExternalPluginsOfNccl227And228) {
  // 2.27: "external plugin NAME"; 2.28: "external network plugin PATH".
  NcclLogFacts f = parse_nccl_log(
      "h:1:2 [0] NCCL INFO NET/Plugin: Could not find: libnccl-net-ofi.so. \n"
      "h:1:2 [0] NCCL INFO Successfully loaded external plugin libnccl-net.so\n");
  EXPECT_EQ(f.net_plugin, "libnccl-net.so");
  EXPECT_FALSE(f.net_plugin_missing);
  f = parse_nccl_log("h:1:2 [0] NCCL INFO Successfully loaded external network plugin /opt/hpcx/lib/libnccl-net.so\n");
  EXPECT_EQ(f.net_plugin, "/opt/hpcx/lib/libnccl-net.so");
}

TEST(NcclLog, AnUnreadableFileIsOneLineError) {
  try {
    read_nccl_log("/nonexistent/nccl.log");
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "/nonexistent/nccl.log: cannot read the NCCL debug log");
  }
}

TEST(SharpEnvironment, OnEnablesCollNetAndNvlsAndClearsTheAlgorithm) {
  auto on = sharp_environment(true);
  ASSERT_EQ(on.size(), 3u);
  EXPECT_EQ(on[0].name, "NCCL_COLLNET_ENABLE");
  EXPECT_EQ(on[0].value, "1");
  EXPECT_EQ(on[1].name, "NCCL_NVLS_ENABLE");
  EXPECT_EQ(on[1].value, "1");
  EXPECT_EQ(on[2].name, "NCCL_ALGO");
  EXPECT_FALSE(on[2].value);
  auto off = sharp_environment(false);
  ASSERT_EQ(off.size(), 2u);
  EXPECT_EQ(off[0].value, "0");
  EXPECT_EQ(off[1].value, "0");
}

TEST(SharpEnvironment, DebugVariablesAndTheFilePattern) {
  auto env = nccl_debug_environment("/out/run1/nccl.%h.%p.log");
  ASSERT_EQ(env.size(), 3u);
  EXPECT_EQ(env[0].name, "NCCL_DEBUG");
  EXPECT_EQ(env[0].value, "INFO");
  EXPECT_EQ(env[1].name, "NCCL_DEBUG_SUBSYS");
  EXPECT_EQ(env[1].value, "INIT,TUNING,ENV");
  EXPECT_EQ(env[2].name, "NCCL_DEBUG_FILE");
  EXPECT_EQ(env[2].value, "/out/run1/nccl.%h.%p.log");
  EXPECT_NO_THROW(nccl_debug_environment("100%%.log"));
  EXPECT_THROW(nccl_debug_environment(""), UsageError);
  EXPECT_THROW(nccl_debug_environment("nccl.%d.log"), UsageError);
  EXPECT_THROW(nccl_debug_environment("nccl.%"), UsageError);
}

TEST(SharpEnvironment, TheDebugFileNcclWritesForThisProcess) {
  EXPECT_EQ(expand_nccl_debug_file("/out/nccl.%h.%p.log", "node7", 4242), "/out/nccl.node7.4242.log");
  EXPECT_EQ(expand_nccl_debug_file("100%%-%h", "a", 1), "100%-a");
  // NCCL leaves other % sequences alone, and a trailing %.
  EXPECT_EQ(expand_nccl_debug_file("x%d%", "a", 1), "x%d%");
  EXPECT_EQ(expand_nccl_debug_file("", "a", 1), "");
}

}  // namespace
}  // namespace perflab::collectives

namespace perflab::collectives {
namespace {

// A sweep's runs share the process's communicator and its debug file: each
// run reads the process facts from the whole file but only its own choices.
TEST(NcclLog, ARunReadsOnlyTheChoicesItsOwnCallsLogged) {
  const std::string header =
      "box:1:1 [0] NCCL INFO NCCL version 2.24.3+cuda12.6\n"
      "box:1:1 [0] NCCL INFO Channel 00/02 :    0   1\n";
  const std::string first_run = "box:1:1 [0] NCCL INFO AllReduce: 4096 Bytes -> Algo RING proto LL channel{Lo..Hi}={0..0}\n";
  const std::string second_run =
      "box:1:1 [0] NCCL INFO AllReduce: 4096 Bytes -> Algo TREE proto LL128 channel{Lo..Hi}={0..1}\n"
      "box:1:1 [0] file.cc:1 NCCL WARN second run's warning\n";
  const std::string text = header + first_run + second_run;
  const NcclLogFacts whole = parse_nccl_log_since(text, 0);
  EXPECT_EQ(nccl_choice_for(whole, "all_reduce", 4096)->algo, NcclAlgo::kTree) << "the last logged wins";
  const NcclLogFacts first = parse_nccl_log_since(header + first_run, header.size());
  EXPECT_EQ(choices(first), "AllReduce 4096 RING LL x1\n");
  const NcclLogFacts second = parse_nccl_log_since(text, header.size() + first_run.size());
  EXPECT_EQ(choices(second), "AllReduce 4096 TREE LL128 x1\n");
  EXPECT_EQ(second.version, "2.24.3+cuda12.6") << "process facts come from the whole file";
  ASSERT_EQ(second.warnings.size(), 1u);
  // A start inside a line (the writer was mid-line) begins at the next one.
  const NcclLogFacts mid = parse_nccl_log_since(text, header.size() + 10);
  EXPECT_EQ(choices(mid), "AllReduce 4096 TREE LL128 x1\n");
  // A run that has logged nothing yet sees no choice.
  EXPECT_TRUE(parse_nccl_log_since(text, text.size()).choices.empty());
  EXPECT_TRUE(parse_nccl_log_since(text, text.size() + 100).choices.empty());
}

TEST(NcclLog, TheRunsStartIsTheFilesSizeAndReadingFromItSkipsTheRest) {
  // Per process: two test runs sharing one build folder must not share the file.
  const std::string path =
      std::string(PERFLAB_BINARY_DIR) + "/nccl_log_test_since." + std::to_string(::getpid()) + ".log";
  EXPECT_EQ(nccl_log_size(path + ".absent"), 0u);
  {
    std::ofstream out(path, std::ios::trunc);
    out << "box:1:1 [0] NCCL INFO AllReduce: 8 Bytes -> Algo RING proto LL channel{Lo..Hi}={0..0}\n";
  }
  const uint64_t start = nccl_log_size(path);
  EXPECT_GT(start, 0u);
  {
    std::ofstream out(path, std::ios::app);
    out << "box:1:1 [0] NCCL INFO AllReduce: 8 Bytes -> Algo TREE proto LL channel{Lo..Hi}={0..0}\n";
  }
  EXPECT_EQ(choices(read_nccl_log(path, start)), "AllReduce 8 TREE LL x1\n");
  EXPECT_EQ(read_nccl_log(path).choices.size(), 2u);
  std::remove(path.c_str());
}

}  // namespace
}  // namespace perflab::collectives
