// HDF5 output (serial HDF5, C API): one 1-D dataset per table column under /summary, with
// "units" and "description" attributes, and string attributes on the root group describing the
// inputs. Object modification times are not recorded, so the same table gives the same bytes.
#pragma once

#include <filesystem>
#include <map>
#include <string>

#include "sim/output/table.hpp"

namespace sp::output {

void write_hdf5(const std::filesystem::path& file, const Table& table,
                const std::map<std::string, std::string>& root_attributes);

}  // namespace sp::output
