// Events: fixed-size plain records with a total, partition-independent order.
//
// The order key is (time, priority, source entity, per-source sequence).  The
// source is the entity that scheduled the event and the sequence counts the
// events that entity has scheduled, so the key of every event is the same no
// matter how the entities are spread over ranks: that is what makes results
// bit-identical at any rank count.
#pragma once

#include <cstdint>

#include "fabricsim/core/time.hpp"

namespace fabricsim::core {

using EntityId = std::uint32_t;
inline constexpr EntityId kNoEntity = 0xFFFFFFFFu;

struct EventKey {
  SimTime time;
  std::uint32_t priority = 0;  ///< lower runs first among events at the same time
  EntityId source = 0;         ///< entity that scheduled the event
  std::uint64_t sequence = 0;  ///< per-source counter

  friend constexpr bool operator<(const EventKey& a, const EventKey& b) {
    if (a.time != b.time) return a.time < b.time;
    if (a.priority != b.priority) return a.priority < b.priority;
    if (a.source != b.source) return a.source < b.source;
    return a.sequence < b.sequence;
  }
  friend constexpr bool operator==(const EventKey&, const EventKey&) = default;
};

struct Event;
/// A handler is a plain function bound at compile time to a member function
/// (see Simulator::handler), so dispatching an event costs one indirect call.
using HandlerFn = void (*)(void* target, const Event& ev);

/// Payload words are interpreted by the handler (a packet index, a port and
/// a virtual channel, a message id, ...).  The queue keeps 32 bits of arg32,
/// 64 of arg0 and 16 of arg1; `dest` is informational and not stored.
struct Event {
  EventKey key;
  HandlerFn handler = nullptr;
  void* target = nullptr;
  EntityId dest = kNoEntity;  ///< entity that receives the event
  std::uint32_t arg32 = 0;
  std::uint64_t arg0 = 0;
  std::uint64_t arg1 = 0;
};

}  // namespace fabricsim::core
