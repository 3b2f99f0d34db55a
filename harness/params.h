// Workload parameters: declarations (name, type, default, range, help) and
// resolved values. Resolution order: declared default, then preset, then
// --set overrides; every value is validated against its declaration.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace perflab {

enum class ParamType { kInt, kFloat, kString };

/// One parameter a workload accepts.
struct ParamSpec {
  std::string name;
  ParamType type = ParamType::kInt;
  std::string default_value;  ///< As the user would type it.
  std::string help;
  std::optional<double> min;  ///< Inclusive bounds for numbers.
  std::optional<double> max;
  std::vector<std::string> choices;  ///< Allowed strings (empty: any).
};

/// A named set of parameter values (text, as the user would type them).
/// A bound of `spec` as the user must type it: integers as integers
/// (4194304, not 4.1943e+06), floats in the shortest exact form.
std::string bound_text(const ParamSpec& spec, double bound);

struct Preset {
  std::string name;
  std::string help;
  std::map<std::string, std::string> values;
};

/// Resolved, validated parameter values, keyed by name.
class ParamValues {
 public:
  ParamValues() = default;
  explicit ParamValues(nlohmann::json values) : values_(std::move(values)) {}

  int64_t get_int(const std::string& name) const;
  double get_float(const std::string& name) const;
  std::string get_string(const std::string& name) const;
  bool has(const std::string& name) const { return values_.contains(name); }
  const nlohmann::json& json() const { return values_; }

 private:
  nlohmann::json values_ = nlohmann::json::object();
};

/// Parses and checks `text` against `spec`; throws UsageError naming the
/// workload, the parameter and what is allowed.
nlohmann::json parse_param(const std::string& workload, const ParamSpec& spec,
                           const std::string& text);

/// Resolves defaults <- preset <- overrides. Unknown names and bad values
/// throw UsageError listing the valid choices.
ParamValues resolve_params(const std::string& workload, const std::vector<ParamSpec>& specs,
                           const Preset* preset,
                           const std::map<std::string, std::string>& overrides);

/// "int", "float" or "string".
const char* param_type_name(ParamType type);

}  // namespace perflab
