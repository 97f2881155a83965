// The per-link time series of the flow and analytic models (flow_network.hpp):
// a row of bins per link, filled as the model learns what a link sent when,
// with the packet model's limits (at most 65,536 intervals and 2^24
// link-intervals: the interval doubles, merging bins in pairs, as often as
// needed), so the three models write /links/timeseries by the same rules.
// One mechanism for both models: the flow model adds real-valued integrals
// of its rates (T = double), the analytic model whole bytes (T = uint64_t,
// so that its rows sum exactly to /links/tx_bytes).
// Private to the flow and analytic models (src/net/flow/).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <type_traits>
#include <vector>

#include "fabricsim/core/time.hpp"
#include "fabricsim/net/network.hpp"
#include "fabricsim/net/topology.hpp"

namespace fabricsim::net::flow_detail {

template <class T>
class LinkSeries {
 public:
  /// One empty row per link, or off (interval zero: no series).
  void start(std::size_t links, core::SimTime interval) {
    if (interval <= core::SimTime::zero()) return;
    interval_ps_ = interval.ps();
    max_bins_ = series_max_intervals(links);
    rows_.resize(links);
  }
  bool on() const { return interval_ps_ > 0; }
  /// The current interval (zero when off).
  core::SimTime interval() const { return core::SimTime::from_ps(interval_ps_); }
  /// Bins of every row once closed (close()); 0 before.
  std::size_t bins() const { return bins_; }

  /// Splits [from, to) (from < to, picoseconds) at the interval boundaries
  /// and adds piece(a, b) to link l's bin of each part [a, b).  The
  /// interval doubles first if `to` lies beyond the last bin allowed, so
  /// the parts never straddle a change of interval.
  template <class Piece>
  void spread(LinkId l, std::int64_t from, std::int64_t to, Piece&& piece) {
    while (static_cast<std::size_t>((to - 1) / interval_ps_) >= max_bins_) coarsen();
    std::vector<T>& row = rows_[l];
    for (std::int64_t t = from; t < to;) {
      const auto k = static_cast<std::size_t>(t / interval_ps_);
      const std::int64_t bin_end = std::min<std::int64_t>(to, static_cast<std::int64_t>(k + 1) * interval_ps_);
      if (row.size() <= k) row.resize(k + 1, T{});
      row[k] += piece(t, bin_end);
      t = bin_end;
    }
  }

  /// Ends the rows at `end`: ceil(end / interval) bins (at least one),
  /// after doubling the interval as needed.  Bins past the end (only a model
  /// that books transfers ahead of time has them: the analytic model when
  /// engine.end_ns cut the run) join the last bin, so each row keeps its sum.
  void close(core::SimTime end) {
    if (!on() || bins_ > 0) return;
    auto count = [&] { return static_cast<std::size_t>((end.ps() + interval_ps_ - 1) / interval_ps_); };
    while (count() > max_bins_) coarsen();
    bins_ = std::max<std::size_t>(count(), 1);
    for (auto& row : rows_) {
      T past{};
      for (std::size_t k = bins_; k < row.size(); ++k) past += row[k];
      row.resize(bins_, T{});
      row.back() += past;
    }
  }

  /// The rows as LinkStats' series (bytes rounded to integers; before
  /// close(), each row as long as it has grown), and queue series of zeros
  /// (neither model has queues of bytes waiting for a link).
  void write(LinkStats& st) const {
    if (!on()) return;
    st.series_tx_bytes.resize(rows_.size());
    st.series_queue_bytes.resize(rows_.size());
    for (std::size_t l = 0; l < rows_.size(); ++l) {
      const std::vector<T>& row = rows_[l];
      const std::size_t k = bins_ ? bins_ : row.size();
      std::vector<std::uint64_t>& out = st.series_tx_bytes[l];
      out.assign(k, 0);
      // Real-valued bins are rounded cumulatively (each bin the step of the
      // rounded running sum), so that a row sums to its rounded total, as
      // /links/tx_bytes is, rather than collecting a rounding per bin.
      double sum = 0;
      std::int64_t rounded = 0;
      for (std::size_t i = 0; i < std::min(k, row.size()); ++i) {
        if constexpr (std::is_floating_point_v<T>) {
          sum += static_cast<double>(row[i]);
          const std::int64_t next = std::max<std::int64_t>(rounded, std::llround(sum));
          out[i] = static_cast<std::uint64_t>(next - rounded);
          rounded = next;
        } else {
          out[i] = static_cast<std::uint64_t>(row[i]);
        }
      }
      st.series_queue_bytes[l].assign(k, 0);
    }
  }

  /// The rows divided by the interval (an integral over time per bin
  /// becomes its time average), after close().
  void write_averages(std::vector<std::vector<double>>& out) const {
    if (!on()) return;
    out.resize(rows_.size());
    for (std::size_t l = 0; l < rows_.size(); ++l) {
      out[l].assign(bins_, 0.0);
      for (std::size_t i = 0; i < std::min(bins_, rows_[l].size()); ++i)
        out[l][i] = static_cast<double>(rows_[l][i]) / static_cast<double>(interval_ps_);
    }
  }

 private:
  /// Bins 2i and 2i+1 become bin i (the interval doubles, as the packet model's).
  void coarsen() {
    for (auto& row : rows_) {
      for (std::size_t i = 0; 2 * i < row.size(); ++i)
        row[i] = row[2 * i] + (2 * i + 1 < row.size() ? row[2 * i + 1] : T{});
      row.resize((row.size() + 1) / 2);
    }
    interval_ps_ *= 2;
  }

  std::int64_t interval_ps_ = 0;
  std::size_t max_bins_ = 0;
  std::size_t bins_ = 0;
  std::vector<std::vector<T>> rows_;
};

}  // namespace fabricsim::net::flow_detail
