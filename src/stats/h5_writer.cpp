#include "fabricsim/stats/h5_writer.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <sys/statvfs.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>

#include <fmt/format.h>

#include "fabricsim/util/assert.hpp"
#include "fabricsim/util/error.hpp"
#include "fabricsim/util/path.hpp"
#include "fabricsim/util/signals.hpp"

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

// A close failed: HDF5 1.10 would crash in its clean-up at MPI_Finalize.
bool hdf5_unusable = false;

[[noreturn]] void fail(const std::string& what) { throw util::UserError(what); }

// " (no space left on the device)" when the output's file system has less
// than a megabyte left: the likely cause of a failed write, which HDF5's
// (silenced) error stack would not name in one line.
std::string space_note(const std::string& file) {
  const std::string dir = util::split_file_path(file).first;
  struct statvfs st {};
  if (::statvfs(dir.c_str(), &st) != 0) return {};
  const auto free_bytes = static_cast<unsigned long long>(st.f_bavail) * st.f_frsize;
  return free_bytes < (1ULL << 20) ? " (no space left on the device)" : "";
}

void check(herr_t rc, const std::string& what) {
  if (rc < 0) fail(what);
}

// An HDF5 object path ("/links/stats") as {group, name}; a name without a
// group is in the root group "/".  (File paths: util::split_file_path.)
std::pair<std::string, std::string> split_object_path(const std::string& path) {
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

namespace {

// Temporaries of earlier runs writing the same file whose process is gone
// (killed by SIGKILL, or by a machine failure): reported, not removed (a
// run on another machine sharing the directory may still be writing).
void report_stale_temporaries(const std::string& final_path) {
  const auto [dir, base] = util::split_file_path(final_path);
  DIR* d = ::opendir(dir.c_str());
  if (d == nullptr) return;
  const std::string prefix = "." + base + ".tmp-";
  while (const dirent* e = ::readdir(d)) {
    const std::string name = e->d_name;
    if (name.rfind(prefix, 0) != 0) continue;
    char* end = nullptr;
    const long pid = std::strtol(name.c_str() + prefix.size(), &end, 10);
    if (pid <= 0 || end == nullptr || *end != '\0') continue;
    if (::kill(static_cast<pid_t>(pid), 0) == 0 || errno != ESRCH) continue;  // still running here
    std::fprintf(stderr,
                 "warning: %s: the unfinished output of an earlier run (process %ld, not running on this "
                 "machine; killed?); remove it\n",
                 util::beside(final_path, name).c_str(), pid);
  }
  ::closedir(d);
}

}  // namespace

void H5Writer::check_writable(const std::string& final_path, MPI_Comm comm) {
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  auto [dir, base] = util::split_file_path(final_path);
  int ok = 1;
  if (rank == 0) {
    ok = !base.empty() && ::access(dir.c_str(), W_OK | X_OK) == 0 ? 1 : 0;
    if (ok) report_stale_temporaries(final_path);
  }
  MPI_Bcast(&ok, 1, MPI_INT, 0, comm);
  if (!ok)
    fail(fmt::format("{}: cannot create output file (is the directory '{}' there and writable?)", final_path, dir));
}

H5Writer::H5Writer(const std::string& final_path, MPI_Comm comm) : comm_(comm), final_path_(final_path) {
  MPI_Comm_rank(comm_, &rank_);
  // Quiet HDF5's own error stack printing: failures become one-line errors.
  H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);
  long pid = rank_ == 0 ? static_cast<long>(::getpid()) : 0;
  MPI_Bcast(&pid, 1, MPI_LONG, 0, comm_);
  auto [dir, base] = util::split_file_path(final_path_);
  temp_path_ = util::beside(final_path_, "." + base + fmt::format(".tmp-{}", pid));

  Handle fapl(H5Pcreate(H5P_FILE_ACCESS), H5Pclose);
  MPI_Info info = MPI_INFO_NULL;
  H5Pset_fapl_mpio(fapl.get(), comm_, info);
  H5Pset_coll_metadata_write(fapl.get(), true);
  // The 1.8 file format: attributes larger than an object header (64 KiB)
  // go to dense storage, so /meta keeps the configuration of a run of
  // thousands of [[jobs]] tables.  (Read by any HDF5 since 1.8, 2008.)
  H5Pset_libver_bounds(fapl.get(), H5F_LIBVER_V18, H5F_LIBVER_V18);
  util::set_interrupt_cleanup(temp_path_);  // (before it exists: a signal in between finds nothing to remove)
  file_ = H5Fcreate(temp_path_.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, fapl.get());
  int ok = file_ >= 0 ? 1 : 0;
  int all_ok = 0;
  MPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_MIN, comm_);
  if (!all_ok) {
    if (file_ >= 0) H5Fclose(file_);
    file_ = -1;
    if (rank_ == 0) std::remove(temp_path_.c_str());
    util::clear_interrupt_cleanup();
    fail(fmt::format("{}: cannot create output file (is the directory '{}' there and writable?)", final_path_, dir));
  }
}

