// The NCCL debug-log reader (collectives/nccl_log.h). Each message it knows
// is matched on its fixed text, as NCCL's sources print it (the table in
// docs/collectives-model.md names file and versions); numbers are parsed
// with from_chars, whole tokens only, so a damaged line is skipped, not
// half-read.
#include "collectives/nccl_log.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <charconv>
#include <fstream>
#include <sstream>
#include <tuple>

#include "base/error.h"
#include "base/text.h"

namespace perflab::collectives {
namespace {

constexpr std::array<std::string_view, 7> kAlgoNames = {
    "TREE", "RING", "COLLNET_DIRECT", "COLLNET_CHAIN", "NVLS", "NVLS_TREE", "PAT"};
constexpr std::array<std::string_view, 3> kProtoNames = {"LL", "LL128", "SIMPLE"};
constexpr size_t kMaxWarnings = 100;

bool iequals(std::string_view a, std::string_view b) {
  return a.size() == b.size() &&
         std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::toupper(static_cast<unsigned char>(x)) ==
                  std::toupper(static_cast<unsigned char>(y));
         });
}

bool starts_with(std::string_view s, std::string_view prefix) {
  return s.substr(0, prefix.size()) == prefix;
}

/// The whole of `s` as a T, or nullopt (no sign games, no trailing text).
template <typename T>
std::optional<T> to_number(std::string_view s) {
  T value{};
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), value);
  if (ec != std::errc() || end != s.data() + s.size() || s.empty()) return std::nullopt;
  return value;
}

std::optional<double> to_double(std::string_view s) {
  // from_chars for double is not in every libstdc++ we build with; strtod on
  // a bounded copy, whole token only.
  if (s.empty() || s.size() > 64) return std::nullopt;
  std::string copy(s);
  char* end = nullptr;
  double v = std::strtod(copy.c_str(), &end);
  if (end != copy.c_str() + copy.size() || !(v == v)) return std::nullopt;
  return v;
}

std::vector<std::string_view> split_words(std::string_view s) {
  std::vector<std::string_view> words;
  size_t i = 0;
  while (i < s.size()) {
    while (i < s.size() && s[i] == ' ') ++i;
    size_t j = i;
    while (j < s.size() && s[j] != ' ') ++j;
    if (j > i) words.push_back(s.substr(i, j - i));
    i = j;
  }
  return words;
}

/// An enum whose values index `names`: from the name (any case) or the index.
template <typename E>
std::optional<E> parse_enum(std::string_view text, const std::string_view* names, size_t count) {
  if (auto n = to_number<int>(text)) {
    if (*n >= 0 && static_cast<size_t>(*n) < count) return static_cast<E>(*n);
    return std::nullopt;
  }
  for (size_t i = 0; i < count; ++i) {
    if (iequals(text, names[i])) return static_cast<E>(i);
  }
  return std::nullopt;
}

/// "2.21.5+cuda12.4" -> 22105; 0 when it does not start with three numbers.
int version_code(std::string_view v) {
  int parts[3] = {0, 0, 0};
  for (int k = 0; k < 3; ++k) {
    size_t n = 0;
    while (n < v.size() && std::isdigit(static_cast<unsigned char>(v[n]))) ++n;
    auto part = to_number<int>(v.substr(0, n));
    if (!part || *part > 99) return 0;
    parts[k] = *part;
    v.remove_prefix(n);
    if (k < 2) {
      if (v.empty() || v.front() != '.') return 0;
      v.remove_prefix(1);
    }
  }
  return parts[0] * 10000 + parts[1] * 100 + parts[2];
}

