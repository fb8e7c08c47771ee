#include "sim/output/hdf5_writer.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <stdexcept>
#include <vector>

#include <hdf5.h>

namespace sp::output {

namespace {

// Owns one HDF5 identifier and closes it with the matching function (close() to check it).
class Handle {
 public:
  Handle(hid_t id, herr_t (*close)(hid_t), const char* what) : id_(id), close_(close) {
    if (id_ < 0) throw std::runtime_error(std::string("HDF5: cannot create ") + what);
  }
  ~Handle() {
    if (id_ >= 0) close_(id_);
  }
  void close(const char* what) {
    const herr_t status = close_(id_);
    id_ = -1;
    if (status < 0) throw std::runtime_error(std::string("HDF5: cannot close ") + what);
  }
  Handle(const Handle&) = delete;
  Handle& operator=(const Handle&) = delete;
  hid_t get() const { return id_; }

 private:
  hid_t id_;
  herr_t (*close_)(hid_t);
};

void check(herr_t status, const char* what) {
  if (status < 0) throw std::runtime_error(std::string("HDF5: cannot ") + what);
}

// A fixed-length string attribute; one too long for an object header (64 KiB: a long description,
// a scenario with large inline tables) as a variable-length string, whose bytes live in the file's
// global heap. Readers see a string either way.
void string_attribute(hid_t object, const std::string& name, const std::string& value) {
  constexpr std::size_t kInHeader = 60000;
  const bool variable = value.size() > kInHeader;
  Handle type(H5Tcopy(H5T_C_S1), H5Tclose, "string type");
  check(H5Tset_size(type.get(), variable ? H5T_VARIABLE : (value.empty() ? 1 : value.size())), "set string size");
  check(H5Tset_cset(type.get(), H5T_CSET_UTF8), "set string charset");
  Handle space(H5Screate(H5S_SCALAR), H5Sclose, "scalar space");
  Handle attr(H5Acreate2(object, name.c_str(), type.get(), space.get(), H5P_DEFAULT, H5P_DEFAULT),
              H5Aclose, "attribute");
  if (variable) {
    const char* text = value.c_str();
    check(H5Awrite(attr.get(), type.get(), &text), "write attribute");
    return;
  }
  const std::string stored = value.empty() ? std::string(1, '\0') : value;
  check(H5Awrite(attr.get(), type.get(), stored.data()), "write attribute");
}

}  // namespace

std::string hdf5_image(const Table& table, const std::map<std::string, std::string>& root_attributes) {
  H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);  // errors become exceptions, not stderr dumps
  // In memory only (no backing store): the name is only HDF5's handle on it.
  Handle fapl(H5Pcreate(H5P_FILE_ACCESS), H5Pclose, "file access properties");
  check(H5Pset_fapl_core(fapl.get(), 1 << 16, 0), "keep the file in memory");
  Handle gcpl(H5Pcreate(H5P_GROUP_CREATE), H5Pclose, "group properties");
  Handle dcpl(H5Pcreate(H5P_DATASET_CREATE), H5Pclose, "dataset properties");
  Handle f(H5Fcreate("scalepoint-image.h5", H5F_ACC_TRUNC, H5P_DEFAULT, fapl.get()), H5Fclose, "in-memory file");
  for (const auto& [key, value] : root_attributes) string_attribute(f.get(), key, value);

  // No timestamps in object headers: identical inputs must give identical files.
  check(H5Pset_obj_track_times(gcpl.get(), 0), "disable group times");
  Handle group(H5Gcreate2(f.get(), "summary", H5P_DEFAULT, gcpl.get(), H5P_DEFAULT), H5Gclose, "/summary");
  check(H5Pset_obj_track_times(dcpl.get(), 0), "disable dataset times");

  const hsize_t rows = table.rows();
  Handle space(H5Screate_simple(1, &rows, nullptr), H5Sclose, "data space");
  for (const Column& c : table.columns) {
    if (c.is_text()) {
      // Fixed-length UTF-8 strings, as long as the longest cell.
      std::size_t width = 1;
      for (const auto& s : c.text) width = std::max(width, s.size());
      Handle type(H5Tcopy(H5T_C_S1), H5Tclose, "string type");
      check(H5Tset_size(type.get(), width), "set string size");
      check(H5Tset_cset(type.get(), H5T_CSET_UTF8), "set string charset");
      std::vector<char> buf(width * c.text.size(), '\0');
      for (std::size_t i = 0; i < c.text.size(); ++i) std::copy(c.text[i].begin(), c.text[i].end(), buf.begin() + i * width);
      Handle ds(H5Dcreate2(group.get(), c.name.c_str(), type.get(), space.get(), H5P_DEFAULT, dcpl.get(), H5P_DEFAULT),
                H5Dclose, c.name.c_str());
      check(H5Dwrite(ds.get(), type.get(), H5S_ALL, H5S_ALL, H5P_DEFAULT, buf.data()), "write dataset");
      string_attribute(ds.get(), "description", c.description);
      continue;
    }
    const hid_t type = c.integer ? H5T_STD_I64LE : H5T_IEEE_F64LE;
    Handle ds(H5Dcreate2(group.get(), c.name.c_str(), type, space.get(), H5P_DEFAULT, dcpl.get(), H5P_DEFAULT),
              H5Dclose, c.name.c_str());
    if (c.integer) {
      std::vector<std::int64_t> v;
      for (double x : c.values) v.push_back(std::llround(x));
      check(H5Dwrite(ds.get(), H5T_NATIVE_INT64, H5S_ALL, H5S_ALL, H5P_DEFAULT, v.data()), "write dataset");
    } else {
      check(H5Dwrite(ds.get(), H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, c.values.data()),
            "write dataset");
    }
    string_attribute(ds.get(), "units", c.unit);
    string_attribute(ds.get(), "description", c.description);
  }
  group.close("/summary");
  check(H5Fflush(f.get(), H5F_SCOPE_GLOBAL), "flush the in-memory file");
  const ssize_t size = H5Fget_file_image(f.get(), nullptr, 0);
  if (size < 0) throw std::runtime_error("HDF5: cannot size the file image");
  std::string image(static_cast<std::size_t>(size), '\0');
  if (H5Fget_file_image(f.get(), image.data(), image.size()) != size) throw std::runtime_error("HDF5: cannot copy the file image");
  f.close("the in-memory file");
  return image;
}

}  // namespace sp::output