H5Writer::~H5Writer() {
  if (file_ < 0) return;
  int size = 1;
  MPI_Comm_size(comm_, &size);
  if (failed_ || size == 1 || std::uncaught_exceptions() == 0) {
    abandon();
    return;
  }
  // This rank's own failure, not agreed: the others may be inside a
  // collective call, so closing (collective) could wait for ever, and the
  // caller aborts the MPI job.  Only remove the temporary file.
  std::remove(temp_path_.c_str());
  util::clear_interrupt_cleanup();
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

void H5Writer::group(const std::string& path) {
  guarded([&] { H5Gclose(open_group(path)); });
}

void H5Writer::reserve_space() {
  // Rank 0 allocates the file's blocks up to its end of allocation (every
  // dataset created so far, at its address) and a megabyte for the
  // metadata still to come, so that HDF5's writes land in space the file
  // already owns: a full disk (or quota) shows here, before any data is
  // written, and not as a failed write HDF5 cannot recover from.  File
  // systems without fallocate() are left alone.
  std::string error;
  // HDF5 places objects one after another: the file ends near the raw
  // bytes of its datasets (compressed ones counted whole) plus metadata,
  // a few KiB per object.
  const std::uint64_t want = planned_bytes_ + (std::uint64_t{1} << 20) + 8192 * objects_;
  if (rank_ == 0 && want > reserved_) {
    const int fd = ::open(temp_path_.c_str(), O_WRONLY);
    if (fd >= 0) {
      if (::fallocate(fd, 0, 0, static_cast<off_t>(want)) == 0) {
        reserved_ = want;
      } else if (errno == ENOSPC || errno == EDQUOT || errno == EFBIG) {
        error = fmt::format("{}: cannot reserve {:.1f} MiB on disk for the output, its tables uncompressed{}", final_path_,
                            static_cast<double>(want) / (1 << 20),
                            errno == ENOSPC   ? " (no space left on the device)"
                            : errno == EDQUOT ? " (disk quota exceeded)"
                                              : " (file too large)");
      }
      ::close(fd);
    }
  }
  agree(error.empty() ? nullptr : &error);
}

void H5Writer::agree(const std::string* error) {
  const int mine = error != nullptr ? rank_ : INT_MAX;
  int first = INT_MAX;
  MPI_Allreduce(&mine, &first, 1, MPI_INT, MPI_MIN, comm_);
  if (first == INT_MAX) return;
  std::string message = rank_ == first ? *error : std::string();
  long length = static_cast<long>(message.size());
  MPI_Bcast(&length, 1, MPI_LONG, first, comm_);
  message.resize(static_cast<std::size_t>(length));
  MPI_Bcast(message.data(), static_cast<int>(length), MPI_CHAR, first, comm_);
  failed_ = true;
  throw util::SharedError(message);
}

void H5Writer::guarded(const std::function<void()>& body) {
  std::string error;
  bool bad = false;
  try {
    body();
  } catch (const std::exception& e) {
    error = e.what();
    bad = true;
  }
  agree(bad ? &error : nullptr);
}

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
  guarded([&] {
    Handle g(open_group(group), H5Gclose);
    Handle type(H5Tcopy(H5T_C_S1), H5Tclose);
    H5Tset_size(type.get(), std::max<std::size_t>(value.size(), 1));
    H5Tset_strpad(type.get(), H5T_STR_NULLPAD);
    H5Tset_cset(type.get(), H5T_CSET_UTF8);
    Handle space(H5Screate(H5S_SCALAR), H5Sclose);
    std::string v = value.empty() ? std::string(1, '\0') : value;
    write_attr(g.get(), name, type.get(), space.get(), v.data(), final_path_);
  });
}

