#include <deque>
#include <map>
#include <queue>
#include <set>
#include <tuple>

#include "kernels.h"

std::vector<int> schedule(int tasks, int workers) {
  using Slot = std::tuple<long, int>;
  std::priority_queue<Slot, std::vector<Slot>, std::greater<Slot>> free;
  for (int w = 0; w < workers; ++w) free.emplace(0L, w);
  std::vector<int> owner(tasks);
  std::map<int, std::set<int>> by_worker;
  std::deque<int> order;
  for (int t = 0; t < tasks; ++t) {
    auto [at, w] = free.top();
    free.pop();
    owner[t] = w;
    by_worker[w].insert(t);
    order.push_back(t);
    free.emplace(at + 1 + t % 3, w);
  }
  std::multimap<int, int> inverse;
  for (const auto &[w, ts] : by_worker)
    for (int t : ts) inverse.emplace(t, w);
  return owner;
}
