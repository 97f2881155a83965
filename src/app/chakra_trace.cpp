#include "chakra_trace.hpp"

#include <algorithm>
#include <array>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <map>
#include <filesystem>
#include <optional>
#include <fcntl.h>
#include <unistd.h>
#include <sys/resource.h>
#include <string_view>

#include <fmt/format.h>
#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl.h>
#include <google/protobuf/stubs/logging.h>

#include "app/chakra/et_def.pb.h"
#include "fabricsim/util/assert.hpp"
#include "fabricsim/util/error.hpp"
#include "json.hpp"

namespace fabricsim::app {

// libprotobuf logs some of what it refuses on stderr by itself (a string
// field of invalid UTF-8: "[libprotobuf ERROR ...] String field '...'
// contains invalid UTF-8 data ..."), a second line beside the one error line
// a bad input gets (found by mutating .et files).  While a file is read its
// log goes here instead, and the error line says why.  Held by each open
// reader: the first installs the handler, the last puts the one before back.
class ProtobufLog {
 public:
  ProtobufLog() {
    if (held()++ == 0) previous() = google::protobuf::SetLogHandler(&keep);
    last().clear();
  }
  ~ProtobufLog() {
    if (--held() == 0) google::protobuf::SetLogHandler(previous());
  }
  ProtobufLog(const ProtobufLog&) = delete;
  ProtobufLog& operator=(const ProtobufLog&) = delete;
  /// Forgets what was logged (before a record is parsed).
  void clear() { last().clear(); }
  /// Why the parse failed, as far as protobuf said: "" or ": string field
  /// Node.name is not valid UTF-8".
  std::string why() const {
    const std::string& m = last();
    const std::size_t a = m.find("String field '");
    if (a != std::string::npos && m.find("invalid UTF-8") != std::string::npos) {
      const std::size_t from = a + 14, to = m.find('\'', from);
      std::string field = m.substr(from, to == std::string::npos ? std::string::npos : to - from);
      if (field.rfind("fabricsim_chakra.", 0) == 0) field.erase(0, 17);
      return ": string field " + field + " is not valid UTF-8";
    }
    return "";
  }

