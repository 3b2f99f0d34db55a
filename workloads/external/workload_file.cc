// Workload files -> WorkloadFile (see workload_file.h).
#include "workloads/external/workload_file.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <set>

#include <fmt/format.h>

#include "base/error.h"
#include "base/text.h"
#include "harness/input_file.h"

namespace perflab::external {
namespace fs = std::filesystem;
namespace {

const std::vector<std::string> kTopKeys = {"name",    "summary",     "command",    "env",
                                           "params",  "presets",     "toggles",    "quality",
                                           "timeout", "compliance",  "backends",   "batch_param",
                                           "learning_rate_param"};
/// Placeholders every command may use, beside the parameters.
const std::vector<std::string> kBuiltinPlaceholders = {"seed",    "out",     "mllog",  "workload_dir",
                                                       "perflab", "backend", "threads"};
/// mlperf_logging's official checker on the log ({mllog}), with its own
/// rules for `usage` and `ruleset`, or with the rules file `config` (an
/// absolute path; empty: the official ones).
std::vector<std::string> official_checker(const std::string& usage, const std::string& ruleset,
                                          const std::string& config) {
  std::vector<std::string> argv = {"python3",   "-m",    "mlperf_logging.compliance_checker",
                                   "--usage",   usage,   "--ruleset",
                                   ruleset,     "--log_output", "{out}/compliance_checker.log"};
  if (!config.empty()) {
    argv.push_back("--config");
    argv.push_back(config);
  }
  argv.push_back("{mllog}");
  return argv;
}

/// By default: MLPerf's newest training rules (shared/MLLOG.md).
const std::vector<std::string> kDefaultCompliance = official_checker("training", "6.1.0", "");

class Reader {
 public:
  explicit Reader(fs::path path) : path_(std::move(path)) {}

  [[noreturn]] void fail(const YAML::Node& node, const std::string& why) const {
    const int line = node.IsDefined() ? node.Mark().line + 1 : 1;
    throw UsageError(fmt::format("{}:{}: {}", path_.string(), line < 1 ? 1 : line, why));
  }

  std::string text(const YAML::Node& node, const std::string& what) const {
    if (!node.IsScalar()) fail(node, what + " must be a single value");
    if (const size_t at = invalid_utf8_at(node.Scalar()); at != std::string::npos) {
      fail(node, what + " must be UTF-8 text; save the file as UTF-8");
    }
    return node.Scalar();
  }

  double number(const YAML::Node& node, const std::string& what) const {
    const std::string t = text(node, what);
    char* end = nullptr;
    errno = 0;
    const double x = std::strtod(t.c_str(), &end);
    if (t.empty() || *end != '\0' || errno == ERANGE || !std::isfinite(x)) {
      fail(node, fmt::format("{} must be a number, got '{}'", what, t));
    }
    return x;
  }

  bool flag(const YAML::Node& node, const std::string& what) const {
    const std::string t = text(node, what);
    if (t == "true" || t == "on" || t == "yes") return true;
    if (t == "false" || t == "off" || t == "no") return false;
    fail(node, fmt::format("{} must be true or false, got '{}'", what, t));
  }

  std::vector<std::string> list(const YAML::Node& node, const std::string& what) const {
    if (!node.IsSequence()) fail(node, what + " must be a list ([a, b, ...])");
    std::vector<std::string> out;
    for (const YAML::Node& item : node) out.push_back(text(item, what + " item"));
    return out;
  }

  Env env(const YAML::Node& node, const std::string& what) const {
    if (!node.IsMap()) fail(node, what + " must be a mapping of variable names to values");
    Env out;
    for (const auto& kv : node) {
      const std::string name = text(kv.first, what + " name");
      if (name.empty() || name.find('=') != std::string::npos) {
        fail(kv.first, fmt::format("{}: '{}' is not an environment variable name", what, name));
      }
      out.emplace_back(name, text(kv.second, what + "." + name));
    }
    return out;
  }

  void only_keys(const YAML::Node& node, const std::vector<std::string>& keys, const std::string& what) const {
    if (!node.IsMap()) fail(node, what + " must be a mapping");
    for (const auto& kv : node) {
      const std::string key = text(kv.first, what + " key");
      if (!contains(keys, key)) {
        fail(kv.first, fmt::format("{}: unknown key '{}'; valid keys: {}", what, key, join(keys, ", ")));
      }
    }
  }

