#include "tessera/tokenizers/clean_spaces.h"

namespace tessera::tokenizers {

namespace {

std::string drop_space_before_punctuation(const std::string& t) {
  std::string out;
  for (size_t i = 0; i < t.size(); ++i) {
    const char x = t[i];
    if (i > 0 && t[i - 1] == ' ' && (x == '.' || x == ',' || x == '!' || x == '?')) out.pop_back();
    out += x;
  }
  return out;
}

std::string join_lone_apostrophes(const std::string& t) {
  std::string out;
  for (size_t i = 0; i < t.size(); ++i) {
    if (i > 0 && t[i] == '\'' && i + 1 < t.size() && t[i - 1] == ' ' && t[i + 1] == ' ') {
      out.pop_back();
      out += '\'';
      ++i;  // and the space after it
      continue;
    }
    out += t[i];
  }
  return out;
}

std::string join_contractions(const std::string& t) {
  std::string out;
  for (size_t i = 0; i < t.size(); ++i) {
    if (i > 0 && t[i - 1] == ' ' && t[i] == '\'' && i + 1 < t.size()) {
      const char a = t[i + 1];
      const char b = i + 2 < t.size() ? t[i + 2] : '\0';
      if (a == 's' || a == 'm' || (a == 'r' && b == 'e') || (a == 'v' && b == 'e')) out.pop_back();
    }
    out += t[i];
  }
  return out;
}

}  // namespace

std::string clean_up_spaces(const std::string& text) {
  return join_contractions(join_lone_apostrophes(drop_space_before_punctuation(text)));
}

}  // namespace tessera::tokenizers
