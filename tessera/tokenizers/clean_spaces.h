#pragma once
// The detokenizer's space clean-up of Hugging Face's GPT-2-style tokenizers, as llama.cpp applies it
// after decoding byte-level BPE: " ." " ," " !" " ?" lose their space, " ' " becomes "'", and " 's",
// " 'm", " 're", " 've" lose their space (" 't", " 'd", " 'll" keep it).
#include <string>

namespace tessera::tokenizers {

std::string clean_up_spaces(const std::string& text);

}  // namespace tessera::tokenizers
