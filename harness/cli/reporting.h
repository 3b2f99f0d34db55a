// Writing the sweep reports (Markdown, CSV, JSON, HTML) for a set of results.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

namespace perflab::cli {

/// Reads every result under `inputs`, says on stderr which files were
/// skipped and why, and writes report.{md,csv,json,html} into `out_dir`.
/// Returns the paths written.
std::vector<std::filesystem::path> write_reports(const std::vector<std::filesystem::path>& inputs,
                                                 const std::filesystem::path& out_dir,
                                                 const std::string& title);

}  // namespace perflab::cli
