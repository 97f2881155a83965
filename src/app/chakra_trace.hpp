// Chakra execution traces (.et, one file per rank, as ASTRA-sim reads them)
// into the trace workload (workload/trace.hpp); the schema is
// src/app/chakra/et_def.proto, the semantics docs/model.md ("Chakra traces").
#pragma once

#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "fabricsim/par/comm.hpp"
#include "fabricsim/workload/trace.hpp"
#include "fabricsim/workload/trace_stream.hpp"

namespace google::protobuf::io {
class FileInputStream;
}
namespace fabricsim_chakra {
class Node;
}

namespace fabricsim::app {

struct ChakraOptions {
  /// Compute nodes with FLOPs (attribute num_ops) take the roofline of
  /// ASTRA-sim, max(num_ops / peak, tensor_size / memory bandwidth), in
  /// place of duration_micros.  0: no roofline; a node with num_ops and no
  /// duration is an error naming the key.
  double peak_tflops = 0;
  /// Memory nodes (and the roofline's memory side): bytes per second / 1e9.
  double memory_gbytes_per_s = 0;
  /// ASTRA-sim's communicator-group file (JSON: {"NAME": [ranks], ...}):
  /// a collective node whose attribute pg_name is NAME runs among those
  /// ranks.  Empty: every collective spans all ranks (ASTRA-sim's "empty").
  std::string comm_groups_file;
};

class ProtobufLog;  // (chakra_trace.cpp)

/// ASTRA-sim's communicator groups by name: their ranks, ascending.
using ChakraGroups = std::map<std::string, std::vector<std::uint32_t>>;

/// One rank's file of a Chakra trace, read a node at a time: what
/// load_chakra_trace reads each rank with, and what a streaming trace
/// reads ahead with (docs/architecture.md, "Streaming traces").
class ChakraRankReader {
 public:
  ChakraRankReader(std::string file, std::uint32_t rank, std::uint32_t ranks, const ChakraOptions& opt,
                   const ChakraGroups& groups);
  ~ChakraRankReader();
  ChakraRankReader(ChakraRankReader&&) noexcept;
  ChakraRankReader& operator=(ChakraRankReader&&) = delete;

  struct Node {
    std::uint64_t id = 0;
    workload::TraceNode n;
    /// A collective's communicator group (its ranks), or null: all ranks.
    const std::vector<std::uint32_t>* group = nullptr;
    std::string_view name;            ///< (valid until the next call)
    std::vector<std::uint64_t> deps;  ///< data, then control dependencies
  };
  /// Reads the next node into `out`; false at the end of the file.
  /// ConfigError "FILE: node ID: message" or "FILE: record N at byte B:
  /// ..." for what cannot be read (load_chakra_trace's).
  bool next(Node& out);
  const std::string& file() const { return file_; }
  /// Gives its descriptor back, keeping its place: the next next() opens
  /// the file again there (a trace of more ranks than open files allowed).
  void close();
  bool is_open() const { return stream_ != nullptr; }
  /// Bytes an open file's read buffer holds: 2 KiB, not protobuf's 8 KiB
  /// default, as a streamed trace of 1,024 ranks keeps every file open
  /// (8 MiB of buffers at 8 KiB; a node is 85 bytes on average, and one
  /// larger than the buffer is read across refills).
  static constexpr int kReadBlockBytes = 2048;

