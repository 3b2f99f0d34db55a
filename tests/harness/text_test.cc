// Text helpers: one_line keeps every error on the one line users are promised.
#include "harness/text.h"

#include <gtest/gtest.h>

namespace perflab {
namespace {

TEST(OneLine, ControlCharactersBecomeEscapes) {
  EXPECT_EQ(one_line("dlrm: parameter batch_size=1\n2: not an integer"),
            "dlrm: parameter batch_size=1\\n2: not an integer");
  EXPECT_EQ(one_line("a\r\tb\x01\x7f"), "a\\r\\tb\\x01\\x7f");
  EXPECT_EQ(one_line("caf\xc3\xa9 'x'"), "caf\xc3\xa9 'x'");  // UTF-8 and quotes stay
}

TEST(Split, EmptyInputGivesOneEmptyElement) {
  EXPECT_EQ(split("", ','), std::vector<std::string>{""});
  EXPECT_EQ(split("a,,b", ','), (std::vector<std::string>{"a", "", "b"}));
}

}  // namespace
}  // namespace perflab
