#include <cstdio>

#include "kernels.h"

int main(int argc, char **argv) {
  std::string args;
  for (int i = 1; i < argc; ++i) args += std::string(argv[i]) + " ";
  auto flags = parse_args(args);
  std::vector<double> v = {1.5, 4.25, 2.0};
  auto owner = schedule(8, 2);
  std::printf("max %.2f, %zu flags, task 7 on worker %d\n%s", reduce_max(v), flags.size(), owner[7], report(v).c_str());
  return 0;
}
