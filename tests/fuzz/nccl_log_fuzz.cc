// Fuzzes the NCCL debug-log reader and the SHARP verdict
// (collectives/nccl_log.h), as a run reads the file NCCL wrote. Properties:
// no input throws; choices are unique per (op, size, algorithm, protocol),
// counted, and their lines inside the file; the same text with CRLF line
// ends reads the same; the verdict is in effect only when some logged choice
// is CollNet or NVLS, and always says why.
#include <cstdint>
#include <set>
#include <string>
#include <tuple>

#include "collectives/nccl_log.h"
#include "tests/fuzz/fuzz_check.h"

namespace {

std::string with_crlf(const std::string& text) {
  std::string out;
  out.reserve(text.size() * 2);
  for (char c : text) {
    if (c == '\n') out += '\r';
    out += c;
  }
  return out;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace perflab::collectives;
  using perflab::fuzz::require;
  const std::string text(reinterpret_cast<const char*>(data), size);
  const NcclLogFacts f = parse_nccl_log(text);

  require(f.unrecognised <= f.lines, "unrecognised lines are lines");
  require(f.warnings.size() <= 100, "at most 100 warnings kept");
  require(f.version_code >= 0 && f.version_code < 1000000, "version code in range");
  std::set<std::tuple<std::string, uint64_t, int, int>> keys;
  bool in_network = false;
  for (const NcclChoice& c : f.choices) {
    require(keys.insert({c.op, c.bytes, static_cast<int>(c.algo), static_cast<int>(c.proto)}).second,
            "one choice per (op, bytes, algo, proto)");
    require(c.count >= 1 && c.line >= 1 && c.line <= c.last_line && c.last_line <= f.lines,
            "choice counted, its lines inside the file");
    require(!nccl_algo_name(c.algo).empty() && !nccl_proto_name(c.proto).empty(), "named algorithm and protocol");
    in_network = in_network || is_in_network(c.algo);
  }

  const NcclLogFacts crlf = parse_nccl_log(with_crlf(text));
  require(crlf.choices.size() == f.choices.size() && crlf.version == f.version && crlf.nranks == f.nranks &&
              crlf.nnodes == f.nnodes && crlf.collnet_plugin == f.collnet_plugin &&
              crlf.nvls_multicast == f.nvls_multicast,
          "CRLF line ends read the same");

  for (const char* backend : {"nccl", "mpi", "single"}) {
    for (bool requested : {true, false}) {
      const SharpVerdict v = sharp_verdict(requested, f, backend, f.nranks.value_or(2), 0);
      require(!v.reason.empty(), "the verdict says why");
      require(v.requested == requested, "requested as asked");
      require(!v.in_effect || (in_network && std::string(backend) == "nccl"),
              "in effect only when NCCL logged a CollNet or NVLS choice");
    }
  }
  return 0;
}
