// The common head and tables of perflab's HTML pages.
#include "reports/html_page.h"

#include <algorithm>

#include <fmt/format.h>

#include "reports/svg_chart.h"

namespace perflab::reports {
namespace {

constexpr const char* kStyle = R"(
body { font-family: sans-serif; margin: 2em auto; max-width: 1100px; color: #222; }
h1 { font-size: 1.6em; } h2 { font-size: 1.25em; margin-top: 2em; border-bottom: 1px solid #ccc; }
table { border-collapse: collapse; margin: 1em 0; font-size: 0.9em; }
th, td { border: 1px solid #ccc; padding: 0.3em 0.6em; text-align: right; }
th { background: #f3f3f3; } td.text, th.text { text-align: left; }
tr.best td { background: #e8f5e9; font-weight: bold; }
.charts { display: flex; flex-wrap: wrap; gap: 1em; }
svg.chart { border: 1px solid #ddd; }
.note { color: #555; font-size: 0.9em; }
)";

}  // namespace

std::string html_page_start(const std::string& title, const std::string& extra_style) {
  std::string h = "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n";
  h += "<title>" + xml_escape(title) + "</title>\n<style>" + kStyle + extra_style + "</style>\n</head>\n<body>\n";
  return h;
}

std::string html_table(const std::vector<std::string>& header, const std::vector<std::vector<std::string>>& rows,
                       const std::vector<size_t>& text_columns, const std::vector<std::string>& row_classes) {
  auto align = [&](size_t i) {
    return std::find(text_columns.begin(), text_columns.end(), i) != text_columns.end() ? " class=\"text\"" : "";
  };
  std::string h = "<table>\n<tr>";
  for (size_t i = 0; i < header.size(); ++i) h += fmt::format("<th{}>{}</th>", align(i), xml_escape(header[i]));
  h += "</tr>\n";
  for (size_t r = 0; r < rows.size(); ++r) {
    h += r < row_classes.size() && !row_classes[r].empty() ? "<tr class=\"" + row_classes[r] + "\">" : "<tr>";
    for (size_t i = 0; i < rows[r].size(); ++i) h += fmt::format("<td{}>{}</td>", align(i), xml_escape(rows[r][i]));
    h += "</tr>\n";
  }
  return h + "</table>\n";
}

}  // namespace perflab::reports