 private:
  void open();  // (at at_)
  std::string file_;
  std::uint32_t rank_, ranks_;
  const ChakraOptions& opt_;
  const ChakraGroups& groups_;
  // (One buffer a file: a streamed trace of 1,024 ranks keeps every file open.)
  std::unique_ptr<google::protobuf::io::FileInputStream> stream_;  // (closes its descriptor)
  std::unique_ptr<fabricsim_chakra::Node> node_;
  std::unique_ptr<ProtobufLog> log_;  // protobuf's log, kept for the error line while the file is open
  std::uint64_t size_ = 0, at_ = 0;
  std::size_t record_ = 0;
  double compute_us_ = 0;  // the rank's compute so far (bounded by SimTime's range)
};

/// A Chakra trace read for streaming (workload.trace_stream): each rank's
/// file read once for the pre-pass (its nodes, sends and collectives, ids
/// increasing), then again, a node at a time, for the replay.
class ChakraStream final : public workload::TraceSource {
 public:
  /// ConfigError as load_chakra_trace's, and for a file whose node ids do
  /// not increase or whose dependencies name a later node.  `send_lists`:
  /// the pre-pass keeps every send node, on disk (TraceSends: what
  /// messages are described from before the run on several processes, and
  /// what a receive there finds its message by); without, only their
  /// counts.  `comm`
  /// (collective, where given): its processes share the pre-pass, each
  /// reading every P-th file, and exchange what they found; an error in
  /// any file is the same error on every process (the lowest rank's).
  ChakraStream(const std::string& path, const ChakraOptions& opt, bool send_lists = true,
               const par::Comm* comm = nullptr);
  std::uint32_t ranks() const override { return static_cast<std::uint32_t>(files_.size()); }
  bool next(std::uint32_t r, Node& out) override;
  const std::vector<std::vector<std::uint32_t>>& groups() const override { return index_.groups; }
  const std::string& file(std::uint32_t r) const override { return files_[r]; }
  /// Closes rank r's file (another process reads it), its buffer freed.
  void skip(std::uint32_t r) override;
  const std::vector<std::string>& files() const { return files_; }
  /// Per rank: what the message numbering reads, and its node count.
  const std::vector<workload::TraceRankMessages>& summary() const { return summary_; }
  /// The send nodes (where kept), moved out: what records are described
  /// from before the run, and what the stream finds a remote receive's
  /// message in at its start (TraceStreamParams::sends).
  std::unique_ptr<workload::TraceSends> take_sends() { return std::move(sends_); }
  const std::vector<std::uint64_t>& node_counts() const { return node_counts_; }
  /// The distinct node names (the k-th ends at name_ends[k]), as Trace's.
  const std::string& names() const { return index_.names; }
  const std::vector<std::uint64_t>& name_ends() const { return index_.name_ends; }
  /// The names and their ends, moved out (for the report, once every node
  /// was read: no name can be added after), and the index of them freed.
  void take_names(std::string& names, std::vector<std::uint64_t>& ends) {
    names = std::move(index_.names);
    ends = std::move(index_.name_ends);
    index_.end_names();
  }
  const std::string& name() const { return name_; }
  /// Rank files kept open at once: all of them, or, past the open-file
  /// limit, fewer (the others closed and reopened where they were).
  std::uint32_t open_at_most() const { return open_at_most_; }

 private:
  std::uint32_t group_of(const std::vector<std::uint32_t>* members);
  void close_oldest();  // of the open files
  // Each process's ranks' summaries (and node counts) to every process.
  void exchange_summaries(const par::Comm& comm);
  // Rank r's send nodes kept by this process's pre-pass, to their file
  // (number spilled_ on) and out of memory.
  void spill_own_sends(std::uint32_t r);
  ChakraOptions opt_;
  ChakraGroups by_name_;
  // Its groups and distinct names, numbered as a whole trace's (add_group,
  // intern); no nodes.
  workload::Trace index_;
  std::vector<std::string> files_;
  std::vector<ChakraRankReader> readers_;
  ChakraRankReader::Node node_;
  std::vector<workload::TraceRankMessages> summary_;
  std::vector<std::uint64_t> node_counts_;
  // The send nodes: those its own pre-pass read, until exchanged, and every
  // rank's in their file (where kept).
  std::vector<std::vector<workload::TraceRankMessages::Send>> own_sends_;
  std::unique_ptr<workload::TraceSends> sends_;
  std::uint64_t spilled_ = 0;
  std::string name_;
  std::deque<std::uint32_t> opened_;  // ranks in the order their files were opened
  std::uint32_t open_ = 0, open_at_most_ = 0;
};

/// Whether `path` names a Chakra trace: "PREFIX.RANK.et", or a PREFIX with
/// a PREFIX.0.et next to it.
bool is_chakra_trace(const std::string& path);

/// Reads PREFIX.0.et, PREFIX.1.et, ... (the ranks are the files there are,
/// numbered from 0 without a gap).  ConfigError "FILE: node ID: message"
/// (or "FILE: record N: ...") for a truncated or corrupt file, a missing
/// rank file, an unknown node type or attribute, an attribute of the wrong
/// type, a compute node the options cannot time; and, once its nodes would
/// hold more than `read_budget` bytes, the memory limit's (Trace::read_budget).
workload::Trace load_chakra_trace(const std::string& path, const ChakraOptions& opt,
                                  std::uint64_t read_budget = UINT64_MAX);

}  // namespace fabricsim::app
