// feature_spec.yaml: dtype names, the default DeepLearningExamples layout, and
// reading and writing the YAML with yaml-cpp.
#include "workloads/dlrm/data/feature_spec.h"

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include <fstream>
#include <set>

#include "harness/atomic_file.h"
#include "base/error.h"
#include "harness/input_file.h"

namespace perflab::dlrm {
namespace {

constexpr std::pair<Dtype, const char*> kDtypeNames[] = {
    {Dtype::kBool, "bool"},       {Dtype::kInt8, "int8"},   {Dtype::kInt16, "int16"},
    {Dtype::kInt32, "int32"},     {Dtype::kInt64, "int64"}, {Dtype::kFloat16, "float16"},
    {Dtype::kFloat32, "float32"},
};

std::vector<std::string> string_list(const YAML::Node& node, const std::string& what) {
  if (!node.IsSequence()) throw UsageError(what + " must be a list");
  std::vector<std::string> items;
  for (const YAML::Node& item : node) items.push_back(item.as<std::string>());
  return items;
}

YAML::Node required(const YAML::Node& parent, const std::string& key, const std::string& where) {
  const YAML::Node node = parent[key];
  if (!node) throw UsageError(fmt::format("{} has no '{}'", where, key));
  return node;
}

/// Parses the document; throws UsageError with the reason alone.
FeatureSpec parse_spec(const YAML::Node& root) {
  if (!root.IsMap()) throw UsageError("top level must be a mapping");
  FeatureSpec spec;
  if (const YAML::Node metadata = root["metadata"]; metadata && metadata.IsMap()) {
    for (const auto& entry : metadata) {
      const std::string key = entry.first.as<std::string>();
      if (entry.second.IsScalar()) {
        spec.metadata.emplace_back(key, entry.second.as<std::string>());
      } else {
        YAML::Emitter out;
        out << YAML::Flow << entry.second;
        spec.metadata.emplace_back(key, out.c_str());
      }
    }
  }
  const YAML::Node features = required(root, "feature_spec", "spec");
  if (!features.IsMap()) throw UsageError("feature_spec must be a mapping");
  for (const auto& entry : features) {
    const std::string name = entry.first.as<std::string>();
    const std::string where = "feature " + name;
    if (!entry.second.IsMap()) throw UsageError(where + ": expected a mapping with a dtype");
    FeatureInfo info;
    try {
      info.dtype = parse_dtype(required(entry.second, "dtype", where).as<std::string>());
    } catch (const UsageError& e) {
      throw UsageError(fmt::format("{}: {}", where, e.what()));
    }
    if (const YAML::Node cardinality = entry.second["cardinality"]) {
      if (!YAML::convert<int64_t>::decode(cardinality, info.cardinality)) {
        throw UsageError(
            fmt::format("{}: cardinality '{}' is not an integer", where, cardinality.Scalar()));
      }
    }
    spec.features[name] = info;
  }
  const YAML::Node channels = required(root, "channel_spec", "spec");
  spec.label_channel = string_list(required(channels, "label", "channel_spec"), "label");
  if (const YAML::Node numerical = channels["numerical"]) {
    spec.numerical_channel = string_list(numerical, "channel_spec.numerical");
  }
  if (const YAML::Node categorical = channels["categorical"]) {
    spec.categorical_channel = string_list(categorical, "channel_spec.categorical");
  }
  std::set<std::string> seen;
  for (const auto* channel :
       {&spec.label_channel, &spec.numerical_channel, &spec.categorical_channel}) {
    for (const std::string& name : *channel) {
      if (spec.features.count(name) == 0) {
        throw UsageError(fmt::format("channel_spec names '{}', absent from feature_spec", name));
      }
      if (!seen.insert(name).second) {
        throw UsageError(fmt::format("feature '{}' appears twice in channel_spec", name));
      }
    }
  }
  for (const std::string& name : spec.categorical_channel) {
    const int64_t cardinality = spec.features[name].cardinality;
    if (cardinality < 1 || cardinality > INT32_MAX) {
      throw UsageError(fmt::format("categorical feature {} has cardinality {}, expected [1, 2^31)",
                                   name, cardinality));
    }
  }
  const YAML::Node sources = required(root, "source_spec", "spec");
  if (!sources.IsMap()) throw UsageError("source_spec must be a mapping");
  for (const auto& entry : sources) {
    const std::string split = entry.first.as<std::string>();
    if (!entry.second.IsSequence()) throw UsageError("source_spec." + split + " must be a list");
    for (const YAML::Node& node : entry.second) {
      const std::string where = "a source_spec." + split + " chunk";
      SourceChunk chunk;
      chunk.type = required(node, "type", where).as<std::string>();
      chunk.features = string_list(required(node, "features", where), where + "'s features");
      chunk.files = string_list(required(node, "files", where), where + "'s files");
      spec.source_spec[split].push_back(std::move(chunk));
    }
  }
  return spec;
}

}  // namespace

Dtype parse_dtype(const std::string& name) {
  for (const auto& [dtype, dtype_text] : kDtypeNames) {
    if (name == dtype_text) return dtype;
  }
  throw UsageError(fmt::format("unknown dtype '{}'", name));
}

const char* dtype_name(Dtype dtype) {
  for (const auto& [candidate, name] : kDtypeNames) {
    if (candidate == dtype) return name;
  }
  return "?";
}

int dtype_size(Dtype dtype) {
  switch (dtype) {
    case Dtype::kBool:
    case Dtype::kInt8:
      return 1;
    case Dtype::kInt16:
    case Dtype::kFloat16:
      return 2;
    case Dtype::kInt32:
    case Dtype::kFloat32:
      return 4;
    case Dtype::kInt64:
      return 8;
  }
  return 0;
}

Dtype categorical_dtype(int64_t cardinality) {
  if (cardinality < INT8_MAX) return Dtype::kInt8;
  if (cardinality < INT16_MAX) return Dtype::kInt16;
  if (cardinality < INT32_MAX) return Dtype::kInt32;
  throw UsageError(fmt::format("cardinality {} does not fit int32", cardinality));
}

FeatureSpec default_feature_spec(int num_numerical, const std::vector<int64_t>& cardinalities) {
  FeatureSpec spec;
  spec.features["label"] = {Dtype::kInt8, 0};
  spec.label_channel = {"label"};
  for (int j = 0; j < num_numerical; ++j) {
    spec.numerical_channel.push_back(fmt::format("num_{}", j));
    spec.features[spec.numerical_channel.back()] = {Dtype::kFloat32, 0};
  }
  for (size_t t = 0; t < cardinalities.size(); ++t) {
    spec.categorical_channel.push_back(fmt::format("cat_{}", t));
    spec.features[spec.categorical_channel.back()] = {categorical_dtype(cardinalities[t]),
                                                      cardinalities[t]};
  }
  for (const std::string split : {"train", "test"}) {
    std::vector<SourceChunk>& chunks = spec.source_spec[split];
    chunks.push_back({"split_binary", spec.label_channel, {split + "/label.bin"}});
    if (num_numerical > 0) {
      chunks.push_back({"split_binary", spec.numerical_channel, {split + "/numerical.bin"}});
    }
    for (const std::string& name : spec.categorical_channel) {
      chunks.push_back({"split_binary", {name}, {split + "/" + name + ".bin"}});
    }
  }
  return spec;
}

FeatureSpec read_feature_spec(const std::string& path) {
  YAML::Node root;
  try {
    root = YAML::Load(read_document(path));
  } catch (const YAML::Exception& e) {
    throw UsageError(fmt::format("{}:{}: invalid YAML: {}", path, e.mark.line + 1, e.msg));
  }
  try {
    return parse_spec(root);
  } catch (const UsageError& e) {
    throw UsageError(fmt::format("{}: {}", path, e.what()));
  } catch (const YAML::Exception& e) {
    throw UsageError(fmt::format("{}:{}: {}", path, e.mark.line + 1, e.msg));
  }
}

void write_feature_spec(const FeatureSpec& spec, const std::string& path) {
  YAML::Emitter out;
  out << YAML::BeginMap;
  out << YAML::Key << "metadata" << YAML::Value << YAML::BeginMap;
  for (const auto& [key, value] : spec.metadata) out << YAML::Key << key << YAML::Value << value;
  out << YAML::EndMap;
  out << YAML::Key << "feature_spec" << YAML::Value << YAML::BeginMap;
  for (const auto& [name, info] : spec.features) {
    out << YAML::Key << name << YAML::Value << YAML::BeginMap;
    out << YAML::Key << "dtype" << YAML::Value << dtype_name(info.dtype);
    if (info.cardinality > 0) out << YAML::Key << "cardinality" << YAML::Value << info.cardinality;
    out << YAML::EndMap;
  }
  out << YAML::EndMap;
  out << YAML::Key << "channel_spec" << YAML::Value << YAML::BeginMap;
  out << YAML::Key << "label" << YAML::Value << spec.label_channel;
  out << YAML::Key << "numerical" << YAML::Value << spec.numerical_channel;
  out << YAML::Key << "categorical" << YAML::Value << spec.categorical_channel;
  out << YAML::EndMap;
  out << YAML::Key << "source_spec" << YAML::Value << YAML::BeginMap;
  for (const auto& [split, chunks] : spec.source_spec) {
    out << YAML::Key << split << YAML::Value << YAML::BeginSeq;
    for (const SourceChunk& chunk : chunks) {
      out << YAML::BeginMap << YAML::Key << "type" << YAML::Value << chunk.type;
      out << YAML::Key << "features" << YAML::Value << chunk.features;
      out << YAML::Key << "files" << YAML::Value << chunk.files << YAML::EndMap;
    }
    out << YAML::EndSeq;
  }
  out << YAML::EndMap << YAML::EndMap;
  write_file_atomically(path, std::string(out.c_str()) + "\n");
}

}  // namespace perflab::dlrm