void H5Writer::attr(const std::string& group, const std::string& name, std::int64_t value) {
  guarded([&] {
    Handle g(open_group(group), H5Gclose);
    Handle space(H5Screate(H5S_SCALAR), H5Sclose);
    write_attr(g.get(), name, H5T_NATIVE_INT64, space.get(), &value, final_path_);
  });
}
void H5Writer::attr(const std::string& group, const std::string& name, std::uint64_t value) {
  guarded([&] {
    Handle g(open_group(group), H5Gclose);
    Handle space(H5Screate(H5S_SCALAR), H5Sclose);
    write_attr(g.get(), name, H5T_NATIVE_UINT64, space.get(), &value, final_path_);
  });
}
void H5Writer::attr(const std::string& group, const std::string& name, double value) {
  guarded([&] {
    Handle g(open_group(group), H5Gclose);
    Handle space(H5Screate(H5S_SCALAR), H5Sclose);
    write_attr(g.get(), name, H5T_NATIVE_DOUBLE, space.get(), &value, final_path_);
  });
}
void H5Writer::attr(const std::string& group, const std::string& name, const std::vector<double>& values) {
  guarded([&] {
    Handle g(open_group(group), H5Gclose);
    hsize_t n = values.size();
    Handle space(H5Screate_simple(1, &n, nullptr), H5Sclose);
    write_attr(g.get(), name, H5T_NATIVE_DOUBLE, space.get(), values.data(), final_path_);
  });
}
void H5Writer::attr(const std::string& group, const std::string& name, const std::vector<std::uint64_t>& values) {
  guarded([&] {
    Handle g(open_group(group), H5Gclose);
    hsize_t n = values.size();
    Handle space(H5Screate_simple(1, &n, nullptr), H5Sclose);
    write_attr(g.get(), name, H5T_NATIVE_UINT64, space.get(), values.data(), final_path_);
  });
}

void H5Writer::attr_on_dataset(const std::string& dataset, const std::string& name, double value) {
  guarded([&] {
    Handle d(H5Dopen2(file_, dataset.c_str(), H5P_DEFAULT), H5Dclose);
    if (d.get() < 0) fail(fmt::format("{}: no dataset {}", final_path_, dataset));
    Handle space(H5Screate(H5S_SCALAR), H5Sclose);
    write_attr(d.get(), name, H5T_NATIVE_DOUBLE, space.get(), &value, final_path_);
  });
}

void H5Writer::attr_on_dataset(const std::string& dataset, const std::string& name, const std::string& value) {
  guarded([&] {
    Handle d(H5Dopen2(file_, dataset.c_str(), H5P_DEFAULT), H5Dclose);
    if (d.get() < 0) fail(fmt::format("{}: no dataset {}", final_path_, dataset));
    Handle type(H5Tcopy(H5T_C_S1), H5Tclose);
    H5Tset_size(type.get(), std::max<std::size_t>(value.size(), 1));
    Handle space(H5Screate(H5S_SCALAR), H5Sclose);
    write_attr(d.get(), name, type.get(), space.get(), value.data(), final_path_);
  });
}

