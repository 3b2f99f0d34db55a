// The link presets of `perflab model` (collectives/model.h): NVLink4 with
// NVSwitch per GPU, and one InfiniBand NIC per GPU (a rail) of HDR (200 Gb/s)
// or NDR (400 Gb/s), with or without SHARP. Sources in
// docs/collectives-model.md ("Presets").
#include <fmt/format.h>

#include "collectives/model.h"
#include "collectives/model_nccl_constants.h"
#include "base/error.h"

namespace perflab::collectives {
namespace {

struct Gpu {
  const char* key;
  const char* name;
};
struct Net {
  const char* key;
  const char* name;
  double gbps;
};

constexpr Gpu kGpus[] = {{"h100", "H100"}, {"h200", "H200"}};
constexpr Net kNets[] = {{"hdr", "InfiniBand HDR", 200}, {"ndr", "InfiniBand NDR", 400}};

LinkPreset make(const Gpu& gpu, const Net* net, bool sharp) {
  LinkPreset p;
  p.gpu = gpu.name;
  p.nvlink_links = 18;
  p.nvlink_link_gbs = nccl_constants::kSm90NvlinkBw;
  p.nvls = true;
  p.name = gpu.key;
  p.description = fmt::format("{} SXM, NVLink4 18 links x {} GB/s to NVSwitch (multicast)", gpu.name,
                              p.nvlink_link_gbs);
  if (net != nullptr) {
    p.nic_gbps = net->gbps;
    p.sharp = sharp;
    p.name += fmt::format("-{}{}", net->key, sharp ? "-sharp" : "");
    p.description += fmt::format("; {} {} Gb/s per GPU rail{}", net->name, net->gbps,
                                 sharp ? ", SHARP (CollNet)" : ", no SHARP");
  }
  return p;
}

std::vector<LinkPreset> build() {
  std::vector<LinkPreset> all;
  for (const Gpu& gpu : kGpus) {
    all.push_back(make(gpu, nullptr, false));
    for (const Net& net : kNets) {
      all.push_back(make(gpu, &net, false));
      all.push_back(make(gpu, &net, true));
    }
  }
  return all;
}

}  // namespace

const std::vector<LinkPreset>& link_presets() {
  static const std::vector<LinkPreset> presets = build();
  return presets;
}

const LinkPreset& find_link_preset(std::string_view name) {
  std::string names;
  for (const LinkPreset& p : link_presets()) {
    if (p.name == name) return p;
    names += (names.empty() ? "" : ", ") + p.name;
  }
  throw UsageError(fmt::format("--link: unknown preset '{}' (one of: {})", name, names));
}

}  // namespace perflab::collectives
