#pragma once
#include <string>
#include <vector>

// Each unit stands for a part of a GPU project's host code: parsing, scheduling, reduction
// and reporting, each pulling in the standard library the way real sources do.
std::vector<std::string> parse_args(const std::string &text);
double reduce_max(const std::vector<double> &values);
std::vector<int> schedule(int tasks, int workers);
std::string report(const std::vector<double> &values);
