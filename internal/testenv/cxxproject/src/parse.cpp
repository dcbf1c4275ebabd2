#include <string>

#include "kernels.h"

int count_flags(int argc, char **argv) {
  int n = 0;
  for (int i = 1; i < argc; ++i) n += std::string(argv[i]).rfind("--", 0) == 0;
  return n;
}
