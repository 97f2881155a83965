#include "fabricsim/stats/h5_writer.hpp"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>

#include <fmt/format.h>

#include "fabricsim/util/error.hpp"

namespace fabricsim::stats {
namespace {

template <class T>
struct H5Type;
template <>
struct H5Type<std::uint8_t> {
  static hid_t id() { return H5T_NATIVE_UINT8; }
};
template <>
struct H5Type<std::uint16_t> {
  static hid_t id() { return H5T_NATIVE_UINT16; }
};
template <>
struct H5Type<std::int32_t> {
  static hid_t id() { return H5T_NATIVE_INT32; }
};
template <>
struct H5Type<std::uint32_t> {
  static hid_t id() { return H5T_NATIVE_UINT32; }
};
template <>
struct H5Type<std::uint64_t> {
  static hid_t id() { return H5T_NATIVE_UINT64; }
};
template <>
struct H5Type<double> {
  static hid_t id() { return H5T_NATIVE_DOUBLE; }
};
template <>
struct H5Type<std::int64_t> {
  static hid_t id() { return H5T_NATIVE_INT64; }
};

[[noreturn]] void fail(const std::string& what) { throw util::UserError(what); }

void check(herr_t rc, const std::string& what) {
  if (rc < 0) fail(what);
}

std::pair<std::string, std::string> split_path(const std::string& path) {
  auto slash = path.find_last_of('/');
  if (slash == std::string::npos || slash == 0) return {"/", path.substr(slash == 0 ? 1 : 0)};
  return {path.substr(0, slash), path.substr(slash + 1)};
}

/// Owns an HDF5 identifier and closes it with the right function.
class Handle {
 public:
  Handle(hid_t id, herr_t (*closer)(hid_t)) : id_(id), closer_(closer) {}
  ~Handle() {
    if (id_ >= 0) closer_(id_);
  }
  Handle(const Handle&) = delete;
  Handle& operator=(const Handle&) = delete;
  hid_t get() const { return id_; }

 private:
  hid_t id_;
  herr_t (*closer_)(hid_t);
};

}  // namespace

H5Writer::H5Writer(const std::string& final_path, MPI_Comm comm) : comm_(comm), final_path_(final_path) {
  MPI_Comm_rank(comm_, &rank_);
  // Quiet HDF5's own error stack printing: failures become one-line errors.
  H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);
  long pid = rank_ == 0 ? static_cast<long>(::getpid()) : 0;
  MPI_Bcast(&pid, 1, MPI_LONG, 0, comm_);
  auto [dir, base] = split_path(final_path_);
  temp_path_ = (final_path_.find('/') == std::string::npos ? std::string() : dir + "/") + "." + base +
               fmt::format(".tmp-{}", pid);

  Handle fapl(H5Pcreate(H5P_FILE_ACCESS), H5Pclose);
  MPI_Info info = MPI_INFO_NULL;
  H5Pset_fapl_mpio(fapl.get(), comm_, info);
  H5Pset_coll_metadata_write(fapl.get(), true);
  file_ = H5Fcreate(temp_path_.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, fapl.get());
  int ok = file_ >= 0 ? 1 : 0;
  int all_ok = 0;
  MPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_MIN, comm_);
  if (!all_ok) {
    if (file_ >= 0) H5Fclose(file_);
    file_ = -1;
    if (rank_ == 0) std::remove(temp_path_.c_str());
    fail(fmt::format("{}: cannot create output file (is the directory '{}' there and writable?)", final_path_, dir));
  }
}

H5Writer::~H5Writer() {
  if (file_ >= 0) abandon();
}