 private:
  static std::string& last() {
    static std::string message;
    return message;
  }
  static void keep(google::protobuf::LogLevel, const char*, int, const std::string& message) {
    if (last().empty()) last() = message;
  }
  static int& held() {
    static int n = 0;
    return n;
  }
  static google::protobuf::LogHandler*& previous() {
    static google::protobuf::LogHandler* h = nullptr;
    return h;
  }
};


namespace {

namespace fs = std::filesystem;
namespace pb = fabricsim_chakra;
using util::ConfigError;
using workload::CollectiveOp;
using workload::TraceNode;

// "PREFIX.RANK.et" -> PREFIX; a PREFIX as is.
std::string prefix_of(const std::string& path) {
  if (path.size() < 3 || path.compare(path.size() - 3, 3, ".et") != 0) return path;
  const std::string stem = path.substr(0, path.size() - 3);
  const std::size_t dot = stem.rfind('.');
  if (dot == std::string::npos || dot + 1 == stem.size() ||
      !std::all_of(stem.begin() + static_cast<std::ptrdiff_t>(dot) + 1, stem.end(),
                   [](char c) { return c >= '0' && c <= '9'; }))
    return path;
  return stem.substr(0, dot);
}

std::string rank_file(const std::string& prefix, std::uint32_t rank) { return fmt::format("{}.{}.et", prefix, rank); }

// The attributes fabricsim reads, and those Chakra's converters write that
// do not change the timing (read and ignored; docs/model.md says which).
// (Sorted: a node's attributes are looked up here one by one, a million
// nodes' worth in a large trace.)
bool known_attribute(std::string_view name) {
  static constexpr std::array<std::string_view, 19> known{
      "comm_dst", "comm_priority", "comm_size", "comm_src", "comm_tag", "comm_type", "fw_parent", "fw_tid",
      "involved_dim", "is_cpu_op", "num_ops", "op_schema", "op_type", "pg_name", "rf_id", "scope", "seq_id",
      "tensor_size", "tid"};
  static_assert(std::is_sorted(known.begin(), known.end()));
  return std::binary_search(known.begin(), known.end(), name);
}

class NodeReader {
 public:
  NodeReader(const std::string& file, const pb::Node& node) : file_(file), node_(node) {
    const auto& attrs = node.attr();
    for (int i = 0; i < attrs.size(); ++i) {
      const std::string& name = attrs[i].name();
      if (!known_attribute(name))
        fail(fmt::format("unknown attribute \"{}\" (fabricsim reads comm_type, comm_size, comm_src, comm_dst, "
                         "comm_tag, num_ops, tensor_size; docs/model.md lists those it ignores)",
                         name));
      // (A node has a few attributes: those before it, not a set of copies.)
      for (int j = 0; j < i; ++j)
        if (attrs[j].name() == name) fail(fmt::format("attribute \"{}\" appears twice", name));
    }
  }
  [[noreturn]] void fail(const std::string& what) const {
    throw ConfigError(fmt::format("{}: node {}: {}", file_, node_.id(), what));
  }
  const pb::AttributeProto* find(std::string_view name) const {
    for (const pb::AttributeProto& a : node_.attr())
      if (a.name() == name) return &a;
    return nullptr;
  }
  /// An integer attribute (any of protobuf's integer types), in [lo, hi].
  std::optional<std::int64_t> integer(std::string_view name, std::int64_t lo, std::int64_t hi) const {
    const pb::AttributeProto* a = find(name);
    if (a == nullptr) return std::nullopt;
    using A = pb::AttributeProto;
    std::int64_t v = 0;
    bool big = false;  // a uint64 beyond int64
    switch (a->value_case()) {
      case A::kInt32Val: v = a->int32_val(); break;
      case A::kInt64Val: v = a->int64_val(); break;
      case A::kUint32Val: v = a->uint32_val(); break;
      case A::kUint64Val: big = a->uint64_val() > static_cast<std::uint64_t>(INT64_MAX); v = static_cast<std::int64_t>(a->uint64_val()); break;
      case A::kSint32Val: v = a->sint32_val(); break;
      case A::kSint64Val: v = a->sint64_val(); break;
      case A::kFixed32Val: v = a->fixed32_val(); break;
      case A::kFixed64Val: big = a->fixed64_val() > static_cast<std::uint64_t>(INT64_MAX); v = static_cast<std::int64_t>(a->fixed64_val()); break;
      case A::kSfixed32Val: v = a->sfixed32_val(); break;
      case A::kSfixed64Val: v = a->sfixed64_val(); break;
      default: fail(fmt::format("attribute \"{}\": expected an integer value", name));
    }
    if (big || v < lo || v > hi) fail(fmt::format("attribute \"{}\": expected an integer from {} to {}", name, lo, hi));
    return v;
  }
  std::int64_t need(std::string_view name, std::int64_t lo, std::int64_t hi) const {
    const auto v = integer(name, lo, hi);
    if (!v) fail(fmt::format("missing attribute \"{}\"", name));
    return *v;
  }
  std::optional<double> number(std::string_view name) const {
    const pb::AttributeProto* a = find(name);
    if (a == nullptr) return std::nullopt;
    if (a->value_case() == pb::AttributeProto::kDoubleVal) return a->double_val();
    if (a->value_case() == pb::AttributeProto::kFloatVal) return a->float_val();
    return static_cast<double>(need(name, 0, INT64_MAX));
  }