void H5Writer::write_rows_raw(const std::string& dataset, hid_t mem_type, hid_t file_type, std::uint64_t total_rows,
                              Rows rows, const void* data,
                              std::uint64_t columns, bool compress, const RowFill* fill) {
  const auto [gpath, name] = split_object_path(dataset);
  hid_t group_id = -1;
  const std::string& group_path = gpath;  // (a structured binding cannot be captured in C++17)
  guarded([&] { group_id = open_group(group_path); });
  Handle g(group_id, H5Gclose);
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
  {
    const bool failed = dset.get() < 0;
    const std::string e = fmt::format("{}: cannot create dataset {}", final_path_, dataset);
    agree(failed ? &e : nullptr);
  }
  planned_bytes_ += total_rows * H5Tget_size(mem_type) * std::max<std::uint64_t>(columns, 1);
  ++objects_;
  reserve_space();
  if (total_rows == 0) return;  // an empty table: nothing to write

  // Two-phase write.  The rows a rank owns are scattered over the dataset
  // (a link's row follows its id, not its rank), and building a selection
  // of many small runs is quadratic in HDF5; so rows first move (MPI_Alltoallv)
  // to the rank that writes the contiguous block they fall in, and each rank
  // then writes a single hyperslab (per part of its block, below).  The rows
  // move in rounds of at most round_bytes arriving at a rank, so that a
  // table of millions of rows (a trace's /trace_nodes, held by the root)
  // needs no copy of its whole self (and MPI's int counts cannot overflow).  One rank
  // that holds every row in order writes straight from `data`, or, rows
  // made by `fill`, in pieces of round_bytes.
  std::size_t round_bytes = std::size_t{32} << 20;
  constexpr std::size_t kPieceBytes = std::size_t{1} << 20;
  // For the test suite: tiny rounds, so that small runs move their rows
  // in many rounds (tests/app/mpi_identical.sh).
  if (const char* round = std::getenv("FABRICSIM_TEST_WRITE_ROUND_BYTES"); round && *round)
    round_bytes = std::max<std::size_t>(1, std::strtoull(round, nullptr, 10));
  int nranks = 1;
  MPI_Comm_size(comm_, &nranks);
  const std::size_t row_bytes = H5Tget_size(mem_type) * std::max<std::uint64_t>(columns, 1);
  const auto p = static_cast<std::uint64_t>(nranks);
  auto block_start = [&](std::uint64_t r) { return (r * total_rows + p - 1) / p; };  // first row of rank r
  const std::uint64_t first = block_start(static_cast<std::uint64_t>(rank_));
  const std::uint64_t last = block_start(static_cast<std::uint64_t>(rank_) + 1);
  const std::size_t n = static_cast<std::size_t>(last - first);
  const void* out_data = data;
  std::vector<char> block;
  bool in_place = nranks == 1 && rows.size() == n;
  for (std::size_t i = 0; in_place && i < rows.size(); ++i) in_place = rows[i] == i;
  Handle dxpl(H5Pcreate(H5P_DATASET_XFER), H5Pclose);
  H5Pset_dxpl_mpio(dxpl.get(), H5FD_MPIO_COLLECTIVE);
  // Writes rows [from, from + count) of the dataset from `buf` (collective).
  const auto write_piece = [&](std::uint64_t from, std::uint64_t count, const void* buf) {
    H5Sselect_none(fspace.get());
    if (count > 0) {
      hsize_t start[2] = {from, 0};
      hsize_t cnt[2] = {count, columns};
      check(H5Sselect_hyperslab(fspace.get(), H5S_SELECT_SET, start, nullptr, cnt, nullptr),
            fmt::format("{}: bad row selection in {}", final_path_, dataset));
    }
    hsize_t mdims[2] = {count, columns};
    Handle mspace(H5Screate_simple(rank, mdims, nullptr), H5Sclose);
    if (count == 0) H5Sselect_none(mspace.get());
    const bool failed = H5Dwrite(dset.get(), mem_type, mspace.get(), fspace.get(), dxpl.get(), buf) < 0;
    const std::string e = fmt::format("{}: cannot write dataset {}{}", final_path_, dataset,
                                      failed ? space_note(temp_path_) : std::string());
    agree(failed ? &e : nullptr);
  };
  if (in_place && fill != nullptr) {
    // One rank, its rows made as they are written, a piece at a time.
    // (Pieces of 1 MiB: as fast to write as pieces of 4 MiB, the streamed
    // trace benchmark's output measured side by side, and what they hold
    // is on top of the run's peak.)
    const std::size_t per_piece = std::max<std::size_t>(1, std::min(round_bytes, kPieceBytes) / row_bytes);
    for (std::size_t from = 0; from < n; from += per_piece) {
      const std::size_t to = std::min(n, from + per_piece);
      block.resize((to - from) * row_bytes);
      for (std::size_t i = from; i < to; ++i) (*fill)(i, block.data() + (i - from) * row_bytes);
      write_piece(from, to - from, block.data());
    }
    return;
  }
  if (in_place) {
    write_piece(first, n, out_data);
    return;
  }
  const std::size_t entry = sizeof(std::uint64_t) + row_bytes;
  // (Rows made as they are written come from a table kept out of memory,
  // a streamed trace's: moved in pieces as small as one rank writes them.)
  const std::size_t round_now = fill != nullptr ? std::min(round_bytes, kPieceBytes) : round_bytes;
  const std::size_t per_round = std::max<std::size_t>(1, round_now / entry / static_cast<std::size_t>(nranks));
  // The rank whose block [block_start(r), block_start(r+1)) holds a row.
  const auto owner = [&](std::uint64_t row) {
    auto r = static_cast<int>(row * p / std::max<std::uint64_t>(total_rows, 1));
    while (r + 1 < nranks && block_start(static_cast<std::uint64_t>(r) + 1) <= row) ++r;
    while (r > 0 && block_start(static_cast<std::uint64_t>(r)) > row) --r;
    return r;
  };
  // A rank's block is itself made and written a part at a time, of at most
  // round_now bytes, so that no rank holds its whole block (a million
  // names of 31 bytes at two ranks: 17 MB each).  Part k of every block is
  // written by one collective write; the rows move to it in rounds as
  // above.  A compressed dataset is written in one part: its chunks are
  // written once, whole.
  const std::uint64_t widest = (total_rows + p - 1) / p;  // the largest block
  const std::uint64_t part_rows =
      compress ? widest : std::max<std::uint64_t>(1, static_cast<std::uint64_t>(round_now / row_bytes));
  const std::uint64_t parts = (widest + part_rows - 1) / part_rows;  // (the same at every rank)
  const auto part_of = [&](std::uint64_t row, int r) { return (row - block_start(static_cast<std::uint64_t>(r))) / part_rows; };
  std::vector<int> send_counts(static_cast<std::size_t>(nranks)), recv_counts(static_cast<std::size_t>(nranks));
  std::vector<int> send_displs(static_cast<std::size_t>(nranks)), recv_displs(static_cast<std::size_t>(nranks));
  std::vector<int> dest, pos;
  std::vector<std::size_t> which;
  std::vector<char> send_buf, recv_buf;
  const char* src = static_cast<const char*>(data);
  for (std::uint64_t k = 0; k < parts; ++k) {
    const std::uint64_t part_first = std::min(last, first + k * part_rows);
    const std::uint64_t part_last = std::min(last, part_first + part_rows);
    block.assign(static_cast<std::size_t>(part_last - part_first) * row_bytes, 0);
    std::size_t mine = 0;  // this rank's rows in part k of their block
    for (std::size_t i = 0; i < rows.size(); ++i)
      if (part_of(rows[i], owner(rows[i])) == k) ++mine;
    std::uint64_t rounds = (mine + per_round - 1) / per_round;
    MPI_Allreduce(MPI_IN_PLACE, &rounds, 1, MPI_UINT64_T, MPI_MAX, comm_);
    std::size_t next = 0;  // where this rank's scan of its rows goes on
    std::size_t got = 0;
    for (std::uint64_t round = 0; round < rounds; ++round) {
      std::fill(send_counts.begin(), send_counts.end(), 0);
      which.clear();
      dest.clear();
      for (; next < rows.size() && which.size() < per_round; ++next) {
        const int r = owner(rows[next]);
        if (part_of(rows[next], r) != k) continue;
        which.push_back(next);
        dest.push_back(r);
        send_counts[static_cast<std::size_t>(r)] += static_cast<int>(entry);
      }
      for (std::size_t r = 1; r < send_displs.size(); ++r) send_displs[r] = send_displs[r - 1] + send_counts[r - 1];
      send_buf.resize(which.size() * entry);
      pos = send_displs;
      for (std::size_t j = 0; j < which.size(); ++j) {
        const std::size_t i = which[j];
        char* out = send_buf.data() + pos[static_cast<std::size_t>(dest[j])];
        const std::uint64_t row = rows[i];
        std::memcpy(out, &row, sizeof(std::uint64_t));
        if (fill != nullptr)
          (*fill)(i, out + sizeof(std::uint64_t));
        else
          std::memcpy(out + sizeof(std::uint64_t), src + i * row_bytes, row_bytes);
        pos[static_cast<std::size_t>(dest[j])] += static_cast<int>(entry);
      }
      MPI_Alltoall(send_counts.data(), 1, MPI_INT, recv_counts.data(), 1, MPI_INT, comm_);
      int recv_total = 0;
      for (std::size_t r = 0; r < recv_counts.size(); ++r) {
        recv_displs[r] = recv_total;
        recv_total += recv_counts[r];
      }
      recv_buf.resize(static_cast<std::size_t>(recv_total));
      MPI_Alltoallv(send_buf.data(), send_counts.data(), send_displs.data(), MPI_BYTE, recv_buf.data(),
                    recv_counts.data(), recv_displs.data(), MPI_BYTE, comm_);
      for (std::size_t off = 0; off < recv_buf.size(); off += entry, ++got) {
        std::uint64_t row = 0;
        std::memcpy(&row, recv_buf.data() + off, sizeof(std::uint64_t));
        if (row < part_first || row >= part_last)
          fail(fmt::format("{}: internal error placing row {} of {}", final_path_, row, dataset));
        std::memcpy(block.data() + (row - part_first) * row_bytes, recv_buf.data() + off + sizeof(std::uint64_t),
                    row_bytes);
      }
    }
    if (got != part_last - part_first)
      fail(fmt::format("{}: {} of {} rows of {} were written by no rank", final_path_, part_last - part_first - got,
                       part_last - part_first, dataset));
    write_piece(part_first, part_last - part_first, block.data());
  }
}

