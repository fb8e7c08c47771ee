// HDF5 output (serial HDF5, C API): one 1-D dataset per table column under /summary, with
// "units" and "description" attributes, and string attributes on the root group describing the
// inputs. Object modification times are not recorded, so the same table gives the same bytes.
#pragma once

#include <filesystem>
#include <map>
#include <string>

#include "sim/output/table.hpp"

namespace sp::output {

/// The file's bytes, built in memory (HDF5's core driver) and returned whole, so that the caller
/// writes them as any other output (StagedFiles: checked, renamed): HDF5 itself never writes to
/// disk, and a disk or file-size limit cannot leave it a half-flushed file to close at exit.
std::string hdf5_image(const Table& table, const std::map<std::string, std::string>& root_attributes);

}  // namespace sp::output
