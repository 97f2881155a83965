// One parallel HDF5 file per run, written collectively through MPI-IO.
//
// The file is created under a temporary name next to the requested path and
// renamed by commit() only when every rank has written successfully; if the
// run fails, abandon() (or the destructor) removes it, so a failed run never
// leaves a file that looks complete.
//
// Datasets are written by rows: each rank passes the global row ids it owns
// and their values; rows are laid out in global id order, so a file does not
// depend on how many ranks wrote it.  Every call is collective: all ranks of
// the communicator must make the same calls in the same order.
#pragma once

#include <hdf5.h>
#include <mpi.h>

#include <algorithm>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace fabricsim::stats {

class H5Writer {
 public:
  /// Collective.  Creates the temporary file; throws util::UserError naming
  /// the path if it cannot be created.
  H5Writer(const std::string& final_path, MPI_Comm comm);
  /// Collective, creates nothing: throws the constructor's util::UserError
  /// if `final_path`'s directory is not writable (a run checks before it
  /// simulates, and creates the temporary file only to write).  Reports on
  /// stderr unfinished temporaries of `final_path` left by runs whose
  /// process is gone (killed by SIGKILL).
  static void check_writable(const std::string& final_path, MPI_Comm comm);
  ~H5Writer();
  H5Writer(const H5Writer&) = delete;
  H5Writer& operator=(const H5Writer&) = delete;

  const std::string& path() const { return final_path_; }
  const std::string& temp_path() const { return temp_path_; }

  /// Creates a group (and its parents); a no-op if it exists.
  void group(const std::string& path);

  // Attributes on a group (created if needed).  Every rank passes the same value.
  void attr(const std::string& group, const std::string& name, const std::string& value);
  void attr(const std::string& group, const std::string& name, std::int64_t value);
  void attr(const std::string& group, const std::string& name, std::uint64_t value);
  void attr(const std::string& group, const std::string& name, double value);
  void attr(const std::string& group, const std::string& name, const std::vector<double>& values);
  void attr(const std::string& group, const std::string& name, const std::vector<std::uint64_t>& values);
  void attr_on_dataset(const std::string& dataset, const std::string& name, double value);
  void attr_on_dataset(const std::string& dataset, const std::string& name, const std::string& value);

  /// Rows given as runs of consecutive numbers, in increasing order, not
  /// a number per row: a streamed trace's /trace_nodes at several
  /// processes, a run per rank read (the benchmark's 512 runs at two
  /// processes, where a list of its 546,816 rows was 4.4 MB).
  class RowRuns {
   public:
    void add(std::uint64_t first, std::uint64_t count) {
      if (count == 0) return;
      at_.push_back(total_);
      first_.push_back(first);
      total_ += count;
    }
    std::uint64_t size() const { return total_; }
    /// The i-th row's number (i < size()).
    std::uint64_t operator[](std::uint64_t i) const {
      const auto k = static_cast<std::size_t>(std::upper_bound(at_.begin(), at_.end(), i) - at_.begin()) - 1;
      return first_[k] + (i - at_[k]);
    }

   private:
    std::vector<std::uint64_t> at_, first_;  // per run: its rows before it, its first row
    std::uint64_t total_ = 0;
  };

  /// The rows a process writes: a list of row numbers, runs of them, or
  /// one run.
  class Rows {
   public:
    Rows(const std::vector<std::uint64_t>& list) : list_(&list), count_(list.size()) {}  // NOLINT: implicit
    Rows(const RowRuns& runs) : runs_(&runs), count_(runs.size()) {}                   // NOLINT: implicit
    static Rows run(std::uint64_t first, std::uint64_t count) { return Rows(first, count); }
    std::size_t size() const { return static_cast<std::size_t>(count_); }
    std::uint64_t operator[](std::size_t i) const {
      return list_ != nullptr ? (*list_)[i] : runs_ != nullptr ? (*runs_)[i] : first_ + i;
    }

   private:
    Rows(std::uint64_t first, std::uint64_t count) : first_(first), count_(count) {}
    const std::vector<std::uint64_t>* list_ = nullptr;
    const RowRuns* runs_ = nullptr;
    std::uint64_t first_ = 0, count_ = 0;
  };