 private:
  const std::string& file_;
  const pb::Node& node_;
};

using Groups = ChakraGroups;

// ASTRA-sim's communicator-group file: {"NAME": [rank, ...], ...}.
Groups read_groups(const std::string& path, std::uint32_t ranks) {
  Groups groups;
  if (path.empty()) return groups;
  const json::Value root = json::parse_file(path, "workload.trace_comm_groups");
  const auto fail = [&](const json::Value& v, const std::string& what) {
    throw ConfigError(fmt::format("{}:{}:{}: {}", path, v.line, v.column, what));
  };
  if (root.type != json::Value::Type::Object) fail(root, "expected a JSON object of communicator groups");
  for (const auto& [name, v] : root.object) {
    if (v.type != json::Value::Type::Array || v.array.size() < 2)
      fail(v, fmt::format("\"{}\": expected an array of at least 2 ranks", name));
    std::vector<std::uint32_t>& g = groups[name];
    for (const json::Value& r : v.array) {
      if (r.type != json::Value::Type::Number || r.number < 0 || r.number != std::floor(r.number) ||
          r.number >= ranks)
        fail(r, fmt::format("\"{}\": expected ranks from 0 to {} (the trace's files)", name, ranks - 1));
      g.push_back(static_cast<std::uint32_t>(r.number));
    }
    std::sort(g.begin(), g.end());
    if (std::adjacent_find(g.begin(), g.end()) != g.end()) fail(v, fmt::format("\"{}\": a rank appears twice", name));
  }
  return groups;
}

CollectiveOp collective(const NodeReader& rd, std::int64_t type) {
  switch (type) {
    case pb::ALL_REDUCE: return CollectiveOp::Allreduce;
    case pb::REDUCE: return CollectiveOp::Reduce;
    case pb::ALL_GATHER: return CollectiveOp::Allgather;
    case pb::GATHER: return CollectiveOp::Gather;
    case pb::SCATTER: return CollectiveOp::Scatter;
    case pb::BROADCAST: return CollectiveOp::Broadcast;
    case pb::ALL_TO_ALL: return CollectiveOp::Alltoall;
    case pb::REDUCE_SCATTER:
    case pb::REDUCE_SCATTER_BLOCK: return CollectiveOp::ReduceScatter;
    case pb::BARRIER: return CollectiveOp::Barrier;
    default: break;
  }
  rd.fail(fmt::format("attribute \"comm_type\": unknown collective {} (0 ALL_REDUCE ... 9 BARRIER)", type));
}


}  // namespace

ChakraRankReader::ChakraRankReader(std::string file, std::uint32_t rank, std::uint32_t ranks,
                                   const ChakraOptions& opt, const ChakraGroups& groups)
    : file_(std::move(file)), rank_(rank), ranks_(ranks), opt_(opt), groups_(groups),
      node_(std::make_unique<pb::Node>()), log_(std::make_unique<ProtobufLog>()) {
  open();
  std::error_code ec;
  size_ = fs::file_size(file_, ec);
}

void ChakraRankReader::open() {
  const int fd = ::open(file_.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    throw ConfigError(fmt::format("{}: cannot open it ({}; workload.trace)", file_, std::strerror(errno)));
  if (at_ > 0 && ::lseek(fd, static_cast<off_t>(at_), SEEK_SET) != static_cast<off_t>(at_)) {
    const int err = errno;
    ::close(fd);
    throw ConfigError(fmt::format("{}: cannot read it again at byte {} ({}; workload.trace)", file_, at_,
                                  std::strerror(err)));
  }
  stream_ = std::make_unique<google::protobuf::io::FileInputStream>(fd, kReadBlockBytes);
  stream_->SetCloseOnDelete(true);
}

void ChakraRankReader::close() { stream_.reset(); }

ChakraRankReader::~ChakraRankReader() = default;
ChakraRankReader::ChakraRankReader(ChakraRankReader&&) noexcept = default;

bool ChakraRankReader::next(Node& out) {
  const std::string& file = file_;
  const std::uint32_t rank = rank_;
  const ChakraOptions& opt = opt_;
  const Groups& groups = groups_;
  std::uint64_t& at = at_;
  const std::uint64_t size = size_;
  std::size_t& record = record_;
  double& compute_us = compute_us_;
  constexpr std::int64_t kMaxBytes = INT64_C(1) << 40;  // as workload.sizes
  const auto max_rank = static_cast<std::int64_t>(ranks_) - 1;
  pb::Node& node = *node_;
  std::vector<std::uint64_t>& deps = out.deps;
  ProtobufLog& log = *log_;
  if (!stream_ && at < size) open();
  while (at < size) {
    log.clear();
    google::protobuf::io::CodedInputStream coded(stream_.get());
    std::uint32_t length = 0;
    if (!coded.ReadVarint32(&length))
      throw ConfigError(fmt::format("{}: record {} at byte {}: truncated or corrupt (its length does not read)", file,
                                    record, at));
    const auto header = static_cast<std::uint64_t>(coded.CurrentPosition());
    if (at + header + length > size)
      throw ConfigError(fmt::format("{}: record {} at byte {}: truncated: {} bytes announced, {} left in the file",
                                    file, record, at, length, size - at - header));
    const auto limit = coded.PushLimit(static_cast<int>(length));
    bool ok = false;
    if (record == 0) {
      pb::GlobalMetadata meta;
      ok = meta.ParseFromCodedStream(&coded) && coded.ConsumedEntireMessage();
    } else {
      ok = node.ParseFromCodedStream(&coded) && coded.ConsumedEntireMessage();
    }
    if (!ok)
      throw ConfigError(fmt::format("{}: record {} at byte {}: corrupt (not a Chakra {}{})", file, record, at,
                                    record == 0 ? "GlobalMetadata" : "Node", log.why()));
    coded.PopLimit(limit);
    at += header + length;
    if (record++ == 0) continue;

    const NodeReader rd(file, node);
    TraceNode& n = out.n;
    n = TraceNode{};
    out.group = nullptr;
    deps.assign(node.data_deps().begin(), node.data_deps().end());
    deps.insert(deps.end(), node.ctrl_deps().begin(), node.ctrl_deps().end());
    const auto peer = [&](const char* key) {
      const auto r = static_cast<std::uint32_t>(rd.need(key, 0, max_rank));
      if (r == rank) rd.fail(fmt::format("attribute \"{}\": a rank does not send to itself", key));
      return r;
    };
    switch (static_cast<int>(node.type())) {
      case pb::COMP_NODE:
      case pb::MEM_LOAD_NODE:
      case pb::MEM_STORE_NODE: {
        n.kind = TraceNode::Kind::Compute;
        const bool memory = node.type() != pb::COMP_NODE;
        double us = static_cast<double>(node.duration_micros());
        const auto ops = rd.number("num_ops");
        const auto bytes = rd.number("tensor_size");
        // As ASTRA-sim: with a roofline configured, a node with num_ops takes
        // its roofline time, whatever duration_micros says.
        if (!memory && ops && *ops > 0 && (us == 0 || opt.peak_tflops > 0)) {
          if (!(opt.peak_tflops > 0))
            rd.fail("num_ops without duration_micros: set workload.trace_peak_tflops (the roofline's peak)");
          us = *ops / (opt.peak_tflops * 1e6);
          if (bytes && *bytes > 0 && opt.memory_gbytes_per_s > 0)
            us = std::max(us, *bytes / (opt.memory_gbytes_per_s * 1e3));
        } else if (us == 0 && memory && bytes && *bytes > 0) {
          if (!(opt.memory_gbytes_per_s > 0))
            rd.fail("a memory node of tensor_size bytes without duration_micros: set "
                    "workload.trace_memory_gbytes_per_s");
          us = *bytes / (opt.memory_gbytes_per_s * 1e3);
        }
        if (!(us <= 1e12)) rd.fail("duration_micros: more than 1e12 us");
        if ((compute_us += us) > 0x1p63 / 1e6)
          rd.fail(fmt::format("the compute of rank {} adds up to {:.3g} s, beyond the int64-picosecond range of "
                              "simulated time (about 106 days)",
                              rank, compute_us * 1e-6));
        n.duration_ns = us * 1000.0;
        break;
      }
      case pb::COMM_SEND_NODE:
      case pb::COMM_RECV_NODE: {
        const bool send = node.type() == pb::COMM_SEND_NODE;
        n.kind = send ? TraceNode::Kind::Send : TraceNode::Kind::Recv;
        n.peer = peer(send ? "comm_dst" : "comm_src");
        n.bytes = static_cast<std::uint64_t>(rd.need("comm_size", 1, kMaxBytes));
        n.tag = rd.integer("comm_tag", INT64_MIN, INT64_MAX).value_or(0);
        break;
      }
      case pb::COMM_COLL_NODE:
        n.kind = TraceNode::Kind::Collective;
        n.op = collective(rd, rd.need("comm_type", 0, 255));
        n.bytes = n.op == CollectiveOp::Barrier
                      ? 0
                      : static_cast<std::uint64_t>(rd.need("comm_size", 1, kMaxBytes));
        if (ranks_ < 2) rd.fail("a collective needs at least 2 ranks (the trace has 1 rank file)");
        if (const pb::AttributeProto* pg = rd.find("pg_name"); pg != nullptr && !groups.empty()) {
          if (pg->value_case() != pb::AttributeProto::kStringVal)
            rd.fail("attribute \"pg_name\": expected a string value");
          const auto g = groups.find(pg->string_val());
          if (g == groups.end())
            rd.fail(fmt::format("attribute \"pg_name\": no communicator group \"{}\" in {} "
                                "(workload.trace_comm_groups)",
                                pg->string_val(), opt.comm_groups_file));
          out.group = &g->second;
        }
        break;
      default:
        rd.fail(fmt::format("unknown node type {} (fabricsim runs COMP_NODE 4, MEM_LOAD_NODE 2, MEM_STORE_NODE 3, "
                            "COMM_SEND_NODE 5, COMM_RECV_NODE 6, COMM_COLL_NODE 7)",
                            static_cast<int>(node.type())));
    }
    out.id = node.id();
    out.name = std::string_view(node.name());
    return true;
  }
  if (record == 0) throw ConfigError(fmt::format("{}: empty (a Chakra trace starts with its GlobalMetadata)", file));
  return false;
}

namespace {

// The nodes of one rank's file, into the trace.
void read_rank(const std::string& file, std::uint32_t rank, std::uint32_t ranks, const ChakraOptions& opt,
               const Groups& groups, workload::Trace& tr) {
  ChakraRankReader reader(file, rank, ranks, opt, groups);
  ChakraRankReader::Node node;
  while (reader.next(node)) {
    if (node.group != nullptr) node.n.group = tr.add_group(*node.group);
    tr.add_node(node.id, rank, node.n, node.name, node.deps.data(), node.deps.data() + node.deps.size());
  }
}

}  // namespace

bool is_chakra_trace(const std::string& path) {
  const std::string prefix = prefix_of(path);
  if (prefix != path) return true;
  std::error_code ec;
  return fs::exists(rank_file(prefix, 0), ec);
}

namespace {

// PREFIX.0.et, PREFIX.1.et, ...: the files there are, numbered from 0
// without a gap.
std::vector<std::string> rank_files_of(const std::string& prefix) {
  std::error_code ec;
  if (!fs::exists(rank_file(prefix, 0), ec))
    throw ConfigError(fmt::format("{}: no such file: a Chakra trace's rank 0 (workload.trace names PREFIX or "
                                  "PREFIX.RANK.et)",
                                  rank_file(prefix, 0)));
  std::vector<std::string> files;
  while (fs::exists(rank_file(prefix, static_cast<std::uint32_t>(files.size())), ec))
    files.push_back(rank_file(prefix, static_cast<std::uint32_t>(files.size())));
  const auto ranks = static_cast<std::uint32_t>(files.size());
  // A gap: a higher rank's file with a lower one missing.
  const fs::path dir = fs::path(prefix).parent_path().empty() ? fs::path(".") : fs::path(prefix).parent_path();
  const std::string base = fs::path(prefix).filename().string() + ".";
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    const std::string name = entry.path().filename().string();
    if (name.size() <= base.size() + 3 || name.compare(0, base.size(), base) != 0 ||
        name.compare(name.size() - 3, 3, ".et") != 0)
      continue;
    const std::string num = name.substr(base.size(), name.size() - base.size() - 3);
    if (num.empty() || !std::all_of(num.begin(), num.end(), [](char c) { return c >= '0' && c <= '9'; })) continue;
    if (num.size() < 10 && std::stoul(num) >= ranks)
      throw ConfigError(fmt::format("{}: missing: the trace has {} but not rank {} (a Chakra trace is one file per "
                                    "rank, numbered from 0)",
                                    rank_file(prefix, ranks), entry.path().string(), ranks));
  }
  return files;
}

}  // namespace

workload::Trace load_chakra_trace(const std::string& path, const ChakraOptions& opt, std::uint64_t read_budget) {
  const std::string prefix = prefix_of(path);
  std::error_code ec;
  workload::Trace tr;
  tr.file = prefix;
  tr.rank_files = rank_files_of(prefix);
  tr.ranks = static_cast<std::uint32_t>(tr.rank_files.size());
  const Groups groups = read_groups(opt.comm_groups_file, tr.ranks);
  tr.read_budget = read_budget;
  for (const std::string& f : tr.rank_files)
    if (const auto bytes = fs::file_size(f, ec); !ec) tr.file_bytes += bytes;
  for (std::uint32_t r = 0; r < tr.ranks; ++r) read_rank(tr.rank_files[r], r, tr.ranks, opt, groups, tr);
  if (tr.nodes.empty()) throw ConfigError(fmt::format("{}: the trace has no nodes", tr.rank_files[0]));
  tr.name = fs::path(prefix).filename().string();
  return tr;
}

ChakraStream::ChakraStream(const std::string& path, const ChakraOptions& opt, bool send_lists,
                           const par::Comm* comm)
    : opt_(opt) {
  const std::string prefix = prefix_of(path);
  files_ = rank_files_of(prefix);
  const std::uint32_t R = ranks();
  index_.ranks = R;
  index_.file = path;
  by_name_ = read_groups(opt_.comm_groups_file, R);
  name_ = fs::path(prefix).filename().string();
  std::error_code ec;
  // Every file open at once while the replay reads them (a trace of 1,024
  // ranks: as many descriptors): the soft limit raised to the hard one, and
  // past it (less what is open now and room for the output, MPI and the
  // rest), files closed and reopened where they were, the oldest opened
  // first.
  std::uint64_t room = R;
  if (rlimit lim{}; getrlimit(RLIMIT_NOFILE, &lim) == 0) {
    if (lim.rlim_cur < lim.rlim_max) {
      lim.rlim_cur = lim.rlim_max;
      (void)setrlimit(RLIMIT_NOFILE, &lim);
      (void)getrlimit(RLIMIT_NOFILE, &lim);
    }
    if (lim.rlim_cur != RLIM_INFINITY) {
      std::uint64_t in_use = 0;
      for ([[maybe_unused]] const auto& e : fs::directory_iterator("/proc/self/fd", ec)) ++in_use;
      constexpr std::uint64_t kSpare = 16;
      const std::uint64_t limit = lim.rlim_cur;
      room = limit > in_use + kSpare ? limit - in_use - kSpare : 1;
    }
  }
  // For the test suite: fewer files open at once (tests/app/trace_stream.py).
  if (const char* most = std::getenv("FABRICSIM_TEST_TRACE_OPEN_FILES"); most && *most)
    room = std::max<std::uint64_t>(1, std::strtoull(most, nullptr, 10));
  open_at_most_ = static_cast<std::uint32_t>(std::min<std::uint64_t>(R, room));
  // The pre-pass: each file once, keeping only its counts (and, where
  // asked, its send nodes).  On several processes each reads the ranks r
  // with r mod P its own, and the summaries are exchanged after: every
  // file is read once in all, in parallel.  A collective's group is kept
  // as its place among the named groups, and the groups are numbered after
  // the exchange, rank by rank, as one reading all of them numbers them.
  summary_.resize(R);
  node_counts_.assign(R, 0);
  const int P = comm != nullptr ? comm->size() : 1, me = comm != nullptr ? comm->rank() : 0;
  std::vector<const std::vector<std::uint32_t>*> named;  // by place (ChakraGroups is ordered)
  std::map<const std::vector<std::uint32_t>*, std::uint32_t> place;
  for (const auto& [name, members] : by_name_) {
    place.emplace(&members, static_cast<std::uint32_t>(named.size()));
    named.push_back(&members);
  }
  constexpr std::uint32_t kAll = UINT32_MAX;  // (no group: every rank)
  std::uint32_t failed = R;  // the first rank whose file is refused here
  std::int64_t order = R;    // (-1: $TMPDIR refused the send nodes' file, before any file)
  std::string error;
  int error_code = 0;
  if (send_lists) {
    own_sends_.resize(R);
    // (Here too every process's error, not one process's while the others
    // wait for the exchange: $TMPDIR may be a node's own on a cluster.)
    try {
      sends_ = std::make_unique<workload::TraceSends>();
    } catch (const util::UserError& e) {
      if (P == 1) throw;
      failed = 0;
      order = -1;
      error = e.what();
      error_code = e.exit_code();
    }
  }
  for (std::uint32_t r = static_cast<std::uint32_t>(me); r < R && failed == R; r += static_cast<std::uint32_t>(P)) {
    try {
      ChakraRankReader rd(files_[r], r, R, opt_, by_name_);
      std::uint64_t last = 0;
      while (rd.next(node_)) {
        if (node_counts_[r] > 0 && node_.id <= last)
          throw ConfigError(fmt::format("{}: node {}: id: not after node {} before it (workload.trace_stream reads "
                                        "a rank's nodes in id order; set it to false for this trace)",
                                        files_[r], node_.id, last));
        for (const std::uint64_t d : node_.deps)
          if (d >= node_.id)
            throw ConfigError(fmt::format("{}: node {}: data_deps/ctrl_deps: node {} is not before it "
                                          "(workload.trace_stream reads a rank's nodes in order; set it to false "
                                          "for this trace)",
                                          files_[r], node_.id, d));
        last = node_.id;
        ++node_counts_[r];
        if (node_.n.kind == TraceNode::Kind::Send) {
          ++summary_[r].sends;
          if (send_lists) own_sends_[r].push_back({node_.n.bytes, node_.n.tag, node_.id, node_.n.peer, 1});
        }
        if (node_.n.kind == TraceNode::Kind::Collective)
          summary_[r].collectives.push_back({node_.group == nullptr ? kAll : place.at(node_.group), node_.n.op,
                                             node_.n.bytes, node_.n.root, node_.id});
      }
    } catch (const util::UserError& e) {
      if (P == 1) throw;
      failed = r;
      error = e.what();
      error_code = e.exit_code();
    } catch (const std::exception& e) {  // (not the input's fault: still every process's error, not a hang)
      if (P == 1) throw;
      failed = r;
      error = std::string("unexpected failure: ") + e.what();
      error_code = util::kExitRuntimeError;
    }
  }
  if (P > 1) {
    // The lowest rank refused anywhere, its line on every process (as one
    // process reading every file would say, and before any process waits
    // for the others' summaries).
    const std::string line = comm->agree_on_error(error, order < 0 ? order : std::int64_t{failed}, error_code);
    if (!line.empty()) {
      if (error_code == util::kExitConfigError) throw ConfigError(line);
      throw util::UserError(line, error_code);
    }
    exchange_summaries(*comm);
  } else if (send_lists) {
    for (std::uint32_t r = 0; r < R; ++r) spill_own_sends(r);
  }
  std::vector<std::vector<workload::TraceRankMessages::Send>>().swap(own_sends_);
  for (auto& s : summary_)
    for (auto& c : s.collectives) c.group = group_of(c.group == kAll ? nullptr : named.at(c.group));
  std::uint64_t nodes = 0;
  for (std::uint32_t r = 0; r < R; ++r) nodes += node_counts_[r];
  if (nodes == 0) throw ConfigError(fmt::format("{}: the trace has no nodes", files_[0]));
  for (std::uint32_t r = 0; r < R; ++r) {
    readers_.emplace_back(files_[r], r, R, opt_, by_name_);
    opened_.push_back(r);
    if (++open_ > open_at_most_) close_oldest();
  }
}

void ChakraStream::spill_own_sends(std::uint32_t r) {
  if (sends_ == nullptr) return;
  for (const auto& x : own_sends_[r]) sends_->put(spilled_++, x);
  std::vector<workload::TraceRankMessages::Send>().swap(own_sends_[r]);
}

void ChakraStream::exchange_summaries(const par::Comm& comm) {
  // In blocks of ranks, so that the exchange holds a block's summaries,
  // not every rank's twice.  A rank's values: its node count, its send
  // count, its sends (4 values each, where kept), its collectives (5
  // each), each list after its length.  The sends go to their file
  // (TraceSends) rank after rank, each process's own ones too, and leave
  // memory with their block.
  const auto R = static_cast<std::uint32_t>(summary_.size());
  const auto P = static_cast<std::uint32_t>(comm.size()), me = static_cast<std::uint32_t>(comm.rank());
  constexpr std::uint32_t kBlock = 64;
  std::vector<std::int64_t> mine;
  std::vector<std::size_t> sends_at(kBlock);  // where a rank's sends are in the block
  for (std::uint32_t from = 0; from < R; from += kBlock) {
    const std::uint32_t to = std::min(R, from + kBlock);
    mine.clear();
    for (std::uint32_t r = from; r < to; ++r) {
      if (r % P != me) continue;
      const workload::TraceRankMessages& s = summary_[r];
      const std::size_t kept = sends_ != nullptr ? own_sends_[r].size() : 0;
      mine.insert(mine.end(), {std::int64_t{r}, static_cast<std::int64_t>(node_counts_[r]),
                               static_cast<std::int64_t>(s.sends), static_cast<std::int64_t>(kept)});
      for (std::size_t k = 0; k < kept; ++k) {
        const auto& x = own_sends_[r][k];
        mine.insert(mine.end(), {static_cast<std::int64_t>(x.bytes), x.tag, static_cast<std::int64_t>(x.node),
                                 std::int64_t{x.peer}});
      }
      mine.push_back(static_cast<std::int64_t>(s.collectives.size()));
      for (const auto& c : s.collectives)
        mine.insert(mine.end(), {std::int64_t{c.group}, static_cast<std::int64_t>(c.op),
                                 static_cast<std::int64_t>(c.bytes), std::int64_t{c.root}, static_cast<std::int64_t>(c.node)});
    }
    const std::vector<std::int64_t> all = comm.allgatherv(mine);
    for (std::size_t i = 0; i < all.size();) {
      const auto r = static_cast<std::uint32_t>(all[i++]);
      FABRICSIM_ASSERT(r >= from && r < to, "a rank's summary in its block");
      workload::TraceRankMessages& s = summary_[r];
      node_counts_[r] = static_cast<std::uint64_t>(all[i++]);
      s.sends = static_cast<std::uint64_t>(all[i++]);
      const auto n_sends = static_cast<std::size_t>(all[i++]);
      FABRICSIM_ASSERT(sends_ == nullptr || n_sends == s.sends, "every send node kept where they are");
      sends_at[r - from] = i;
      i += 4 * n_sends;
      if (r % P == me) {  // (its own: kept as read)
        i += 1 + 5 * static_cast<std::size_t>(all[i]);
        continue;
      }
      const auto n_coll = static_cast<std::size_t>(all[i++]);
      s.collectives.reserve(n_coll);
      for (std::size_t k = 0; k < n_coll; ++k, i += 5)
        s.collectives.push_back({static_cast<std::uint32_t>(all[i]), static_cast<CollectiveOp>(all[i + 1]),
                                 static_cast<std::uint64_t>(all[i + 2]), static_cast<std::uint32_t>(all[i + 3]),
                                 static_cast<std::uint64_t>(all[i + 4])});
    }
    if (sends_ == nullptr) continue;
    for (std::uint32_t r = from; r < to; ++r) {
      if (r % P == me) {
        spill_own_sends(r);
        continue;
      }
      for (std::size_t k = 0, i = sends_at[r - from]; k < summary_[r].sends; ++k, i += 4)
        sends_->put(spilled_++, {static_cast<std::uint64_t>(all[i]), all[i + 1], static_cast<std::uint64_t>(all[i + 2]),
                                 static_cast<std::uint32_t>(all[i + 3]), 1});
    }
  }
}

void ChakraStream::close_oldest() {
  while (!opened_.empty()) {
    const std::uint32_t r = opened_.front();
    opened_.pop_front();
    if (readers_[r].is_open()) {
      readers_[r].close();
      --open_;
      return;
    }
  }
}

std::uint32_t ChakraStream::group_of(const std::vector<std::uint32_t>* members) {
  return members == nullptr ? 0 : index_.add_group(*members);
}

void ChakraStream::skip(std::uint32_t r) {
  if (!readers_[r].is_open()) return;
  readers_[r].close();
  --open_;
}

bool ChakraStream::next(std::uint32_t r, Node& out) {
  ChakraRankReader& rd = readers_[r];
  const bool was_open = rd.is_open();
  if (!was_open && open_ >= open_at_most_) close_oldest();
  const bool more = rd.next(node_);
  if (!was_open && rd.is_open()) {
    opened_.push_back(r);
    ++open_;
  }
  if (!more && rd.is_open()) {  // (at its end: its descriptor back)
    rd.close();
    --open_;
  }
  if (!more) return false;
  out.id = node_.id;
  out.n = node_.n;
  out.n.group = group_of(node_.group);
  out.name = index_.intern(node_.name);
  out.deps.assign(node_.deps.begin(), node_.deps.end());
  return true;
}

}  // namespace fabricsim::app