template <class T>
void H5Writer::write_rows(const std::string& dataset, std::uint64_t total_rows, const std::vector<std::uint64_t>& rows,
                          const std::vector<T>& values) {
  write_rows_raw(dataset, H5Type<T>::id(), H5Type<T>::id(), total_rows, rows, values.data(), 0, false);
}

template <class T>
void H5Writer::write_rows_made(const std::string& dataset, std::uint64_t total_rows, Rows rows,
                               const std::function<T(std::size_t)>& value) {
  const RowFill fill = [&](std::size_t i, char* out) {
    const T v = value(i);
    std::memcpy(out, &v, sizeof(T));
  };
  write_rows_raw(dataset, H5Type<T>::id(), H5Type<T>::id(), total_rows, rows, nullptr, 0, false, &fill);
}
template void H5Writer::write_rows_made<std::uint8_t>(const std::string&, std::uint64_t, Rows,
                                                      const std::function<std::uint8_t(std::size_t)>&);
template void H5Writer::write_rows_made<std::uint32_t>(const std::string&, std::uint64_t, Rows,
                                                       const std::function<std::uint32_t(std::size_t)>&);
template void H5Writer::write_rows_made<std::int64_t>(const std::string&, std::uint64_t, Rows,
                                                      const std::function<std::int64_t(std::size_t)>&);