/// "<op>: <bytes> Bytes -> Algo <a> proto <p> time <t>" (2.23),
/// "<bytes> Bytes -> Algo <a> proto <p> time <t>" (2.20-2.22) or
/// "<op>: <bytes> Bytes -> Algo <NAME> proto <NAME> channel{Lo..Hi}={lo..hi}" (2.24+).
std::optional<NcclChoice> parse_choice(std::string_view msg) {
  constexpr std::string_view kArrow = " Bytes -> Algo ";
  size_t arrow = msg.find(kArrow);
  if (arrow == std::string_view::npos) return std::nullopt;
  NcclChoice c;
  std::string_view left = trim_space(msg.substr(0, arrow));
  size_t colon = left.rfind(':');
  if (colon != std::string_view::npos) {
    std::string_view op = trim_space(left.substr(0, colon));
    if (op.empty() || !std::all_of(op.begin(), op.end(), [](char ch) {
          return std::isalnum(static_cast<unsigned char>(ch)) != 0;
        })) {
      return std::nullopt;
    }
    c.op = std::string(op);
    left = trim_space(left.substr(colon + 1));
  }
  auto bytes = to_number<uint64_t>(left);
  if (!bytes) return std::nullopt;
  c.bytes = *bytes;
  auto words = split_words(msg.substr(arrow + kArrow.size()));
  if (words.size() < 3 || words[1] != "proto") return std::nullopt;
  auto algo = parse_nccl_algo(words[0]);
  auto proto = parse_nccl_proto(words[2]);
  if (!algo || !proto) return std::nullopt;
  c.algo = *algo;
  c.proto = *proto;
  if (words.size() >= 5 && words[3] == "time") c.predicted_us = to_double(words[4]);
  if (words.size() >= 4 && starts_with(words[3], "channel{Lo..Hi}={")) {
    std::string_view range = words[3].substr(std::string_view("channel{Lo..Hi}={").size());
    size_t dots = range.find("..");
    if (dots != std::string_view::npos && !range.empty() && range.back() == '}') {
      c.channel_lo = to_number<int>(range.substr(0, dots));
      c.channel_hi = to_number<int>(range.substr(dots + 2, range.size() - dots - 3));
    }
  }
  return c;
}

/// "32 coll channels, 32 collnet channels, 16 nvls channels, 32 p2p channels,
/// 32 p2p channels per peer" (2.20+), or the same without collnet (2.18-2.19).
bool parse_channels(std::string_view msg, NcclChannels& out) {
  if (msg.find(" coll channels") == std::string_view::npos) return false;
  NcclChannels ch;
  size_t start = 0;
  while (start <= msg.size()) {
    size_t comma = msg.find(',', start);
    std::string_view part =
        trim_space(msg.substr(start, comma == std::string_view::npos ? std::string_view::npos : comma - start));
    auto words = split_words(part);
    if (words.size() >= 3 && words[2] == "channels") {
      auto n = to_number<int>(words[0]);
      if (!n) return false;
      if (words.size() == 5 && words[1] == "p2p" && words[3] == "per" && words[4] == "peer") {
        ch.p2p_per_peer = n;
      } else if (words.size() == 3) {
        if (words[1] == "coll") ch.coll = n;
        else if (words[1] == "collnet") ch.collnet = n;
        else if (words[1] == "nvls") ch.nvls = n;
        else if (words[1] == "p2p") ch.p2p = n;
      }
    }
    if (comma == std::string_view::npos) break;
    start = comma + 1;
  }
  if (!ch.coll) return false;
  out = ch;
  return true;
}

/// "comm 0x... rank 0 nRanks 16 nNodes 2 localRanks 8 ..." (2.20+) and the
/// "... nranks 16 cudaDev ... - Init COMPLETE" line (every version).
void parse_comm_sizes(std::string_view msg, NcclLogFacts& f) {
  if (!starts_with(msg, "comm ") && msg.find("Init COMPLETE") == std::string_view::npos) return;
  auto words = split_words(msg);
  for (size_t i = 0; i + 1 < words.size(); ++i) {
    if (words[i] == "nRanks" || words[i] == "nranks") {
      if (auto n = to_number<int>(words[i + 1]); n && *n > 0) f.nranks = n;
    } else if (words[i] == "nNodes") {
      if (auto n = to_number<int>(words[i + 1]); n && *n > 0) f.nnodes = n;
    }
  }
}

/// The name after `prefix` up to the next space ("Loaded net plugin IBext_v8 (v8)").
std::string word_after(std::string_view msg, std::string_view prefix) {
  size_t at = msg.find(prefix);
  if (at == std::string_view::npos) return {};
  auto words = split_words(msg.substr(at + prefix.size()));
  return words.empty() ? std::string() : std::string(words[0]);
}