  ParamSpec param(const YAML::Node& node) const {
    only_keys(node, {"name", "type", "default", "min", "max", "choices", "help"}, "params item");
    ParamSpec p;
    if (!node["name"]) fail(node, "a parameter needs a name");
    p.name = text(node["name"], "params.name");
    if (p.name.empty() || p.name.find_first_of("{}=, ") != std::string::npos) {
      fail(node["name"], fmt::format("'{}' is not a parameter name (no braces, '=', ',' or spaces)", p.name));
    }
    const std::string type = node["type"] ? text(node["type"], "params.type") : "string";
    if (type == "int") {
      p.type = ParamType::kInt;
    } else if (type == "float") {
      p.type = ParamType::kFloat;
    } else if (type == "string") {
      p.type = ParamType::kString;
    } else {
      fail(node["type"], fmt::format("parameter {}: type '{}' is not int, float or string", p.name, type));
    }
    if (!node["default"]) fail(node, fmt::format("parameter {} needs a default", p.name));
    p.default_value = text(node["default"], "params.default");
    p.help = node["help"] ? text(node["help"], "params.help") : "";
    if (node["min"]) p.min = number(node["min"], "params.min");
    if (node["max"]) p.max = number(node["max"], "params.max");
    if (node["choices"]) p.choices = list(node["choices"], "params.choices");
    if ((p.min || p.max) && p.type == ParamType::kString) {
      fail(node, fmt::format("parameter {}: min and max are for int and float parameters", p.name));
    }
    if (!p.choices.empty() && p.type != ParamType::kString) {
      fail(node["choices"], fmt::format("parameter {}: choices are for string parameters", p.name));
    }
    try {  // the default must pass its own checks
      parse_param(path_.filename().string(), p, p.default_value);
    } catch (const UsageError& e) {
      fail(node["default"], e.what());
    }
    return p;
  }

  Switch toggle_switch(const YAML::Node& node, const std::string& what) const {
    Switch s;
    if (!node || node.IsNull()) return s;
    only_keys(node, {"args", "env"}, what);
    if (node["args"]) s.args = list(node["args"], what + ".args");
    if (node["env"]) s.env = env(node["env"], what + ".env");
    return s;
  }

  /// Every {name} in `text` must be a parameter or a built-in placeholder.
  void check_placeholders(const YAML::Node& node, const std::string& text_value,
                          const std::set<std::string>& known) const {
    std::map<std::string, std::string> values;
    for (const std::string& k : known) values[k] = "";
    try {
      fill_placeholders(text_value, values);
    } catch (const UsageError& e) {
      fail(node, fmt::format("{}; placeholders: {}", e.what(), join({known.begin(), known.end()}, ", ")));
    }
  }

 private:
  fs::path path_;
};

std::optional<Toggle> perflab_toggle(const std::string& name) {
  for (Toggle t : kAllToggles) {
    if (name == toggle_key(t) || name == toggle_flag(t)) return t;
  }
  return std::nullopt;
}

}  // namespace

std::string fill_placeholders(const std::string& text, const std::map<std::string, std::string>& values) {
  std::string out;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if ((c == '{' || c == '}') && i + 1 < text.size() && text[i + 1] == c) {
      out += c;
      ++i;
      continue;
    }
    if (c == '}') throw UsageError(fmt::format("'{}': a lone '}}' (write '}}}}' for a brace)", text));
    if (c != '{') {
      out += c;
      continue;
    }
    const size_t end = text.find('}', i + 1);
    if (end == std::string::npos) throw UsageError(fmt::format("'{}': an unclosed '{{'", text));
    const std::string name = text.substr(i + 1, end - i - 1);
    auto it = values.find(name);
    if (it == values.end()) throw UsageError(fmt::format("'{}': unknown placeholder {{{}}}", text, name));
    out += it->second;
    i = end;
  }
  return out;
}

