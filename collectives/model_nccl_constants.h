// NCCL's tuning constants that the model uses, as facts from NCCL 2.28.9
// (src/graph/tuning.cc, ncclTunerConstantsDefaults, and src/graph/topo.h),
// Hopper and x86 Intel host where NCCL picks by hardware. Indexed in NCCL's
// enum order: algorithms TREE, RING, COLLNET_DIRECT, COLLNET_CHAIN, NVLS,
// NVLS_TREE, PAT; protocols LL, LL128, SIMPLE. Units: microseconds, GB/s.
// docs/collectives-model.md lists each with its role.
#pragma once

namespace perflab::collectives::nccl_constants {

constexpr int kAlgos = 7;
constexpr int kProtos = 3;

/// baseLatencies: fixed cost per operation.
constexpr double kBaseLatencyUs[kAlgos][kProtos] = {
    {6.8, 14.0, 8.4}, {6.6, 14.0, 8.4},  // TREE, RING
    {0, 0, 0},        {0, 0, 0},         // COLLNET_DIRECT, COLLNET_CHAIN
    {0, 0, 0},        {0, 0, 0},         // NVLS, NVLS_TREE
    {8.0, 8.0, 8.0}};                    // PAT

/// hwLatencies over NVLink: cost per step inside a node.
constexpr double kNvlinkLatencyUs[kAlgos][kProtos] = {
    {.6, 1.25, 4.0}, {.6, 1.9, 3.4},  // TREE, RING
    {0, 0, 3.7},     {0, 0, 2.8},     // COLLNET_DIRECT, COLLNET_CHAIN
    {0, 0, 25},      {0, 0, 25},      // NVLS, NVLS_TREE
    {0, 0, 4.0}};                     // PAT

/// hwLatencies over the network: cost per step between nodes.
constexpr double kNetLatencyUs[kAlgos][kProtos] = {
    {5.0, 8.5, 14}, {2.7, 4.0, 14.0},  // TREE, RING
    {0, 0, 31},     {0, 0, 30},        // COLLNET_DIRECT, COLLNET_CHAIN
    {0, 0, 18},     {0, 0, 20.9},      // NVLS, NVLS_TREE
    {0, 0, 14}};                       // PAT

/// getNetOverhead: network post overhead per inter-node ring step on an x86
/// Intel host (2.0 on AMD), times 3 for SIMPLE.
constexpr double kNetOverheadUs = 1.0;
/// Ring SIMPLE all-reduce across nodes: latency times this once each rank's
/// per-channel share is >= 64 bytes ("plateau effect of ring", sm80+).
constexpr double kRingPlateau = 1.4;
constexpr double kRingPlateauBytes = 64;
/// NCCL_MAX_DEV_WORK_P2P_PER_BATCH (src/include/device.h): point-to-point
/// operations one work batch carries, the peers served at once.
constexpr int kP2pPeersPerBatch = 8;
/// CollNet direct: 0.4 us of arity serialisation per local rank.
constexpr double kCollNetArityUs = 0.4;

/// llMaxBws, per node-count index (1 node, 2 nodes, more): the single-node
/// entry is Hopper's, the multi-node ones the Intel host's.
constexpr double kLlMaxBw[3] = {141.0, 39.0, 20.4};
/// Per-channel caps, Hopper, per node-count index.
constexpr double kPerChMaxRingLL128Bw[3] = {36.7, 36.7, 36.7};
constexpr double kPerChMaxTreeLL128Bw[3] = {36.7, 36.7, 29.0};
constexpr double kPerChMaxTreeBw[3] = {38.7, 41.4, 36.0};
constexpr double kPerChMaxNvlsTreeBw[3] = {0.0, 57.7, 45.5};

/// Bandwidth refinements (ncclTopoTuneModel).
constexpr double kRingLLFactor = 0.5;       // ring LL: half the bus
constexpr double kRingLL128Factor = 0.92;   // ring LL128: 120/128 of the bus
constexpr double kTreeFactor = 0.92;        // tree all-reduce
constexpr double kTreeLLFactor = 1.0 / 3.8;
constexpr double kTreeLL128FactorOneNode = 7.0 / 9.0;
constexpr double kTreeLL128FactorNodes = 120.0 / 128.0;
constexpr double kTreeRatio = 0.5;           // tree/CollNet bus -> algorithm bandwidth
constexpr double kCollNetDirectHopper = 0.85;
constexpr double kNvlsEfficiencyHopper = 0.85;  // nvlsEfficiency[Hopper]

/// treeCorrectionFactor[proto][log2(bytes/64)], 64 B .. 256 MiB (getAlgoTime).
constexpr double kTreeCorrection[kProtos][23] = {
    {1.0, 1.0, 1.0, 1.0, .9, .8, .7, .7, .7, .7, .6, .5, .4, .4, .5, .6, .7, .8, .9, 1.0, 1.0, 1.0, 1.0},
    {1.0, 1.0, 1.0, 1.0, 1.0, .9, .8, .8, .8, .7, .6, .6, .6, .6, .6, .6, .8, .9, .9, .9, .9, 1.0, 1.0},
    {.9, .9, .9, .9, .9, .9, .9, .8, .7, .6, .6, .5, .5, .5, .5, .6, .7, .8, .7, .7, .8, .9, .9}};

/// SM90_NVLINK_BW (src/graph/topo.h): GB/s per NVLink4 link.
constexpr double kSm90NvlinkBw = 20.6;

}  // namespace perflab::collectives::nccl_constants