void parse_plugin(std::string_view msg, NcclLogFacts& f) {
  // "NET/Plugin: ..." and, before 2.22, "NET/Plugin : ...".
  std::string_view rest = msg.substr(std::string_view("NET/Plugin").size());
  while (!rest.empty() && (rest.front() == ' ' || rest.front() == ':')) rest.remove_prefix(1);
  if (starts_with(rest, "Loaded net plugin ")) {
    f.net_plugin = word_after(rest, "Loaded net plugin ");
  } else if (starts_with(rest, "Loaded coll plugin ")) {
    f.collnet_plugin = word_after(rest, "Loaded coll plugin ");
  } else if (starts_with(rest, "Loaded collnet plugin ")) {
    f.collnet_plugin = word_after(rest, "Loaded collnet plugin ");
  } else if (starts_with(rest, "Could not find") || starts_with(rest, "No plugin found") ||
             rest.find("No plugin found") != std::string_view::npos ||
             starts_with(rest, "Plugin load") || starts_with(rest, "Using internal network plugin")) {
    f.net_plugin_missing = true;
  }
}

void parse_message(std::string_view msg, int line_no, NcclLogFacts& f,
                   std::map<std::tuple<std::string, uint64_t, int, int>, size_t>& seen) {
  if (starts_with(msg, "NCCL version ")) {
    auto words = split_words(msg.substr(13));
    if (!words.empty()) {
      f.version = std::string(words[0]);
      f.version_code = version_code(words[0]);
    }
  } else if (auto c = parse_choice(msg)) {
    auto key = std::make_tuple(c->op, c->bytes, static_cast<int>(c->algo), static_cast<int>(c->proto));
    auto [it, fresh] = seen.emplace(key, f.choices.size());
    if (fresh) {
      c->line = c->last_line = line_no;
      f.choices.push_back(std::move(*c));
    } else {
      f.choices[it->second].count += 1;
      f.choices[it->second].last_line = line_no;
    }
  } else if (starts_with(msg, "Using network ")) {
    f.network = std::string(trim_space(msg.substr(14)));
  } else if (starts_with(msg, "NET/Plugin")) {
    parse_plugin(msg, f);
  } else if (starts_with(msg, "Successfully loaded external network plugin ") ||
             starts_with(msg, "Successfully loaded external plugin ")) {
    // 2.28 names the network plugin, 2.27 only "external plugin".
    f.net_plugin = word_after(msg, "plugin ");
    f.net_plugin_missing = false;
  } else if (starts_with(msg, "Communicator has ") &&
             msg.find("less than CollNet node threshold") != std::string_view::npos) {
    auto words = split_words(msg);
    // Communicator has N nodes which is less than CollNet node threshold T, disabling CollNet
    if (words.size() >= 3) {
      if (auto n = to_number<int>(words[2]); n && *n > 0) f.nnodes = n;
    }
    std::string t = word_after(msg, "CollNet node threshold ");
    if (!t.empty() && t.back() == ',') t.pop_back();
    f.collnet_node_threshold = to_number<int>(t);
    if (!f.collnet_node_threshold) f.collnet_node_threshold = 0;
  } else if (msg.find("Cannot initialize CollNet") != std::string_view::npos) {
    f.collnet_init_failed = true;
  } else if (msg.find("Connected CollNet") != std::string_view::npos ||
             (starts_with(msg, "CollNet ") && msg.find(" via COLLNET/") != std::string_view::npos)) {
    f.collnet_connected = true;
    if (f.collnet_plugin.empty()) {
      std::string via = word_after(msg, " via COLLNET/");
      f.collnet_plugin = via.substr(0, via.find('/'));
    }
  } else if (starts_with(msg, "NVLS multicast support is ")) {
    std::string_view rest = msg.substr(26);
    if (starts_with(rest, "not available")) f.nvls_multicast = false;
    else if (starts_with(rest, "available")) f.nvls_multicast = true;
  } else if (parse_channels(msg, f.channels)) {
    // done
  } else if (size_t at = msg.find(" set by environment to "); at != std::string_view::npos) {
    auto before = split_words(msg.substr(0, at));
    std::string_view value = trim_space(msg.substr(at + 23));
    if (!value.empty() && value.back() == '.') value.remove_suffix(1);
    if (!before.empty() && starts_with(before.back(), "NCCL_")) {
      f.env[std::string(before.back())] = std::string(value);
    }
  } else {
    parse_comm_sizes(msg, f);
  }
}

}  // namespace

