// Parameter parsing and resolution.
#include "harness/params.h"

#include <cctype>
#include <cmath>
#include <cstdlib>

#include <fmt/format.h>

#include "base/error.h"
#include "base/text.h"

namespace perflab {
namespace {

std::string describe_range(const ParamSpec& spec) {
  if (!spec.choices.empty()) return "one of " + join(spec.choices, ", ");
  std::string lo = spec.min ? bound_text(spec, *spec.min) : "-inf";
  std::string hi = spec.max ? bound_text(spec, *spec.max) : "inf";
  return fmt::format("{} in [{}, {}]", param_type_name(spec.type), lo, hi);
}

}  // namespace

std::string bound_text(const ParamSpec& spec, double bound) {
  if (spec.type == ParamType::kInt) return fmt::format("{}", static_cast<long long>(bound));
  return fmt::format("{}", bound);  // shortest text that reads back as the same double
}

const char* param_type_name(ParamType type) {
  switch (type) {
    case ParamType::kInt: return "int";
    case ParamType::kFloat: return "float";
    case ParamType::kString: return "string";
  }
  return "?";
}

nlohmann::json parse_param(const std::string& workload, const ParamSpec& spec,
                           const std::string& text) {
  auto bad = [&](const std::string& why) {
    return UsageError(fmt::format("{}: parameter {}={}: {}; expected {}", workload, spec.name, text,
                                  why, describe_range(spec)));
  };
  if (spec.type == ParamType::kString) {
    if (!spec.choices.empty() && !contains(spec.choices, text)) throw bad("not a valid choice");
    return text;
  }
  if (text.empty()) throw bad("empty value");
  // strtoll/strtod skip leading blanks and take a '+': '5 ' was refused while
  // ' 5' and '+5' passed. The number is the whole text, as it is written out.
  const auto front = static_cast<unsigned char>(text.front());
  if (std::isspace(front) || front == '+') {
    throw bad(spec.type == ParamType::kInt ? "not an integer" : "not a finite number");
  }
  char* end = nullptr;
  double number = 0;
  long long integer = 0;
  if (spec.type == ParamType::kInt) {
    errno = 0;
    integer = std::strtoll(text.c_str(), &end, 10);
    if (*end != '\0' || errno == ERANGE) throw bad("not an integer");
    number = static_cast<double>(integer);  // for the bounds only: it rounds above 2^53
  } else {
    number = std::strtod(text.c_str(), &end);
    if (*end != '\0' || !std::isfinite(number)) throw bad("not a finite number");
  }
  if ((spec.min && number < *spec.min) || (spec.max && number > *spec.max)) {
    throw bad("out of range");
  }
  if (spec.type == ParamType::kInt) return static_cast<int64_t>(integer);  // exact, not through double
  return number;
}

ParamValues resolve_params(const std::string& workload, const std::vector<ParamSpec>& specs,
                           const Preset* preset,
                           const std::map<std::string, std::string>& overrides) {
  auto find = [&](const std::string& name) -> const ParamSpec& {
    for (const auto& s : specs) {
      if (s.name == name) return s;
    }
    std::vector<std::string> names;
    for (const auto& s : specs) names.push_back(s.name);
    throw UsageError(fmt::format("{}: unknown parameter '{}'; valid parameters: {}", workload,
                                 name, join(names, ", ")));
  };
  nlohmann::json values = nlohmann::json::object();
  for (const auto& s : specs) values[s.name] = parse_param(workload, s, s.default_value);
  if (preset) {
    for (const auto& [name, text] : preset->values) values[name] = parse_param(workload, find(name), text);
  }
  for (const auto& [name, text] : overrides) values[name] = parse_param(workload, find(name), text);
  return ParamValues(std::move(values));
}

int64_t ParamValues::get_int(const std::string& name) const {
  if (!values_.contains(name)) throw Error("internal: no parameter '" + name + "'");
  return values_.at(name).get<int64_t>();
}

double ParamValues::get_float(const std::string& name) const {
  if (!values_.contains(name)) throw Error("internal: no parameter '" + name + "'");
  return values_.at(name).get<double>();
}

std::string ParamValues::get_string(const std::string& name) const {
  if (!values_.contains(name)) throw Error("internal: no parameter '" + name + "'");
  return values_.at(name).get<std::string>();
}

}  // namespace perflab