hid_t H5Writer::open_group(const std::string& path) {
  if (path == "/") return H5Gopen2(file_, "/", H5P_DEFAULT);
  // Create each missing component.
  std::string cur;
  std::size_t pos = 1;
  while (true) {
    auto next = path.find('/', pos);
    cur = path.substr(0, next);
    htri_t exists = H5Lexists(file_, cur.c_str(), H5P_DEFAULT);
    if (exists <= 0) {
      hid_t g = H5Gcreate2(file_, cur.c_str(), H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
      if (g < 0) fail(fmt::format("{}: cannot create group {}", final_path_, cur));
      H5Gclose(g);
    }
    if (next == std::string::npos) break;
    pos = next + 1;
  }
  hid_t g = H5Gopen2(file_, path.c_str(), H5P_DEFAULT);
  if (g < 0) fail(fmt::format("{}: cannot open group {}", final_path_, path));
  return g;
}

void H5Writer::group(const std::string& path) { H5Gclose(open_group(path)); }

namespace {
void write_attr(hid_t obj, const std::string& name, hid_t type, hid_t space, const void* data,
                const std::string& file) {
  if (H5Aexists(obj, name.c_str()) > 0) H5Adelete(obj, name.c_str());
  Handle a(H5Acreate2(obj, name.c_str(), type, space, H5P_DEFAULT, H5P_DEFAULT), H5Aclose);
  if (a.get() < 0) fail(fmt::format("{}: cannot create attribute {}", file, name));
  check(H5Awrite(a.get(), type, data), fmt::format("{}: cannot write attribute {}", file, name));
}
}  // namespace

void H5Writer::attr(const std::string& group, const std::string& name, const std::string& value) {
  Handle g(open_group(group), H5Gclose);
  Handle type(H5Tcopy(H5T_C_S1), H5Tclose);
  H5Tset_size(type.get(), std::max<std::size_t>(value.size(), 1));
  H5Tset_strpad(type.get(), H5T_STR_NULLPAD);
  H5Tset_cset(type.get(), H5T_CSET_UTF8);
  Handle space(H5Screate(H5S_SCALAR), H5Sclose);
  std::string v = value.empty() ? std::string(1, '\0') : value;
  write_attr(g.get(), name, type.get(), space.get(), v.data(), final_path_);
}

void H5Writer::attr(const std::string& group, const std::string& name, std::int64_t value) {
  Handle g(open_group(group), H5Gclose);
  Handle space(H5Screate(H5S_SCALAR), H5Sclose);
  write_attr(g.get(), name, H5T_NATIVE_INT64, space.get(), &value, final_path_);
}
void H5Writer::attr(const std::string& group, const std::string& name, std::uint64_t value) {
  Handle g(open_group(group), H5Gclose);
  Handle space(H5Screate(H5S_SCALAR), H5Sclose);
  write_attr(g.get(), name, H5T_NATIVE_UINT64, space.get(), &value, final_path_);
}
void H5Writer::attr(const std::string& group, const std::string& name, double value) {
  Handle g(open_group(group), H5Gclose);
  Handle space(H5Screate(H5S_SCALAR), H5Sclose);
  write_attr(g.get(), name, H5T_NATIVE_DOUBLE, space.get(), &value, final_path_);
}
void H5Writer::attr(const std::string& group, const std::string& name, const std::vector<double>& values) {
  Handle g(open_group(group), H5Gclose);
  hsize_t n = values.size();
  Handle space(H5Screate_simple(1, &n, nullptr), H5Sclose);
  write_attr(g.get(), name, H5T_NATIVE_DOUBLE, space.get(), values.data(), final_path_);
}
void H5Writer::attr(const std::string& group, const std::string& name, const std::vector<std::uint64_t>& values) {
  Handle g(open_group(group), H5Gclose);
  hsize_t n = values.size();
  Handle space(H5Screate_simple(1, &n, nullptr), H5Sclose);
  write_attr(g.get(), name, H5T_NATIVE_UINT64, space.get(), values.data(), final_path_);
}

void H5Writer::attr_on_dataset(const std::string& dataset, const std::string& name, double value) {
  Handle d(H5Dopen2(file_, dataset.c_str(), H5P_DEFAULT), H5Dclose);
  if (d.get() < 0) fail(fmt::format("{}: no dataset {}", final_path_, dataset));
  Handle space(H5Screate(H5S_SCALAR), H5Sclose);
  write_attr(d.get(), name, H5T_NATIVE_DOUBLE, space.get(), &value, final_path_);
}

void H5Writer::attr_on_dataset(const std::string& dataset, const std::string& name, const std::string& value) {
  Handle d(H5Dopen2(file_, dataset.c_str(), H5P_DEFAULT), H5Dclose);
  if (d.get() < 0) fail(fmt::format("{}: no dataset {}", final_path_, dataset));
  Handle type(H5Tcopy(H5T_C_S1), H5Tclose);
  H5Tset_size(type.get(), std::max<std::size_t>(value.size(), 1));
  Handle space(H5Screate(H5S_SCALAR), H5Sclose);
  write_attr(d.get(), name, type.get(), space.get(), value.data(), final_path_);
}

void H5Writer::write_rows_raw(const std::string& dataset, hid_t mem_type, hid_t file_type, std::uint64_t total_rows,
                              const std::vector<std::uint64_t>& rows, const void* data,
                              std::uint64_t columns, bool compress) {
  auto [gpath, name] = split_path(dataset);
  Handle g(open_group(gpath), H5Gclose);
  const int rank = columns == 0 ? 1 : 2;
  hsize_t dims[2] = {total_rows, columns};
  Handle fspace(H5Screate_simple(rank, dims, nullptr), H5Sclose);
  Handle dcpl(H5Pcreate(H5P_DATASET_CREATE), H5Pclose);
  if (compress && total_rows > 0 && columns > 0) {
    hsize_t chunk[2] = {std::min<hsize_t>(total_rows, 256), std::min<hsize_t>(columns, 1024)};
    H5Pset_chunk(dcpl.get(), 2, chunk);
    H5Pset_deflate(dcpl.get(), 4);
    // Parallel HDF5 1.10 writes filtered datasets collectively; chunks are
    // allocated at creation so that every rank agrees on the layout.
    H5Pset_alloc_time(dcpl.get(), H5D_ALLOC_TIME_EARLY);
  }
  Handle dset(H5Dcreate2(g.get(), name.c_str(), file_type, fspace.get(), H5P_DEFAULT, dcpl.get(), H5P_DEFAULT),
              H5Dclose);
  if (dset.get() < 0) fail(fmt::format("{}: cannot create dataset {}", final_path_, dataset));

  // Select this rank's rows as a union of contiguous runs.
  H5Sselect_none(fspace.get());
  std::size_t i = 0;
  const std::size_t n = rows.size();
  while (i < n) {
    std::size_t j = i + 1;
    while (j < n && rows[j] == rows[j - 1] + 1) ++j;
    hsize_t start[2] = {rows[i], 0};
    hsize_t count[2] = {j - i, columns};
    check(H5Sselect_hyperslab(fspace.get(), H5S_SELECT_OR, start, nullptr, count, nullptr),
          fmt::format("{}: bad row selection in {}", final_path_, dataset));
    i = j;
  }
  hsize_t mdims[2] = {n, columns};
  Handle mspace(H5Screate_simple(rank, mdims, nullptr), H5Sclose);
  if (n == 0) H5Sselect_none(mspace.get());
  const hid_t ms = mspace.get();
  Handle dxpl(H5Pcreate(H5P_DATASET_XFER), H5Pclose);
  H5Pset_dxpl_mpio(dxpl.get(), H5FD_MPIO_COLLECTIVE);
  check(H5Dwrite(dset.get(), mem_type, ms, fspace.get(), dxpl.get(), data),
        fmt::format("{}: cannot write dataset {}", final_path_, dataset));
}

template <class T>
void H5Writer::write_rows(const std::string& dataset, std::uint64_t total_rows, const std::vector<std::uint64_t>& rows,
                          const std::vector<T>& values) {
  write_rows_raw(dataset, H5Type<T>::id(), H5Type<T>::id(), total_rows, rows, values.data(), 0, false);
}

template void H5Writer::write_rows<std::uint8_t>(const std::string&, std::uint64_t, const std::vector<std::uint64_t>&,
                                                 const std::vector<std::uint8_t>&);
template void H5Writer::write_rows<std::uint16_t>(const std::string&, std::uint64_t,
                                                  const std::vector<std::uint64_t>&,
                                                  const std::vector<std::uint16_t>&);
template void H5Writer::write_rows<std::int32_t>(const std::string&, std::uint64_t, const std::vector<std::uint64_t>&,
                                                 const std::vector<std::int32_t>&);
template void H5Writer::write_rows<std::uint32_t>(const std::string&, std::uint64_t,
                                                  const std::vector<std::uint64_t>&,
                                                  const std::vector<std::uint32_t>&);
template void H5Writer::write_rows<std::uint64_t>(const std::string&, std::uint64_t,
                                                  const std::vector<std::uint64_t>&,
                                                  const std::vector<std::uint64_t>&);
template void H5Writer::write_rows<double>(const std::string&, std::uint64_t, const std::vector<std::uint64_t>&,
                                           const std::vector<double>&);

void H5Writer::write_string_rows(const std::string& dataset, std::uint64_t total_rows,
                                 const std::vector<std::uint64_t>& rows, const std::vector<std::string>& values) {
  std::uint64_t width = 1;
  for (const auto& s : values) width = std::max<std::uint64_t>(width, s.size());
  std::uint64_t all_width = 1;
  MPI_Allreduce(&width, &all_width, 1, MPI_UINT64_T, MPI_MAX, comm_);
  std::vector<char> buf(values.size() * all_width, '\0');
  for (std::size_t i = 0; i < values.size(); ++i) std::memcpy(&buf[i * all_width], values[i].data(), values[i].size());
  Handle type(H5Tcopy(H5T_C_S1), H5Tclose);
  H5Tset_size(type.get(), all_width);
  H5Tset_strpad(type.get(), H5T_STR_NULLPAD);
  write_rows_raw(dataset, type.get(), type.get(), total_rows, rows, buf.data(), 0, false);
}

void H5Writer::write_matrix_rows(const std::string& dataset, std::uint64_t total_rows, std::uint64_t columns,
                                 const std::vector<std::uint64_t>& rows, const std::vector<std::uint64_t>& values) {
  write_rows_raw(dataset, H5T_NATIVE_UINT64, H5T_NATIVE_UINT64, total_rows, rows, values.data(), columns, true);
}

void H5Writer::commit() {
  if (file_ < 0) return;
  herr_t rc = H5Fclose(file_);
  file_ = -1;
  int ok = rc >= 0 ? 1 : 0;
  int all_ok = 0;
  MPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_MIN, comm_);
  int renamed = 1;
  std::string err;
  if (rank_ == 0) {
    if (!all_ok) {
      std::remove(temp_path_.c_str());
    } else if (std::rename(temp_path_.c_str(), final_path_.c_str()) != 0) {
      renamed = 0;
      err = std::strerror(errno);
      std::remove(temp_path_.c_str());
    }
  }
  MPI_Bcast(&renamed, 1, MPI_INT, 0, comm_);
  if (!all_ok) fail(fmt::format("{}: writing the output file failed", final_path_));
  if (!renamed) fail(fmt::format("{}: cannot rename the finished output file into place", final_path_));
}

void H5Writer::abandon() {
  if (file_ >= 0) {
    H5Fclose(file_);
    file_ = -1;
  }
  if (rank_ == 0) std::remove(temp_path_.c_str());
}

}  // namespace fabricsim::stats