template void H5Writer::write_rows_made<std::uint64_t>(const std::string&, std::uint64_t, Rows,
                                                       const std::function<std::uint64_t(std::size_t)>&);
template void H5Writer::write_rows_made<double>(const std::string&, std::uint64_t, Rows,
                                                const std::function<double(std::size_t)>&);

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
template void H5Writer::write_rows<std::int64_t>(const std::string&, std::uint64_t, const std::vector<std::uint64_t>&,
                                                 const std::vector<std::int64_t>&);
template void H5Writer::write_rows<double>(const std::string&, std::uint64_t, const std::vector<std::uint64_t>&,
                                           const std::vector<double>&);

void H5Writer::write_string_rows(const std::string& dataset, std::uint64_t total_rows,
                                 const std::vector<std::uint64_t>& rows, const std::vector<std::string>& values) {
  FABRICSIM_ASSERT(values.size() == rows.size(), "a string per row");
  write_string_rows_made(dataset, total_rows, rows, [&](std::size_t i) { return std::string_view(values[i]); });
}

void H5Writer::write_string_rows(const std::string& dataset, std::uint64_t total_rows,
                                 const std::vector<std::uint64_t>& rows, const std::string& blob,
                                 const std::vector<std::uint64_t>& ends, const std::vector<std::uint32_t>& which) {
  FABRICSIM_ASSERT(which.size() == rows.size() && (ends.empty() || ends.back() <= blob.size()), "a string per row");
  write_string_rows_made(dataset, total_rows, rows, [&](std::size_t i) {
    const std::uint32_t k = which[i];
    FABRICSIM_ASSERT(k < ends.size(), "a row's string is one of the blob's");
    const std::uint64_t from = k == 0 ? 0 : ends[k - 1];
    return std::string_view(blob).substr(from, ends[k] - from);
  });
}

