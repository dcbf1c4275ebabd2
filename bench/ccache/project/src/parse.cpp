#include <algorithm>
#include <cctype>
#include <map>
#include <sstream>

#include "kernels.h"

std::vector<std::string> parse_args(const std::string &text) {
  std::istringstream in(text);
  std::map<std::string, std::string> seen;
  for (std::string word; in >> word;) {
    if (word.rfind("--", 0) != 0) continue;
    auto eq = word.find('=');
    std::string key = word.substr(2, eq == std::string::npos ? std::string::npos : eq - 2);
    std::transform(key.begin(), key.end(), key.begin(), [](unsigned char c) { return std::tolower(c); });
    seen[key] = eq == std::string::npos ? "" : word.substr(eq + 1);
  }
  std::vector<std::string> out;
  for (const auto &[k, v] : seen) {
    std::ostringstream s;
    s << k << '=' << v;
    out.push_back(s.str());
  }
  std::stable_sort(out.begin(), out.end(), [](const std::string &a, const std::string &b) { return a.size() < b.size(); });
  return out;
}
