// What NCCL said about itself: a reader of the file NCCL writes with
// NCCL_DEBUG=INFO, NCCL_DEBUG_SUBSYS=INIT,TUNING[,ENV,NET,COLL] and
// NCCL_DEBUG_FILE, and the SHARP verdict drawn from it.
//
// Pure functions on text: no NCCL or CUDA header is needed, so the reader is
// tested on fixtures (tests/collectives/fixtures/*.log) written from the
// message formats of NCCL 2.18 to 2.28 (docs/collectives-model.md, "The NCCL
// debug log", lists each message, the versions that print it and its source
// file). Lines the reader does not know are counted and skipped, never an
// error: NCCL's log is free text and other output may be interleaved.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace perflab::collectives {

/// NCCL's algorithms, in NCCL's own enum order (src/include/nccl_common.h:
/// NCCL_ALGO_TREE = 0 ... NCCL_ALGO_PAT = 6), so a numeric index in a TUNING
/// line maps by value.
enum class NcclAlgo { kTree = 0, kRing, kCollNetDirect, kCollNetChain, kNvls, kNvlsTree, kPat };
/// NCCL's protocols, in NCCL's enum order (NCCL_PROTO_LL = 0 ... SIMPLE = 2).
enum class NcclProto { kLL = 0, kLL128, kSimple };

/// NCCL's name of an algorithm: "TREE", "RING", "COLLNET_DIRECT",
/// "COLLNET_CHAIN", "NVLS", "NVLS_TREE", "PAT".
std::string_view nccl_algo_name(NcclAlgo algo);
/// "LL", "LL128", "SIMPLE".
std::string_view nccl_proto_name(NcclProto proto);
/// An algorithm from NCCL's name (any case) or its numeric index; nullopt
/// when it is neither.
std::optional<NcclAlgo> parse_nccl_algo(std::string_view text);
/// A protocol from NCCL's name (any case) or its numeric index.
std::optional<NcclProto> parse_nccl_proto(std::string_view text);
/// True for the in-network algorithms: CollNet (SHARP) and NVLS.
bool is_in_network(NcclAlgo algo);

/// One algorithm/protocol choice NCCL logged for an operation and size (rank
/// 0 logs one line per call; identical lines are kept once, counted).
struct NcclChoice {
  /// NCCL's operation name ("AllReduce", "AllGather", ...); empty for NCCL
  /// 2.20 to 2.22, whose line does not name it.
  std::string op;
  /// The size NCCL printed (count times type size of the call).
  uint64_t bytes = 0;
  NcclAlgo algo = NcclAlgo::kRing;
  NcclProto proto = NcclProto::kSimple;
  /// NCCL's predicted time in microseconds (2.20 to 2.23 print it).
  std::optional<double> predicted_us;
  /// Channels used (2.24 and later print channel{Lo..Hi}).
  std::optional<int> channel_lo, channel_hi;
  int count = 1;      ///< Lines with this op, size, algorithm and protocol.
  int line = 0;       ///< 1-based line of the first of them.
  int last_line = 0;  ///< 1-based line of the last of them.
};

/// The channel summary ("32 coll channels, 32 collnet channels, 16 nvls
/// channels, 32 p2p channels, 32 p2p channels per peer"); a count the line
/// does not state (NCCL 2.18 and 2.19 print no collnet count) stays empty.
struct NcclChannels {
  std::optional<int> coll, collnet, nvls, p2p, p2p_per_peer;
};

/// Everything the reader takes from one NCCL debug file.
struct NcclLogFacts {
  std::string version;  ///< "2.21.5+cuda12.4"; empty when not logged.
  int version_code = 0; ///< major*10000 + minor*100 + patch (22105); 0 unknown.
  std::optional<int> nranks, nnodes;
  /// From "Using network X": "IB", "Socket", "IBext_v8", ...
  std::string network;
  /// The external net plugin loaded ("NET/Plugin: Loaded net plugin X"), empty
  /// when NCCL used its internal one.
  std::string net_plugin;
  /// NCCL looked for an external net plugin and found none.
  bool net_plugin_missing = false;
  /// The CollNet plugin loaded ("Loaded coll plugin SHARP", "Loaded collnet
  /// plugin SHARP"); empty when none was.
  std::string collnet_plugin;
  /// "Communicator has N nodes which is less than CollNet node threshold T,
  /// disabling CollNet": the threshold T, when NCCL said so.
  std::optional<int> collnet_node_threshold;
  /// "Cannot initialize CollNet, using point-to-point network instead".
  bool collnet_init_failed = false;
  /// "rank R Connected CollNet" or a "CollNet cc/c : ..." connection line.
  bool collnet_connected = false;
  /// "NVLS multicast support is [not ]available on dev D": true, false, or
  /// empty when the line is absent (NCCL before 2.17, or no NVSwitch probe).
  std::optional<bool> nvls_multicast;
  NcclChannels channels;
  /// "NAME set by environment to VALUE" (subsystem ENV), last value wins.
  std::map<std::string, std::string> env;
  /// Unique choices, in the order first seen.
  std::vector<NcclChoice> choices;
  /// "NCCL WARN" messages, in order (at most 100 kept).
  std::vector<std::string> warnings;
  int lines = 0;          ///< Lines read.
  int unrecognised = 0;   ///< Non-empty lines that were not an NCCL INFO/WARN/version line.
};