void H5Writer::write_string_rows_made(const std::string& dataset, std::uint64_t total_rows, Rows rows,
                                      const std::function<std::string_view(std::size_t)>& value) {
  std::uint64_t width = 1;
  for (std::size_t i = 0; i < rows.size(); ++i) width = std::max<std::uint64_t>(width, value(i).size());
  std::uint64_t all_width = 1;
  MPI_Allreduce(&width, &all_width, 1, MPI_UINT64_T, MPI_MAX, comm_);
  // Each row's fixed-width bytes made as it is sent or written: a million
  // names of 31 bytes are never all in one buffer.
  const RowFill fill = [&](std::size_t i, char* out) {
    const std::string_view v = value(i);
    std::memcpy(out, v.data(), v.size());
    std::memset(out + v.size(), 0, all_width - v.size());
  };
  Handle type(H5Tcopy(H5T_C_S1), H5Tclose);
  H5Tset_size(type.get(), all_width);
  H5Tset_strpad(type.get(), H5T_STR_NULLPAD);
  write_rows_raw(dataset, type.get(), type.get(), total_rows, rows, nullptr, 0, false, &fill);
}

void H5Writer::write_matrix_rows(const std::string& dataset, std::uint64_t total_rows, std::uint64_t columns,
                                 const std::vector<std::uint64_t>& rows, const std::vector<std::uint64_t>& values) {
  write_rows_raw(dataset, H5T_NATIVE_UINT64, H5T_NATIVE_UINT64, total_rows, rows, values.data(), columns, true);
}

void H5Writer::write_matrix_rows(const std::string& dataset, std::uint64_t total_rows, std::uint64_t columns,
                                 const std::vector<std::uint64_t>& rows, const std::vector<double>& values) {
  write_rows_raw(dataset, H5T_NATIVE_DOUBLE, H5T_IEEE_F64LE, total_rows, rows, values.data(), columns, true);
}

void H5Writer::commit() {
  if (file_ < 0) return;
  reserve_space();
  // Flush first, agreeing on failure (a full disk): a close that fails
  // leaves HDF5 1.10 holding the file, and it crashes on it inside
  // MPI_Finalize; after a failed flush, abandon() frees the space first.
  {
    const bool failed = H5Fflush(file_, H5F_SCOPE_GLOBAL) < 0;
    const std::string e =
        fmt::format("{}: writing the output file failed{}", final_path_, failed ? space_note(temp_path_) : std::string());
    agree(failed ? &e : nullptr);
  }
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
  util::clear_interrupt_cleanup();
  if (!all_ok) fail(fmt::format("{}: writing the output file failed", final_path_));
  if (!renamed) fail(fmt::format("{}: cannot rename the finished output file into place", final_path_));
}

void H5Writer::abandon() {
  if (file_ >= 0) {
    // After a failed write the close must not fail too: HDF5 1.10 then
    // leaves the file's identifier half torn down and crashes on it in its
    // own clean-up inside MPI_Finalize.  So first give the disk back (the
    // file is abandoned anyway) and let the close write what metadata it
    // still holds.
    if (rank_ == 0) (void)::truncate(temp_path_.c_str(), 0);
    MPI_Barrier(comm_);
    if (H5Fclose(file_) < 0) hdf5_unusable = true;
    file_ = -1;
  }
  if (rank_ == 0) std::remove(temp_path_.c_str());
  util::clear_interrupt_cleanup();
}

bool H5Writer::library_unusable() { return hdf5_unusable; }

}  // namespace fabricsim::stats
