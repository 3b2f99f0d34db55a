// MLLOG line formatting and the per-run log file writer.
#include "harness/mllog.h"

#include <cerrno>
#include <chrono>
#include <cstring>
#include <utility>

#include "base/error.h"
#include "harness/mllog_keys.h"

namespace perflab {
namespace {

using OrderedJson = nlohmann::ordered_json;

// This file's path as the compiler saw it; everything before
// "harness/mllog.cc" is the source tree's root.
constexpr std::string_view kThisFile = __FILE__;
constexpr std::string_view kThisFileInRepo = "harness/mllog.cc";

std::string_view source_root() {
  if (kThisFile.size() < kThisFileInRepo.size() ||
      kThisFile.substr(kThisFile.size() - kThisFileInRepo.size()) != kThisFileInRepo) {
    return {};
  }
  return kThisFile.substr(0, kThisFile.size() - kThisFileInRepo.size());
}

std::string dump_scalar(const OrderedJson& j) {
  return j.dump(-1, ' ', /*ensure_ascii=*/true, OrderedJson::error_handler_t::replace);
}

// Serialises like Python's json.dumps: ", " between items, ": " after keys.
void append_json(std::string& out, const OrderedJson& j) {
  if (j.is_object()) {
    out += '{';
    bool first = true;
    for (const auto& [name, item] : j.items()) {
      if (!first) out += ", ";
      first = false;
      out += dump_scalar(OrderedJson(name));
      out += ": ";
      append_json(out, item);
    }
    out += '}';
  } else if (j.is_array()) {
    out += '[';
    bool first = true;
    for (const auto& item : j) {
      if (!first) out += ", ";
      first = false;
      append_json(out, item);
    }
    out += ']';
  } else {
    out += dump_scalar(j);
  }
}

}  // namespace

int64_t unix_time_ms() {
  using std::chrono::duration_cast;
  using std::chrono::milliseconds;
  using std::chrono::steady_clock;
  using std::chrono::system_clock;
  // Both clocks read once, together (a thread-safe static); after that only
  // the steady clock advances the stamp.
  static const std::pair<system_clock::time_point, steady_clock::time_point> anchor{system_clock::now(),
                                                                                   steady_clock::now()};
  const auto since = steady_clock::now() - anchor.second;
  return static_cast<int64_t>(duration_cast<milliseconds>(anchor.first.time_since_epoch() + since).count());
}

std::string repo_relative_path(std::string_view file) {
  const std::string_view root = source_root();
  if (!root.empty() && file.size() > root.size() && file.substr(0, root.size()) == root) {
    file.remove_prefix(root.size());
  }
  return std::string(file);
}

std::string format_mllog_line(int64_t time_ms, std::string_view key, const OrderedJson& value,
                              const OrderedJson& metadata) {
  if (!metadata.is_null() && !metadata.is_object()) {
    throw Error("MLLOG metadata for key '" + std::string(key) + "' must be a JSON object, not " +
                metadata.type_name());
  }
  OrderedJson line = OrderedJson::object();
  line["namespace"] = "";
  line["time_ms"] = time_ms;
  line["event_type"] = std::string(mllog::event_type_for(key));
  line["key"] = std::string(key);
  line["value"] = value;
  line["metadata"] = metadata.is_null() ? OrderedJson::object() : metadata;
  std::string out = ":::MLLOG ";
  append_json(out, line);
  return out;
}

void MllogWriter::FileCloser::operator()(std::FILE* f) const { std::fclose(f); }

MllogWriter::MllogWriter(std::string path, MllogClock clock)
    : path_(std::move(path)), clock_(std::move(clock)) {
  if (path_.empty()) return;  // a rank other than 0: logs nothing
  errno = 0;
  file_.reset(std::fopen(path_.c_str(), "w"));
  if (!file_) {
    throw Error("cannot open MLLOG file '" + path_ + "': " + std::strerror(errno));
  }
}

MllogWriter::~MllogWriter() = default;

int64_t MllogWriter::log(MllogSource source, std::string_view key, const OrderedJson& value,
                      const OrderedJson& metadata) {
  if (!metadata.is_null() && !metadata.is_object()) {
    throw Error("MLLOG metadata for key '" + std::string(key) + "' must be a JSON object, not " +
                metadata.type_name());
  }
  OrderedJson full = OrderedJson::object();
  full["file"] = repo_relative_path(source.file != nullptr ? source.file : "");
  full["lineno"] = source.line;
  if (metadata.is_object()) {
    for (const auto& [name, item] : metadata.items()) {
      if (name != "file" && name != "lineno") full[name] = item;
    }
  }

  if (!file_) return clock_();
  std::lock_guard<std::mutex> lock(mutex_);
  const int64_t time_ms = clock_();  // under the lock: lines in the order of their stamps
  std::string line = format_mllog_line(time_ms, key, value, full);
  line += '\n';
  errno = 0;
  if (std::fwrite(line.data(), 1, line.size(), file_.get()) != line.size() ||
      std::fflush(file_.get()) != 0) {
    throw Error("cannot write MLLOG file '" + path_ + "': " + std::strerror(errno));
  }
  return time_ms;
}

namespace mllog {

std::string mlperf_precision(std::string_view p) {
  if (p == "float" || p == "fp32" || p == "float32") return "fp32";
  if (p == "half" || p == "fp16" || p == "float16") return "fp16";
  if (p == "bfloat16" || p == "bf16") return "bf16";
  if (p == "double" || p == "fp64" || p == "float64") return "fp64";
  for (std::string_view same : {"tf32", "fp8", "int8", "uint8", "int4", "uint4"}) {
    if (p == same) return std::string(same);
  }
  return "";
}

}  // namespace mllog

}  // namespace perflab
