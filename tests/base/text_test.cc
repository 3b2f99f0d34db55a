// Text helpers: one_line keeps every error on the one line users are promised.
#include "base/text.h"

#include <gtest/gtest.h>

#include <random>

#include <nlohmann/json.hpp>

namespace perflab {
namespace {

TEST(OneLine, ControlCharactersBecomeEscapes) {
  EXPECT_EQ(one_line("dlrm: parameter batch_size=1\n2: not an integer"),
            "dlrm: parameter batch_size=1\\n2: not an integer");
  EXPECT_EQ(one_line("a\r\tb\x01\x7f"), "a\\r\\tb\\x01\\x7f");
  EXPECT_EQ(one_line("caf\xc3\xa9 'x'"), "caf\xc3\xa9 'x'");  // UTF-8 and quotes stay
}

TEST(InvalidUtf8At, FindsTheFirstByteThatDoesNotBeginValidUtf8) {
  const size_t ok = std::string::npos;
  EXPECT_EQ(invalid_utf8_at("plain ascii"), ok);
  EXPECT_EQ(invalid_utf8_at("caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80"), ok);  // é, €, an emoji
  EXPECT_EQ(invalid_utf8_at("caf\xe9"), 3u);           // Latin-1 é
  EXPECT_EQ(invalid_utf8_at("64,\xc9"), 3u);           // cut short
  EXPECT_EQ(invalid_utf8_at("\xc0\xaf"), 0u);          // overlong '/'
  EXPECT_EQ(invalid_utf8_at("\xe0\x80\xaf"), 0u);      // overlong
  EXPECT_EQ(invalid_utf8_at("a\xed\xa0\x80"), 1u);     // a surrogate
  EXPECT_EQ(invalid_utf8_at("\xf4\x90\x80\x80"), 0u);  // above U+10FFFF
  EXPECT_EQ(invalid_utf8_at("\xf4\x8f\xbf\xbf"), ok);  // U+10FFFF
  EXPECT_EQ(invalid_utf8_at("\x80"), 0u);              // a lone continuation byte
  EXPECT_EQ(invalid_utf8_at(std::string("a\0b", 3)), ok);
}

// The check agrees with the JSON library's own: text it calls valid can be
// written to a result (dump() throws on invalid UTF-8), and only that text.
TEST(InvalidUtf8At, AgreesWithWhatJsonCanWrite) {
  std::mt19937 rng(13);
  const unsigned char interesting[] = {0x00, 0x41, 0x7f, 0x80, 0x8f, 0x90, 0x9f, 0xa0, 0xbf, 0xc0, 0xc1, 0xc2,
                                       0xdf, 0xe0, 0xe1, 0xec, 0xed, 0xee, 0xef, 0xf0, 0xf1, 0xf3, 0xf4, 0xf5, 0xff};
  for (int n = 0; n < 200000; ++n) {
    std::string s(1 + rng() % 5, ' ');
    for (char& c : s) c = static_cast<char>(interesting[rng() % sizeof(interesting)]);
    bool json_ok = true;
    try {
      nlohmann::json(s).dump();
    } catch (const nlohmann::json::exception&) {
      json_ok = false;
    }
    ASSERT_EQ(invalid_utf8_at(s) == std::string::npos, json_ok) << nlohmann::json(s).dump(-1, ' ', true);
  }
}

TEST(Split, EmptyInputGivesOneEmptyElement) {
  EXPECT_EQ(split("", ','), std::vector<std::string>{""});
  EXPECT_EQ(split("a,,b", ','), (std::vector<std::string>{"a", "", "b"}));
}

}  // namespace
}  // namespace perflab
