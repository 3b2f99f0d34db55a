// Small string helpers shared by the harness.
#pragma once

#include <algorithm>
#include <cctype>
#include <string>
#include <string_view>
#include <vector>

namespace perflab {

inline std::string join(const std::vector<std::string>& parts, const std::string& sep) {
  std::string out;
  for (size_t i = 0; i < parts.size(); ++i) {
    if (i) out += sep;
    out += parts[i];
  }
  return out;
}

/// `s` without the white space (std::isspace) at its two ends.
inline std::string_view trim_space(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

inline bool contains(const std::vector<std::string>& v, const std::string& x) {
  return std::find(v.begin(), v.end(), x) != v.end();
}

/// Splits "a,b,c" on `sep`; empty input gives one empty element.
inline std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> out;
  size_t start = 0;
  for (;;) {
    size_t pos = s.find(sep, start);
    out.push_back(s.substr(start, pos - start));
    if (pos == std::string::npos) return out;
    start = pos + 1;
  }
}

/// The offset of the first byte of `text` that does not begin valid UTF-8
/// (RFC 3629: no overlong forms, no surrogates, nothing above U+10FFFF), or
/// std::string::npos when all of it is valid. JSON holds UTF-8 only, so
/// text that may reach a result, a log or a report is checked with this.
inline size_t invalid_utf8_at(std::string_view text) {
  size_t i = 0;
  while (i < text.size()) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (c < 0x80) {
      ++i;
      continue;
    }
    size_t more = 0;                          // continuation bytes
    unsigned char lo = 0x80, hi = 0xBF;       // range of the first of them
    if (c >= 0xC2 && c <= 0xDF) {
      more = 1;
    } else if (c >= 0xE0 && c <= 0xEF) {
      more = 2;
      if (c == 0xE0) lo = 0xA0;               // overlong
      if (c == 0xED) hi = 0x9F;               // surrogates
    } else if (c >= 0xF0 && c <= 0xF4) {
      more = 3;
      if (c == 0xF0) lo = 0x90;               // overlong
      if (c == 0xF4) hi = 0x8F;               // above U+10FFFF
    } else {
      return i;
    }
    for (size_t k = 1; k <= more; ++k) {
      if (i + k >= text.size()) return i;
      const auto b = static_cast<unsigned char>(text[i + k]);
      if (b < (k == 1 ? lo : 0x80) || b > (k == 1 ? hi : 0xBF)) return i;
    }
    i += more + 1;
  }
  return std::string::npos;
}

/// `text` on one line: a newline, tab or other control character (from a
/// file or an argument quoted in an error) shown as an escape such as \n,
/// so an error is always the one line the user is promised.
inline std::string one_line(const std::string& text) {
  static const char kHex[] = "0123456789abcdef";
  std::string out;
  for (char c : text) {
    const auto u = static_cast<unsigned char>(c);
    if (c == '\n') {
      out += "\\n";
    } else if (c == '\r') {
      out += "\\r";
    } else if (c == '\t') {
      out += "\\t";
    } else if (u < 0x20 || u == 0x7f) {
      out += "\\x";
      out += kHex[u >> 4];
      out += kHex[u & 15];
    } else {
      out += c;
    }
  }
  return out;
}

}  // namespace perflab