/// Reads the text of one NCCL debug file. Never throws on content.
NcclLogFacts parse_nccl_log(std::string_view text);

/// Reads one NCCL debug file; Error (exit 1) when it cannot be read.
/// `run_from`: the file's size when the run began. A process's runs share
/// its communicator and so its debug file: the process facts (version,
/// plugins, CollNet/NVLS support, channels, environment) come from the
/// whole file, the choices and warnings only from what the run wrote (from
/// the first whole line at or after `run_from`), so a sweep's later point
/// never reports an algorithm an earlier one chose.
NcclLogFacts read_nccl_log(const std::filesystem::path& path, uint64_t run_from = 0);

/// The size of the debug file now (0 when it does not exist yet): a run's
/// `run_from`, taken when it starts.
uint64_t nccl_log_size(const std::filesystem::path& path);

/// parse_nccl_log of `text` whose choices and warnings come from
/// text[run_from:] only (from its first whole line), as read_nccl_log does.
NcclLogFacts parse_nccl_log_since(std::string_view text, uint64_t run_from);

/// The choice logged for `op` and `bytes`; `op` matches NCCL's name ignoring
/// case and underscores ("all_reduce" matches "AllReduce"), and a choice whose
/// line named no operation matches any op. When NCCL logged several for it,
/// the one logged last wins.
std::optional<NcclChoice> nccl_choice_for(const NcclLogFacts& facts, std::string_view op,
                                          uint64_t bytes);

/// Whether in-network reduction (SHARP: CollNet, or NVLS on NVSwitch) was in
/// effect, and why in words.
struct SharpVerdict {
  bool requested = false;
  bool in_effect = false;
  std::string reason;
};

/// The verdict for a run. `backend` is "nccl", "mpi" or "single"; `nranks` and
/// `nnodes` are the run's (a value <= 0 takes the log's). In effect only when
/// the log shows NCCL chose a CollNet or NVLS algorithm for some size;
/// otherwise the reason says what stopped it, most fundamental first (MPI
/// backend; fewer than 2 GPUs; no CollNet plugin loaded; below CollNet's
/// node threshold; NVLS multicast not available; NCCL chose RING for every
/// size ...).
SharpVerdict sharp_verdict(bool requested, const NcclLogFacts& facts, std::string_view backend,
                           int nranks, int nnodes);

/// An environment variable to set (value) or to unset (no value).
struct EnvSetting {
  std::string name;
  std::optional<std::string> value;
};

/// What `--sharp on|off` sets before the communicator is created. On:
/// NCCL_COLLNET_ENABLE=1, NCCL_NVLS_ENABLE=1, NCCL_ALGO unset (so NCCL's tuner
/// may pick CollNet/NVLS). Off: NCCL_COLLNET_ENABLE=0, NCCL_NVLS_ENABLE=0.
std::vector<EnvSetting> sharp_environment(bool on);

/// The variables that make NCCL write the log this reader reads:
/// NCCL_DEBUG=INFO, NCCL_DEBUG_SUBSYS=INIT,TUNING,ENV, NCCL_DEBUG_FILE=file
/// (NCCL expands %h to the host name and %p to the process id). UsageError
/// when `file` is empty or holds a % other than %h, %p or %%.
std::vector<EnvSetting> nccl_debug_environment(const std::string& file);

/// The file NCCL writes for the NCCL_DEBUG_FILE pattern `file`: %h the host
/// name, %p the process id, %% one '%'; anything else as it is.
std::string expand_nccl_debug_file(const std::string& file, const std::string& host, long pid);

}  // namespace perflab::collectives