WorkloadFile parse_workload_file(const std::string& yaml, const fs::path& path) {
  const Reader r(path);
  YAML::Node root;
  try {
    root = YAML::Load(yaml);
  } catch (const YAML::Exception& e) {
    throw UsageError(fmt::format("{}:{}: not valid YAML: {}", path.string(), e.mark.line + 1, e.msg));
  }
  if (!root.IsMap()) r.fail(root, "a workload file is a mapping (command: [...], params: ..., ...)");
  r.only_keys(root, kTopKeys, "the workload file");

  WorkloadFile f;
  f.path = fs::absolute(path).lexically_normal();
  const std::string file_name = f.path.filename().string();
  f.name = root["name"] ? r.text(root["name"], "name")
                        : file_name.substr(0, file_name.size() - kWorkloadFileSuffix.size());
  const bool name_ok = !f.name.empty() && std::all_of(f.name.begin(), f.name.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.';
  });
  if (!name_ok) {
    r.fail(root["name"] ? root["name"] : root, fmt::format("'{}' is not a workload name (letters, digits, '-', "
                                                            "'_', '.'; no spaces or '/')", f.name));
  }
  f.summary = root["summary"] ? r.text(root["summary"], "summary") : "external program: " + file_name;
  if (!root["command"]) r.fail(root, "the workload file has no command: [program, arg, ...]");
  f.command = r.list(root["command"], "command");
  if (f.command.empty()) r.fail(root["command"], "command is empty: name the program to run");
  if (root["env"]) f.env = r.env(root["env"], "env");

  std::set<std::string> names(kBuiltinPlaceholders.begin(), kBuiltinPlaceholders.end());
  if (const YAML::Node params = root["params"]) {
    if (!params.IsSequence()) r.fail(params, "params must be a list of {name, type, default, ...}");
    for (const YAML::Node& p : params) {
      ParamSpec spec = r.param(p);
      if (names.count(spec.name)) {
        r.fail(p["name"], fmt::format("parameter '{}' is declared twice or is a built-in placeholder", spec.name));
      }
      names.insert(spec.name);
      f.params.push_back(std::move(spec));
    }
  }
  if (const YAML::Node toggles = root["toggles"]) {
    if (!toggles.IsMap()) r.fail(toggles, "toggles must map toggle names to {on: ..., off: ...}");
    for (const auto& kv : toggles) {
      ToggleMapping m;
      m.name = r.text(kv.first, "toggle name");
      m.toggle = perflab_toggle(m.name);
      if (m.toggle) m.name = toggle_key(*m.toggle);
      r.only_keys(kv.second, {"on", "off"}, "toggles." + m.name);
      m.on = r.toggle_switch(kv.second["on"], "toggles." + m.name + ".on");
      m.off = r.toggle_switch(kv.second["off"], "toggles." + m.name + ".off");
      for (const ToggleMapping& other : f.toggles) {
        if (other.name == m.name) r.fail(kv.first, fmt::format("toggle '{}' is mapped twice", m.name));
      }
      if (!m.toggle) {
        // The program's own switch: an on/off parameter (--set NAME=on,off sweeps it).
        if (names.count(m.name)) {
          r.fail(kv.first, fmt::format("toggle '{}' has the name of a parameter or placeholder", m.name));
        }
        names.insert(m.name);
        f.params.push_back({m.name, ParamType::kString, "off", "the program's own toggle (toggles: in the file)",
                            std::nullopt, std::nullopt, {"on", "off"}});
      }
      f.toggles.push_back(std::move(m));
    }
  }
  if (const YAML::Node presets = root["presets"]) {
    if (!presets.IsMap()) r.fail(presets, "presets must map preset names to {parameter: value}");
    for (const auto& kv : presets) {
      Preset p;
      p.name = r.text(kv.first, "preset name");
      if (!kv.second.IsMap()) r.fail(kv.second, fmt::format("preset {} must map parameters to values", p.name));
      for (const auto& pv : kv.second) {
        const std::string param = r.text(pv.first, "preset parameter");
        if (!names.count(param) || contains(kBuiltinPlaceholders, param)) {
          r.fail(pv.first, fmt::format("preset {}: unknown parameter '{}'", p.name, param));
        }
        p.values[param] = r.text(pv.second, "preset value");
      }
      f.presets.push_back(std::move(p));
    }
  }
  if (std::none_of(f.presets.begin(), f.presets.end(), [](const Preset& p) { return p.name == "default"; })) {
    f.presets.insert(f.presets.begin(), Preset{"default", "the declared defaults", {}});
  }

  if (const YAML::Node q = root["quality"]) {
    r.only_keys(q, {"key", "target", "higher_is_better"}, "quality");
    if (q["key"]) f.quality.key = r.text(q["key"], "quality.key");
    if (q["target"]) f.quality.target = r.number(q["target"], "quality.target");
    if (q["higher_is_better"]) f.quality.higher_is_better = r.flag(q["higher_is_better"], "quality.higher_is_better");
  }
  if (const YAML::Node t = root["timeout"]) {
    f.timeout_s = r.number(t, "timeout (seconds)");
    if (f.timeout_s <= 0) r.fail(t, "timeout must be a positive number of seconds");
  }
  f.compliance = kDefaultCompliance;
  if (const YAML::Node c = root["compliance"]) {
    if (c.IsScalar()) {
      if (r.flag(c, "compliance (off, or {command: [...]} / {ruleset: ..., config: ...})")) {
        f.compliance = kDefaultCompliance;
      } else {
        f.compliance.clear();
      }
    } else {
      r.only_keys(c, {"command", "ruleset", "usage", "config"}, "compliance");
      if (c["command"]) {
        if (c["ruleset"] || c["usage"] || c["config"]) {
          r.fail(c, "compliance: give either a command or the official checker's ruleset/usage/config");
        }
        f.compliance = r.list(c["command"], "compliance.command");
        if (f.compliance.empty()) r.fail(c["command"], "compliance.command is empty");
      } else {
        // A config is relative to the workload file; the checker wants absolute paths.
        const std::string config =
            c["config"] ? (f.path.parent_path() / r.text(c["config"], "compliance.config")).lexically_normal().string()
                        : "";
        f.compliance = official_checker(c["usage"] ? r.text(c["usage"], "compliance.usage") : "training",
                                        c["ruleset"] ? r.text(c["ruleset"], "compliance.ruleset") : "6.1.0", config);
      }
    }
  }
  if (const YAML::Node b = root["backends"]) {
    f.backends.clear();
    for (const std::string& name : r.list(b, "backends")) {
      if (name == "cpu") {
        f.backends.push_back(Backend::kCpu);
      } else if (name == "cuda") {
        f.backends.push_back(Backend::kCuda);
      } else {
        r.fail(b, fmt::format("backends: '{}' is not cpu or cuda", name));
      }
    }
    if (f.backends.empty()) r.fail(b, "backends is empty");
  }
  for (const char* key : {"batch_param", "learning_rate_param"}) {
    if (!root[key]) continue;
    const std::string param = r.text(root[key], key);
    const bool declared = std::any_of(f.params.begin(), f.params.end(), [&](const ParamSpec& p) {
      return p.name == param && p.type != ParamType::kString;
    });
    if (!declared) r.fail(root[key], fmt::format("{}: '{}' is not a declared int or float parameter", key, param));
    (std::string(key) == "batch_param" ? f.batch_param : f.learning_rate_param) = param;
  }

  // Every placeholder names something; {mllog} anywhere in the command or
  // its environment means the program writes its log there.
  auto check = [&](const YAML::Node& node, const std::string& value) {
    r.check_placeholders(node, value, names);
    if (value.find("{mllog}") != std::string::npos) f.writes_log_file = true;
  };
  for (size_t i = 0; i < f.command.size(); ++i) check(root["command"][i], f.command[i]);
  for (const auto& [name, value] : f.env) check(root["env"][name], value);
  for (const ToggleMapping& m : f.toggles) {
    const YAML::Node node = root["toggles"];
    for (const Switch* s : {&m.on, &m.off}) {
      for (const std::string& a : s->args) check(node, a);
      for (const auto& [name, value] : s->env) check(node, value);
    }
  }
  for (const std::string& a : f.compliance) {
    r.check_placeholders(root["compliance"] ? root["compliance"] : root, a, names);
  }
  return f;
}

WorkloadFile read_workload_file(const fs::path& path) {
  return parse_workload_file(read_document(path), path);
}

}  // namespace perflab::external
