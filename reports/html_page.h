// Pieces shared by perflab's self-contained HTML pages (the sweep report
// and the history dashboard): the document head with the common style, and
// tables. No scripts and nothing fetched from the network.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace perflab::reports {

/// "<!DOCTYPE html> ... <body>\n": the head with `title` and the common
/// style plus `extra_style` (CSS rules).
std::string html_page_start(const std::string& title, const std::string& extra_style = "");

/// A table from a header and rows of plain-text cells (escaped here); the
/// columns in `text_columns` are left-aligned, the others (numbers) right.
/// Rows whose `row_classes` entry is not empty get that class.
std::string html_table(const std::vector<std::string>& header, const std::vector<std::vector<std::string>>& rows,
                       const std::vector<size_t>& text_columns, const std::vector<std::string>& row_classes = {});

}  // namespace perflab::reports
