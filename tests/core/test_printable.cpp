// Escaping untrusted text for terminals and messages: control characters, terminal escapes, C1 and
// bidirectional controls and invalid UTF-8 become visible escapes; printable UTF-8 passes; long text
// is cut with "...".
#include "tessera/core/printable.h"
#include "test_util.h"

using namespace tessera;

TEST(Printable, EscapesWhatCouldForgeTerminalOutput) {
  EXPECT_EQ(printable("blk.0.attn_q.weight"), "blk.0.attn_q.weight");
  EXPECT_EQ(printable("a\nb\tc\rd"), "a\\nb\\tc\\rd");
  EXPECT_EQ(printable("\x1b[2J\x1b]0;title\x07"), "\\x1b[2J\\x1b]0;title\\x07");
  EXPECT_EQ(printable(std::string("nul\0x", 5)), "nul\\x00x");
  EXPECT_EQ(printable("\x7f"), "\\x7f");
  EXPECT_EQ(printable("\xc2\x9b" "31m"), "\\u009b31m");        // C1 CSI, UTF-8 encoded
  EXPECT_EQ(printable("abc\xe2\x80\xae" "fed"), "abc\\u202efed");  // right-to-left override
  EXPECT_EQ(printable("\xff\xfe"), "\\xff\\xfe");                 // not UTF-8
  EXPECT_EQ(printable("\xc3\x28"), "\\xc3(");                     // a broken sequence
  EXPECT_EQ(printable("\xed\xa0\x80"), "\\xed\\xa0\\x80");          // a UTF-16 surrogate
  EXPECT_EQ(printable("caf\xc3\xa9 \xe6\x97\xa5\xe6\x9c\xac"), "caf\xc3\xa9 \xe6\x97\xa5\xe6\x9c\xac");
  EXPECT_EQ(printable_quoted("say \"hi\"\\"), "\"say \\\"hi\\\"\\\\\"");
}

TEST(Printable, CutsLongTextWithAnEllipsis) {
  EXPECT_EQ(printable(std::string(10, 'x'), 10), std::string(10, 'x'));
  EXPECT_EQ(printable(std::string(11, 'x'), 10), std::string(10, 'x') + "...");
  EXPECT_EQ(printable(std::string(8 << 20, 'k'), 64).size(), 67u);
  // Escapes count their full length and are never cut in half.
  EXPECT_EQ(printable("ab\n\n", 3), "ab...");
  EXPECT_EQ(printable_quoted(std::string(300, 'q')).size(), 200u + 3 + 2);
}
