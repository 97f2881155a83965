// Schedule files for synth (synth/tacos.hpp): a '#' header with the request,
// then one CSV row per send.  Times are printed with 17 significant digits
// so that reading gives back the very same doubles.
#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <istream>
#include <iterator>
#include <map>
#include <ostream>
#include <stdexcept>
#include <string>
#include <string_view>
#include <system_error>
#include <type_traits>
#include <utility>
#include <vector>

#include "fabricsim/synth/tacos.hpp"

namespace fabricsim::synth {
namespace {

constexpr std::string_view kFormat = "fabricsim-tacos-schedule 1";
constexpr std::string_view kColumns = "chunk,src,dst,start_ns,end_ns,reduce";
constexpr const char* kKeys[] = {"format", "op", "npus", "root", "chunks_per_npu", "chunk_bytes", "finish_ns"};

std::string number(double v) {
  char buf[64];
  const auto res = std::to_chars(buf, buf + sizeof buf, v, std::chars_format::general, 17);
  return std::string(buf, res.ptr);
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) {
    s.remove_prefix(1);
  }
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) {
    s.remove_suffix(1);
  }
  return s;
}

// Integer or floating value of the whole of `text`, or false.
template <typename T>
bool parse(std::string_view text, T& out) {
  if (text.empty()) {
    return false;
  }
  const auto res = std::from_chars(text.data(), text.data() + text.size(), out);
  return res.ec == std::errc() && res.ptr == text.data() + text.size();
}

constexpr double kMaxTimeNs = 1e15;

class Reader {
 public:
  explicit Reader(const std::string& name) : name_(name) {}
  [[noreturn]] void fail(std::size_t line, const std::string& what) const {
    throw std::invalid_argument(name_ + ":" + std::to_string(line) + ": " + what);
  }
  template <typename T>
  T value(std::size_t line, std::string_view field, std::string_view text) const {
    T v{};
    if (!parse(text, v)) {
      fail(line, std::string(field) + " is not a number: '" + std::string(text) + "'");
    }
    if constexpr (std::is_floating_point_v<T>) {
      if (!std::isfinite(v)) {
        fail(line, std::string(field) + " is not finite: '" + std::string(text) + "'");
      }
      if (v < 0.0) {
        fail(line, std::string(field) + " is negative: '" + std::string(text) + "'");
      }
      // Beyond simulated time's range (int64 picoseconds, about 106 days),
      // and where double times no longer resolve a picosecond.
      if (v > kMaxTimeNs) {
        fail(line, std::string(field) + " is beyond 1e15 ns (about 11 days): '" + std::string(text) + "'");
      }
    }
    return v;
  }

 private:
  std::string name_;
};

}  // namespace

void write_schedule(std::ostream& out, const NpuGraph& g, const Request& r, const Schedule& s) {
  out << "# format: " << kFormat << '\n'
      << "# op: " << to_string(r.op) << '\n'
      << "# npus: " << g.npus << '\n'
      << "# root: " << r.root << '\n'
      << "# chunks_per_npu: " << r.chunks_per_npu << '\n'
      << "# chunk_bytes: " << r.chunk_bytes << '\n'
      << "# finish_ns: " << number(s.finish_ns) << '\n'
      << kColumns << '\n';
  for (std::size_t i = 0; i < s.sends.size(); ++i) {
    const Send& x = s.sends[i];
    if (x.link >= g.links.size()) {
      throw std::invalid_argument("synth: send " + std::to_string(i) + " names link " + std::to_string(x.link) +
                                  " of a graph with " + std::to_string(g.links.size()));
    }
    const Link& l = g.links[x.link];
    out << x.chunk << ',' << l.src << ',' << l.dst << ',' << number(x.start_ns) << ',' << number(x.end_ns) << ','
        << (x.reduce ? 1 : 0) << '\n';
  }
}