std::string_view nccl_algo_name(NcclAlgo algo) { return kAlgoNames.at(static_cast<size_t>(algo)); }

std::string_view nccl_proto_name(NcclProto proto) {
  return kProtoNames.at(static_cast<size_t>(proto));
}

std::optional<NcclAlgo> parse_nccl_algo(std::string_view text) {
  return parse_enum<NcclAlgo>(text, kAlgoNames.data(), kAlgoNames.size());
}

std::optional<NcclProto> parse_nccl_proto(std::string_view text) {
  return parse_enum<NcclProto>(text, kProtoNames.data(), kProtoNames.size());
}

bool is_in_network(NcclAlgo algo) {
  return algo == NcclAlgo::kCollNetDirect || algo == NcclAlgo::kCollNetChain ||
         algo == NcclAlgo::kNvls || algo == NcclAlgo::kNvlsTree;
}

NcclLogFacts parse_nccl_log(std::string_view text) {
  NcclLogFacts f;
  std::map<std::tuple<std::string, uint64_t, int, int>, size_t> seen;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    std::string_view line = text.substr(start, end == std::string_view::npos ? std::string_view::npos : end - start);
    start = end == std::string_view::npos ? text.size() : end + 1;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    f.lines += 1;
    // host:pid:tid [dev] NCCL INFO <msg>; host:pid:tid [dev] file:line NCCL WARN <msg>;
    // "NCCL version ..." alone at NCCL_DEBUG=VERSION.
    std::string_view msg;
    if (size_t at = line.find("NCCL INFO "); at != std::string_view::npos) {
      msg = line.substr(at + 10);
    } else if (size_t w = line.find("NCCL WARN "); w != std::string_view::npos) {
      msg = line.substr(w + 10);
      if (f.warnings.size() < kMaxWarnings) f.warnings.emplace_back(trim_space(msg));
    } else if (size_t v = line.find("NCCL version "); v != std::string_view::npos) {
      msg = line.substr(v);
    } else {
      if (!trim_space(line).empty()) f.unrecognised += 1;
      continue;
    }
    parse_message(trim_space(msg), f.lines, f, seen);
  }
  return f;
}

NcclLogFacts parse_nccl_log_since(std::string_view text, uint64_t run_from) {
  NcclLogFacts facts = parse_nccl_log(text);
  if (run_from == 0) return facts;
  size_t from = run_from >= text.size() ? text.size() : static_cast<size_t>(run_from);
  // Mid-line (the writer was inside a line): the run's lines start after it.
  if (from > 0 && from < text.size() && text[from - 1] != '\n') {
    const size_t next = text.find('\n', from);
    from = next == std::string_view::npos ? text.size() : next + 1;
  }
  NcclLogFacts own = parse_nccl_log(text.substr(from));
  facts.choices = std::move(own.choices);
  facts.warnings = std::move(own.warnings);
  return facts;
}

NcclLogFacts read_nccl_log(const std::filesystem::path& path, uint64_t run_from) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error(path.string() + ": cannot read the NCCL debug log");
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) throw Error(path.string() + ": error reading the NCCL debug log");
  return parse_nccl_log_since(text.str(), run_from);
}

uint64_t nccl_log_size(const std::filesystem::path& path) {
  std::error_code ec;
  const uintmax_t size = std::filesystem::file_size(path, ec);
  return ec ? 0 : static_cast<uint64_t>(size);
}

std::optional<NcclChoice> nccl_choice_for(const NcclLogFacts& facts, std::string_view op,
                                          uint64_t bytes) {
  auto squash = [](std::string_view s) {
    std::string out;
    for (char ch : s) {
      if (ch != '_') out += static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
    }
    return out;
  };
  const std::string want = squash(op);
  std::optional<NcclChoice> found;
  for (const NcclChoice& c : facts.choices) {
    if (c.bytes == bytes && (c.op.empty() || squash(c.op) == want)) {
      if (!found || c.last_line >= found->last_line) found = c;
    }
  }
  return found;
}

}  // namespace perflab::collectives
