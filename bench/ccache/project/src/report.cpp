#include <iomanip>
#include <iostream>
#include <sstream>
#include <string>

#include "kernels.h"

std::string report(const std::vector<double> &values) {
  std::ostringstream out;
  out << std::fixed << std::setprecision(3);
  for (size_t i = 0; i < values.size(); ++i) out << "value[" << i << "] = " << std::setw(10) << values[i] << '\n';
  std::wostringstream wide;
  wide << std::scientific << values.size();
  std::cerr << std::hex << values.size() << std::dec;
  return out.str();
}