Schedule read_schedule(std::istream& in, const std::string& name, const NpuGraph& g, Request& r) {
  const Reader rd(name);
  std::map<std::string, std::pair<std::size_t, std::string>> header;  // key -> (line, value)
  std::size_t line_no = 0;
  std::string line;
  bool columns = false;
  // Header: the format line first, then "# key: value" lines, then the CSV header.
  while (!columns && std::getline(in, line)) {
    ++line_no;
    const std::string_view text = trim(line);
    if (text.empty()) {
      continue;
    }
    if (text.front() != '#') {
      if (header.count("format") == 0) {
        rd.fail(line_no, "expected '# format: " + std::string(kFormat) + "'");
      }
      if (text != kColumns) {
        rd.fail(line_no, "expected the CSV header '" + std::string(kColumns) + "'");
      }
      for (const char* key : kKeys) {
        if (header.count(key) == 0) {
          rd.fail(line_no, std::string("missing header key '") + key + "'");
        }
      }
      columns = true;
      break;
    }
    const std::string_view body = trim(text.substr(1));
    const auto colon = body.find(':');
    if (colon == std::string_view::npos) {
      rd.fail(line_no, "malformed header line (expected '# key: value')");
    }
    const std::string key(trim(body.substr(0, colon)));
    const std::string value(trim(body.substr(colon + 1)));
    if (std::find(std::begin(kKeys), std::end(kKeys), key) == std::end(kKeys)) {
      rd.fail(line_no, "unknown header key '" + key + "'");
    }
    if (header.empty() && key != "format") {
      rd.fail(line_no, "expected '# format: " + std::string(kFormat) + "' first");
    }
    if (key == "format" && value != kFormat) {
      rd.fail(line_no, "unsupported format '" + value + "' (expected '" + std::string(kFormat) + "')");
    }
    if (!header.emplace(key, std::make_pair(line_no, value)).second) {
      rd.fail(line_no, "duplicate header key '" + key + "'");
    }
  }
  if (!columns) {
    rd.fail(line_no + 1,
            header.empty() ? "empty schedule file" : "missing the CSV header '" + std::string(kColumns) + "'");
  }
  const auto field = [&](const char* key) -> const std::pair<std::size_t, std::string>& { return header.at(key); };
  Request req;
  try {
    req.op = parse_op(field("op").second);
  } catch (const std::invalid_argument&) {
    rd.fail(field("op").first, "unknown op '" + field("op").second + "'");
  }
  const auto npus = rd.value<std::uint32_t>(field("npus").first, "npus", field("npus").second);
  if (npus != g.npus) {
    rd.fail(field("npus").first,
            "npus " + std::to_string(npus) + " differs from the graph's " + std::to_string(g.npus));
  }
  req.root = rd.value<std::uint32_t>(field("root").first, "root", field("root").second);
  req.chunks_per_npu =
      rd.value<std::uint32_t>(field("chunks_per_npu").first, "chunks_per_npu", field("chunks_per_npu").second);
  req.chunk_bytes = rd.value<std::uint64_t>(field("chunk_bytes").first, "chunk_bytes", field("chunk_bytes").second);
  Schedule s;
  s.finish_ns = rd.value<double>(field("finish_ns").first, "finish_ns", field("finish_ns").second);
  std::uint32_t chunks = 0;
  try {
    chunks = chunk_count(g, req);
  } catch (const std::invalid_argument&) {
    rd.fail(field("root").first, "root " + std::to_string(req.root) + " is out of range or failed");
  }

  std::map<std::pair<std::uint32_t, std::uint32_t>, std::vector<std::uint32_t>> links;  // (src, dst) -> ids, ascending
  for (std::uint32_t e = 0; e < g.links.size(); ++e) {
    links[{g.links[e].src, g.links[e].dst}].push_back(e);
  }
  struct Row {
    std::size_t line;
    std::uint32_t src, dst;
    Send send;
  };
  std::vector<Row> rows;
  while (std::getline(in, line)) {
    ++line_no;
    const std::string_view text = trim(line);
    if (text.empty()) {
      continue;
    }
    std::vector<std::string_view> f;
    for (std::size_t from = 0;;) {
      const auto comma = text.find(',', from);
      f.push_back(trim(text.substr(from, comma == std::string_view::npos ? std::string_view::npos : comma - from)));
      if (comma == std::string_view::npos) {
        break;
      }
      from = comma + 1;
    }
    if (f.size() != 6) {
      rd.fail(line_no, "expected 6 fields (" + std::string(kColumns) + "), got " + std::to_string(f.size()));
    }
    Row row{line_no, 0, 0, Send{}};
    row.send.chunk = rd.value<std::uint32_t>(line_no, "chunk", f[0]);
    row.src = rd.value<std::uint32_t>(line_no, "src", f[1]);
    row.dst = rd.value<std::uint32_t>(line_no, "dst", f[2]);
    row.send.start_ns = rd.value<double>(line_no, "start_ns", f[3]);
    row.send.end_ns = rd.value<double>(line_no, "end_ns", f[4]);
    if (f[5] != "0" && f[5] != "1") {
      rd.fail(line_no, "reduce must be 0 or 1, not '" + std::string(f[5]) + "'");
    }
    row.send.reduce = f[5] == "1";
    if (row.send.chunk >= chunks) {
      rd.fail(line_no,
              "chunk " + std::to_string(row.send.chunk) + " out of range (" + std::to_string(chunks) + " chunks)");
    }
    for (const std::uint32_t v : {row.src, row.dst}) {
      if (v >= npus) {
        rd.fail(line_no, "NPU " + std::to_string(v) + " out of range (" + std::to_string(npus) + " NPUs)");
      }
      if (g.is_failed(v)) {
        rd.fail(line_no, "NPU " + std::to_string(v) + " is failed");
      }
    }
    if (row.src == row.dst) {
      rd.fail(line_no, "src and dst are both NPU " + std::to_string(row.src));
    }
    if (row.send.end_ns < row.send.start_ns) {
      rd.fail(line_no, "end_ns is before start_ns");
    }
    if (links.count({row.src, row.dst}) == 0) {
      rd.fail(line_no, "no link " + std::to_string(row.src) + "->" + std::to_string(row.dst) + " in the graph");
    }
    rows.push_back(row);
  }

  // Links: in start order, the lowest-numbered parallel link that is idle
  // and whose cost is the send's duration; failing that the lowest idle one,
  // then the lowest (check() then reports the mismatch or the overlap).
  // Taking any idle link of a cost class in start order never blocks a later
  // send that the original assignment could place (interval colouring).
  std::vector<std::size_t> order(rows.size());
  for (std::size_t i = 0; i < order.size(); ++i) {
    order[i] = i;
  }
  std::stable_sort(order.begin(), order.end(),
                   [&](std::size_t a, std::size_t b) { return rows[a].send.start_ns < rows[b].send.start_ns; });
  std::vector<double> busy_until(g.links.size(), 0.0);
  for (auto i : order) {
    Send& x = rows[i].send;
    const auto& cand = links.at({rows[i].src, rows[i].dst});
    const double took = x.end_ns - x.start_ns;
    std::uint32_t pick = cand.front();
    bool found = false;
    for (int pass = 0; pass < 2 && !found; ++pass) {
      for (auto e : cand) {
        const double cost = link_time_ns(g.links[e], req.chunk_bytes);
        const bool cost_ok = std::fabs(took - cost) <= 1e-9 * std::max({1.0, cost, x.end_ns});
        if (busy_until[e] <= x.start_ns && (pass == 1 || cost_ok)) {
          pick = e;
          found = true;
          break;
        }
      }
    }
    x.link = pick;
    busy_until[pick] = std::max(busy_until[pick], x.end_ns);
  }
  s.sends.reserve(rows.size());
  for (const Row& row : rows) {
    s.sends.push_back(row.send);
  }
  std::stable_sort(s.sends.begin(), s.sends.end(), [](const Send& a, const Send& b) {
    return a.start_ns != b.start_ns ? a.start_ns < b.start_ns : a.link < b.link;
  });
  r = req;
  return s;
}

}  // namespace fabricsim::synth
