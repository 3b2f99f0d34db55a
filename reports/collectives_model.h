// What `perflab model` prints and writes, from a collectives::ModelTable
// (collectives/model_sweep.h): a text table in nccl-tests' style (header and
// footer lines start with '#'), JSON, a self-contained HTML page with the
// busbw-versus-size chart (log2 size axis), and the calibration summary.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "collectives/model_fit.h"
#include "collectives/model_sweep.h"

namespace perflab::reports {

/// Per size: time (us), busbw (GB/s) and protocol per algorithm, then the
/// best; footer: algorithms that do not run here and why, crossovers, and
/// the sentence.
std::string render_model_text(const collectives::ModelTable& table);

/// The same as a document: {"schema": "perflab.model/1", ...}.
nlohmann::json model_json(const collectives::ModelTable& table);

/// A whole HTML page: the sentence, the chart and the table.
std::string render_model_html(const collectives::ModelTable& table);

/// `perflab model --op all_to_all`: per size the estimate's time, algbw,
/// busbw and the bytes per GPU over NVLink and the network, in the same
/// '#'-commented layout; `json`: {"schema": "perflab.model/1", "op":
/// "all_to_all", ...} instead.
std::string render_all_to_all_text(const std::vector<collectives::AllToAllPrediction>& rows, const collectives::Topology& topo,
                                   const collectives::LinkPreset& link);
nlohmann::json all_to_all_json(const std::vector<collectives::AllToAllPrediction>& rows, const collectives::Topology& topo,
                               const collectives::LinkPreset& link);

/// One line per fitted (op, algorithm): points, the two multipliers, and the
/// relative time error before and after.
std::string render_calibration_text(const collectives::CalibrationResult& result, const std::string& link);

}  // namespace perflab::reports
