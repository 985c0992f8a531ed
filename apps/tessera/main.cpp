#include <iostream>

#include "tessera/tessera.h"

int main() {
  std::cout << "tessera " << TESSERA_VERSION << "\n";
  return 0;
}
