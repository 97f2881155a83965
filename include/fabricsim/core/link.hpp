// Links are the only path between entities.  A link has a fixed propagation
// latency; an event sent over it at time t arrives at t + latency.  The
// minimum latency over links whose ends live on different ranks is the
// lookahead of the parallel engine, so it is computed from the links, never
// set by hand.
//
// A link whose receiving end is on another rank has a RemoteSink: instead of
// scheduling locally, the sender hands a fixed-size record to the par layer,
// which delivers it to the mirror of the link on the owning rank.
#pragma once

#include <cstdint>

#include "fabricsim/core/event.hpp"
#include "fabricsim/core/simulator.hpp"
#include "fabricsim/core/time.hpp"

namespace fabricsim::core {

using LinkId = std::uint32_t;

/// Fixed-size record of an event crossing ranks over a link.
struct RemoteRecord {
  EventKey key;
  LinkId link = 0;
  std::uint32_t arg32 = 0;
  std::uint64_t arg0 = 0;
  std::uint64_t arg1 = 0;
};

class RemoteSink {
 public:
  virtual ~RemoteSink() = default;
  virtual void post(const RemoteRecord& record) = 0;
};

struct Port {
  EntityId entity = kNoEntity;
  std::uint32_t index = 0;
};

class Link {
 public:
  Link() = default;
  Link(LinkId id, Port from, Port to, SimTime latency) : id_(id), from_(from), to_(to), latency_(latency) {}

  /// Where events arriving over this link are delivered (on the receiving rank).
  void bind_receiver(HandlerFn fn, void* target) {
    handler_ = fn;
    target_ = target;
  }
  /// Same, registering the pair with `sim` so sends skip the handler lookup.
  void bind_receiver(Simulator& sim, HandlerFn fn, void* target) {
    bind_receiver(fn, target);
    binding_ = sim.bind(fn, target);
    bound_ = true;
  }
  /// Makes the link cross ranks: sends become records posted to `sink`.
  void make_remote(RemoteSink* sink) { remote_ = sink; }

  /// Sends an event that enters the link at `depart` (>= now) and arrives at
  /// depart + latency.  `source` is the sending entity (the event key's source).
  void send(Simulator& sim, SimTime depart, std::uint32_t priority, EntityId source, std::uint32_t arg32,
            std::uint64_t arg0, std::uint64_t arg1) const {
    const SimTime at = depart + latency_;
    if (remote_ == nullptr) [[likely]] {
      if (bound_)
        sim.schedule_bound(at, priority, source, binding_, arg32, arg0, arg1);
      else
        sim.schedule(at, priority, source, to_.entity, handler_, target_, arg32, arg0, arg1);
    } else {
      RemoteRecord r{EventKey{at, priority, source, sim.next_sequence(source)}, id_, arg32, arg0, arg1};
      remote_->post(r);
    }
  }

  /// Turns a record received from another rank into a local event.
  Event to_event(const RemoteRecord& r) const {
    Event ev;
    ev.key = r.key;
    ev.handler = handler_;
    ev.target = target_;
    ev.dest = to_.entity;
    ev.arg32 = r.arg32;
    ev.arg0 = r.arg0;
    ev.arg1 = r.arg1;
    return ev;
  }

  LinkId id() const { return id_; }
  Port from() const { return from_; }
  Port to() const { return to_; }
  SimTime latency() const { return latency_; }
  bool is_remote() const { return remote_ != nullptr; }

 private:
  LinkId id_ = 0;
  Port from_;
  Port to_;
  SimTime latency_;
  HandlerFn handler_ = nullptr;
  void* target_ = nullptr;
  RemoteSink* remote_ = nullptr;
  Simulator::BindingId binding_ = 0;
  bool bound_ = false;
};

}  // namespace fabricsim::core