  /// 1-D dataset of `total_rows`; this rank writes rows `rows[i]` = `values[i]`.
  template <class T>
  void write_rows(const std::string& dataset, std::uint64_t total_rows, const std::vector<std::uint64_t>& rows,
                  const std::vector<T>& values);
  /// The same with row i's value made by value(i) as it is written, in
  /// increasing i (rows kept elsewhere: a streamed trace's, on disk).
  template <class T>
  void write_rows_made(const std::string& dataset, std::uint64_t total_rows, Rows rows,
                       const std::function<T(std::size_t)>& value);
  /// Fixed-length string column (width = longest string over all ranks).
  void write_string_rows(const std::string& dataset, std::uint64_t total_rows, const std::vector<std::uint64_t>& rows,
                         const std::vector<std::string>& values);
  /// The same from a blob of distinct strings: row rows[i] is the
  /// which[i]-th, blob[ends[k - 1], ends[k]) for k = which[i] (from 0 for
  /// k = 0), so a million names need no string each, and a repeated one is
  /// stored once.
  void write_string_rows(const std::string& dataset, std::uint64_t total_rows, const std::vector<std::uint64_t>& rows,
                         const std::string& blob, const std::vector<std::uint64_t>& ends,
                         const std::vector<std::uint32_t>& which);
  /// The same, row i's string made by value(i) (twice: once for the width).
  void write_string_rows_made(const std::string& dataset, std::uint64_t total_rows, Rows rows,
                              const std::function<std::string_view(std::size_t)>& value);
  /// 2-D dataset [total_rows x columns], chunked and deflate-compressed; this
  /// rank writes whole rows (`values` holds rows.size() x columns, row-major).
  void write_matrix_rows(const std::string& dataset, std::uint64_t total_rows, std::uint64_t columns,
                         const std::vector<std::uint64_t>& rows, const std::vector<std::uint64_t>& values);
  void write_matrix_rows(const std::string& dataset, std::uint64_t total_rows, std::uint64_t columns,
                         const std::vector<std::uint64_t>& rows, const std::vector<double>& values);

  /// Collective: closes the file and renames it to the final path.
  void commit();
  /// Closes and removes the temporary file (safe to call on any path).
  void abandon();
  /// True after a close failed (a full disk): HDF5 1.10 then crashes in its
  /// own clean-up inside MPI_Finalize, so the program must exit without it.
  static bool library_unusable();

 private:
  hid_t open_group(const std::string& path);
  /// Collective: every rank says whether its part of an operation failed
  /// (`error` null: it did not); if any did, every rank throws the same
  /// util::SharedError (the first failing rank's message), so that no rank
  /// goes on to a collective call the others have left.
  void agree(const std::string* error);
  /// Runs `body` and agree()s on whether it threw.
  void guarded(const std::function<void()>& body);
  /// Collective: allocates the file's disk blocks for the datasets created
  /// so far plus room for metadata (rank 0, fallocate), so that a full disk
  /// fails here, before HDF5 writes; agree()s on the outcome.
  void reserve_space();
  /// Row i's bytes are data's i-th row, or, with `fill`, what fill(i, out)
  /// writes to out (the rows are then made as they are sent or written,
  /// never all at once: a million fixed-width names).
  using RowFill = std::function<void(std::size_t, char*)>;
  void write_rows_raw(const std::string& dataset, hid_t mem_type, hid_t file_type, std::uint64_t total_rows,
                      Rows rows, const void* data, std::uint64_t columns,
                      bool compress, const RowFill* fill = nullptr);

  MPI_Comm comm_;
  int rank_ = 0;
  std::string final_path_;
  std::string temp_path_;
  hid_t file_ = -1;
  bool failed_ = false;  ///< an agreed failure: closing is still collective
  std::uint64_t reserved_ = 0;       ///< bytes reserve_space() has allocated
  std::uint64_t planned_bytes_ = 0;  ///< raw bytes of the datasets created so far
  std::uint64_t objects_ = 0;        ///< datasets created so far
};

// Explicit instantiations live in h5_writer.cpp.
extern template void H5Writer::write_rows<std::uint8_t>(const std::string&, std::uint64_t,
                                                        const std::vector<std::uint64_t>&,
                                                        const std::vector<std::uint8_t>&);
extern template void H5Writer::write_rows<std::uint16_t>(const std::string&, std::uint64_t,
                                                         const std::vector<std::uint64_t>&,
                                                         const std::vector<std::uint16_t>&);
extern template void H5Writer::write_rows<std::int32_t>(const std::string&, std::uint64_t,
                                                        const std::vector<std::uint64_t>&,
                                                        const std::vector<std::int32_t>&);
extern template void H5Writer::write_rows<std::uint32_t>(const std::string&, std::uint64_t,
                                                         const std::vector<std::uint64_t>&,
                                                         const std::vector<std::uint32_t>&);
extern template void H5Writer::write_rows<std::uint64_t>(const std::string&, std::uint64_t,
                                                         const std::vector<std::uint64_t>&,
                                                         const std::vector<std::uint64_t>&);
extern template void H5Writer::write_rows<double>(const std::string&, std::uint64_t,
                                                  const std::vector<std::uint64_t>&, const std::vector<double>&);

}  // namespace fabricsim::stats
