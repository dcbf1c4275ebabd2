#include <cstdio>

#include "kernels.h"

int main(int argc, char **argv) {
  const double v[] = {1.5, 4.25, 2.0};
  std::printf("max %.2f, %d flags, task 7 on worker %d, mean %.2f\n", reduce_max(v, 3), count_flags(argc, argv),
              schedule(7, 8, 2), report_mean(v, 3));
  return 0;
}
