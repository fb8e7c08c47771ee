// The results of a scenario as a table (the columns of summary.csv and results.h5) and as the
// console table `scalepoint run` prints.
#pragma once

#include <string>
#include <vector>

#include "sim/output/table.hpp"
#include "sim/scenario/scenario.hpp"

namespace sp {

output::Table scaling_table(const std::vector<ScalingPoint>& points);
std::string console_table(const output::Table& table);

}  // namespace sp
