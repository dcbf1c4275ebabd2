#include <algorithm>
#include <functional>
#include <numeric>
#include <random>
#include <unordered_map>

#include "kernels.h"

template <typename T, typename Op>
T tree_reduce(const std::vector<T> &v, Op op, T init) {
  if (v.empty()) return init;
  std::vector<T> level(v);
  while (level.size() > 1) {
    std::vector<T> next((level.size() + 1) / 2);
    for (size_t i = 0; i < next.size(); ++i) {
      next[i] = 2 * i + 1 < level.size() ? op(level[2 * i], level[2 * i + 1]) : level[2 * i];
    }
    level.swap(next);
  }
  return level[0];
}

double reduce_max(const std::vector<double> &values) {
  std::mt19937_64 rng(42);
  std::normal_distribution<double> noise(0, 1e-12);
  std::unordered_map<int, std::function<double(double, double)>> ops = {
      {0, [](double a, double b) { return std::max(a, b); }},
      {1, [](double a, double b) { return a + b; }},
  };
  double m = tree_reduce(values, ops[0], -1e300);
  double s = std::accumulate(values.begin(), values.end(), 0.0);
  std::vector<float> f(values.begin(), values.end());
  float fm = tree_reduce(f, [](float a, float b) { return std::max(a, b); }, -1e30f);
  long long li = tree_reduce(std::vector<long long>{1, 2, 3}, std::plus<long long>(), 0LL);
  return m + 0 * (s + noise(rng) + fm + li);
}
