// Message records handed back a page at a time (net::RecordDrop,
// Network::drop_delivered_records): every record reads as it would have
// without dropping, and the pages said to be gone are gone (mincore, the
// system's own account of what is resident).
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <memory>
#include <random>
#include <vector>

#include "fabricsim/core/simulator.hpp"
#include "fabricsim/net/network.hpp"
#include "fabricsim/net/record_drop.hpp"
#include "fabricsim/net/topology.hpp"

namespace fabricsim::net {
namespace {

using core::SimTime;

bool same(const Message& a, const Message& b) { return std::memcmp(&a, &b, sizeof(Message)) == 0; }

Message random_record(std::mt19937_64& rng) {
  Message m;
  m.bytes = 1 + rng() % 1'000'000;
  m.post_time = SimTime::from_ps(static_cast<std::int64_t>(rng() % 1'000'000));
  m.end_time = SimTime::from_ps(static_cast<std::int64_t>(rng() % 1'000'000));
  m.src = static_cast<EndpointId>(rng() % 1000);
  m.dst = static_cast<EndpointId>(rng() % 1000);
  m.packets = static_cast<std::uint32_t>(rng());
  m.sent_packets = static_cast<std::uint32_t>(rng());
  m.received_packets = static_cast<std::uint32_t>(rng());
  m.flow_port = static_cast<std::uint16_t>(rng());
  m.first_state = static_cast<std::uint8_t>(rng());
  m.vc = static_cast<std::uint8_t>(rng() % 16);
  m.failed = rng() % 2 == 1;
  return m;
}

// Pages of [p, p + bytes) the system holds, by mincore.
std::size_t resident_pages(const void* p, std::size_t bytes) {
  const auto page = static_cast<std::uintptr_t>(::sysconf(_SC_PAGESIZE));
  const auto lo = reinterpret_cast<std::uintptr_t>(p) / page * page;
  const auto hi = (reinterpret_cast<std::uintptr_t>(p) + bytes + page - 1) / page * page;
  std::vector<unsigned char> in((hi - lo) / page);
  EXPECT_EQ(::mincore(reinterpret_cast<void*>(lo), hi - lo, in.data()), 0);
  std::size_t n = 0;
  for (unsigned char c : in) n += c & 1;
  return n;
}

// A leaf-spine of 16 endpoints whose ECMP paths depend on each message's
// source port, and `n` random messages between its endpoints, posted in
// [0, within_ns).
Topology small_leaf_spine() {
  LeafSpineParams p;
  p.leaves = 4;
  p.spines = 4;
  p.servers_per_leaf = 4;
  p.gpus_per_server = 1;
  p.radix = 8;
  return build_leaf_spine(p);
}

struct Want {
  EndpointId src, dst;
  std::uint64_t bytes;
  SimTime at;
};

std::vector<Want> random_messages(std::uint64_t seed, int n, std::uint64_t within_ns) {
  std::mt19937_64 rng(seed);
  std::vector<Want> msgs;
  for (int k = 0; k < n; ++k) {
    const auto src = static_cast<EndpointId>(rng() % 16);
    auto dst = static_cast<EndpointId>(rng() % 16);
    if (dst == src) dst = (dst + 1) % 16;
    msgs.push_back({src, dst, 1 + rng() % 20'000, SimTime::from_ns(static_cast<std::int64_t>(rng() % within_ns))});
  }
  return msgs;
}

// A random life of 20,000 records against a plain copy (the brute force):
// some created before dropping begins, the rest blanks created later, in
// random order; each released at a random moment once created; every
// record read back after each step of a sample, and all at the end.
TEST(RecordDrop, ReadsEveryRecordAsAPlainCopyHoldsIt) {
  if (::sysconf(_SC_PAGESIZE) != static_cast<long>(RecordDrop::kPageBytes)) GTEST_SKIP() << "pages not 4 KiB";
  for (std::uint64_t seed : {1u, 2u, 3u}) {
    SCOPED_TRACE(seed);
    std::mt19937_64 rng(seed);
    const std::size_t n = 20'000;
    std::vector<Message> records(n, blank_message()), want(n, blank_message());
    std::vector<std::uint8_t> created(n, 0), released(n, 0);
    for (std::size_t i = 0; i < n / 2; ++i)  // (the second half all blanks)
      if (rng() % 4 == 0) {
        records[i] = want[i] = random_record(rng);
        created[i] = 1;
      }
    RecordDrop drop(records);
    EXPECT_GE(drop.pages_blank(), n / 2 * sizeof(Message) / RecordDrop::kPageBytes - 1);
    std::vector<MessageId> order(n);
    for (std::size_t i = 0; i < n; ++i) order[i] = static_cast<MessageId>(i);
    std::shuffle(order.begin(), order.end(), rng);
    std::vector<MessageId> live;
    std::size_t most_spilled = 0;
    for (std::size_t step = 0; step < n; ++step) {
      const MessageId id = order[step];
      if (!created[id]) {
        drop.before_write(id);
        records[id] = want[id] = random_record(rng);
        created[id] = 1;
      }
      // A created record is changed while held (a message in flight).
      records[id].received_packets += 1;
      want[id].received_packets += 1;
      live.push_back(id);
      // Release a random few of those held.
      while (!live.empty() && rng() % 3 != 0) {
        const std::size_t k = rng() % live.size();
        const MessageId r = live[k];
        live[k] = live.back();
        live.pop_back();
        drop.release(r);
        released[r] = 1;
      }
      most_spilled = std::max(most_spilled, drop.pages_spilled());
      if (step % 997 == 0) {
        for (std::size_t i = 0; i < n; ++i) ASSERT_TRUE(same(drop.read(static_cast<MessageId>(i)), want[i])) << i;
      }
    }
    for (MessageId r : live) drop.release(r);
    for (std::size_t i = 0; i < n; ++i) ASSERT_TRUE(same(drop.read(static_cast<MessageId>(i)), want[i])) << i;
    // Every record released: every page wholly inside the records is gone
    // (at most the two partial ones at the ends are held).
    EXPECT_GT(most_spilled, 0u);
    const std::size_t pages = n * sizeof(Message) / RecordDrop::kPageBytes;
    EXPECT_GE(drop.pages_spilled(), pages - 1);
    EXPECT_LE(resident_pages(records.data(), n * sizeof(Message)), 3u);
    // Made again, the records are the copy's.
    drop.restore();
    for (std::size_t i = 0; i < n; ++i) ASSERT_TRUE(same(records[i], want[i])) << i;
  }
}

TEST(RecordDrop, PagesOfBlanksGoAndComeBackAsBlanks) {
  if (::sysconf(_SC_PAGESIZE) != static_cast<long>(RecordDrop::kPageBytes)) GTEST_SKIP() << "pages not 4 KiB";
  const std::size_t n = 10'000;
  std::vector<Message> records(n, blank_message());
  const std::size_t before = resident_pages(records.data(), n * sizeof(Message));
  RecordDrop drop(records);
  EXPECT_GE(drop.pages_blank(), n * sizeof(Message) / RecordDrop::kPageBytes - 1);
  EXPECT_GE(before, n * sizeof(Message) / RecordDrop::kPageBytes);
  EXPECT_LE(resident_pages(records.data(), n * sizeof(Message)), 2u);
  for (std::size_t i = 0; i < n; i += 37) EXPECT_TRUE(same(drop.read(static_cast<MessageId>(i)), blank_message()));
  // One created in the middle: its page (two, if it lies across a boundary)
  // back, the blanks around it blanks.
  std::mt19937_64 rng(7);
  const Message m = random_record(rng);
  drop.before_write(5000);
  records[5000] = m;
  EXPECT_LE(resident_pages(records.data(), n * sizeof(Message)), 4u);
  for (MessageId i = 4900; i < 5100; ++i) EXPECT_TRUE(same(drop.read(i), i == 5000 ? m : blank_message())) << i;
  // Only its own page came back: not the blank pages on either side, into
  // which the records lying across its edges reach.
  const auto at = [&](std::size_t i) {
    return reinterpret_cast<const char*>(records.data()) + i * sizeof(Message);
  };
  const auto page = static_cast<std::uintptr_t>(RecordDrop::kPageBytes);
  const char* own = reinterpret_cast<const char*>(reinterpret_cast<std::uintptr_t>(at(5000)) / page * page);
  EXPECT_EQ(resident_pages(own, 1), 1u);
  EXPECT_EQ(resident_pages(own - page, 1), 0u);
  EXPECT_EQ(resident_pages(own + page, 1), 0u);
  // A record across that page's edge, created next: both its pages back,
  // it and its neighbours read as written.
  std::size_t across = 5000;
  while (reinterpret_cast<std::uintptr_t>(at(across + 1) - 1) / page == reinterpret_cast<std::uintptr_t>(own) / page)
    ++across;  // the last record that begins in `own`: it ends past it (48 does not divide 4096)
  const Message m2 = random_record(rng);
  drop.before_write(static_cast<MessageId>(across));
  records[across] = m2;
  EXPECT_EQ(resident_pages(own + page, 1), 1u);
  EXPECT_EQ(resident_pages(own + 2 * page, 1), 0u);
  for (MessageId i = 4900; i < 5300; ++i)
    EXPECT_TRUE(same(drop.read(i), i == 5000 ? m : i == across ? m2 : blank_message())) << i;
}
// Several processes: records none of this process's (absent) count as
// released from the start, the others are made lazily and released, and
// post times are written at the end into released records (held or
// handed back).  Every record reads as the plain copy's, and once every
// record made is released, every whole page is gone (mincore).
TEST(RecordDrop, AbsentRecordsLetTheirPagesGoWithTheLastMadeOne) {
  if (::sysconf(_SC_PAGESIZE) != static_cast<long>(RecordDrop::kPageBytes)) GTEST_SKIP() << "pages not 4 KiB";
  for (std::uint64_t seed : {4u, 5u}) {
    SCOPED_TRACE(seed);
    std::mt19937_64 rng(seed);
    const std::size_t n = 20'000;
    std::vector<Message> records(n, blank_message()), want(n, blank_message());
    RecordDrop drop(records);
    std::vector<std::uint8_t> mine(n);
    for (std::size_t i = 0; i < n; ++i) mine[i] = rng() % 2 == 0 ? 1 : 0;  // (interleaved, as a trace's ids)
    for (std::size_t i = 0; i < n; ++i)
      if (!mine[i]) drop.absent(static_cast<MessageId>(i));
    EXPECT_EQ(drop.pages_spilled(), 0u);
    std::vector<MessageId> order;
    for (std::size_t i = 0; i < n; ++i)
      if (mine[i]) order.push_back(static_cast<MessageId>(i));
    // Made in a roughly increasing order (a window of 64), each released
    // within a few steps, as a stream makes and delivers them.
    for (std::size_t i = 0; i + 1 < order.size(); ++i)
      if (rng() % 2 == 0) std::swap(order[i], order[std::min(order.size() - 1, i + rng() % 64)]);
    std::vector<MessageId> live;
    std::size_t most_resident = 0;
    for (const MessageId id : order) {
      drop.before_write(id);
      records[id] = want[id] = random_record(rng);
      live.push_back(id);
      while (live.size() > 8 || (!live.empty() && rng() % 2 == 0)) {
        const std::size_t k = rng() % live.size();
        drop.release(live[k]);
        live[k] = live.back();
        live.pop_back();
      }
      most_resident = std::max(most_resident, resident_pages(records.data(), n * sizeof(Message)));
    }
    for (MessageId r : live) drop.release(r);
    // What is held at once is what is in flight, not what was made.
    EXPECT_LT(most_resident, n * sizeof(Message) / RecordDrop::kPageBytes / 4);
    // The end of the run: a post time known elsewhere, written into some
    // released records (their pages gone by now, or the partial ones).
    for (std::size_t i = 0; i < n; i += 7)
      if (mine[i]) {
        want[i].post_time = SimTime::from_ps(static_cast<std::int64_t>(i));
        Message m = drop.read(static_cast<MessageId>(i));
        m.post_time = want[i].post_time;
        drop.write(static_cast<MessageId>(i), m);
      }
    for (std::size_t i = 0; i < n; ++i) ASSERT_TRUE(same(drop.read(static_cast<MessageId>(i)), want[i])) << i;
    EXPECT_LE(resident_pages(records.data(), n * sizeof(Message)), 3u);
    EXPECT_GE(drop.pages_spilled() + drop.pages_blank(), n * sizeof(Message) / RecordDrop::kPageBytes - 1);
  }
}

// Messages described (Network::describe_at, a streamed trace on several
// processes) are routed by their description where no record is made:
// on a leaf-spine, whose ECMP paths depend on each message's source port,
// a run that routes every packet by the description gives the records,
// totals and link counters of the run that routes by the records.
TEST(RecordDrop, PacketModelRoutesDescribedMessagesAsByTheirRecords) {
  const Topology topo = small_leaf_spine();
  const std::vector<Want> msgs = random_messages(12, 2000, 100'000);
  auto run = [&](bool describe) {
    auto sim = std::make_unique<core::Simulator>(topo.node_count());
    auto net = std::make_unique<Network>(topo, NetworkParams{}, *sim);
    net->reserve_ids(msgs.size());
    if (describe) {
      for (std::size_t k = 0; k < msgs.size(); ++k) {
        net->describe_at(static_cast<MessageId>(k), msgs[k].src, msgs[k].dst, msgs[k].bytes);
        EXPECT_FALSE(net->made(static_cast<MessageId>(k)));
      }
      EXPECT_TRUE(net->drop_delivered_records());
      // (Not made, a message reads as its description makes it.)
      const Message m = net->message(7);
      EXPECT_EQ(m.bytes, msgs[7].bytes);
      EXPECT_EQ(m.flow_port, flow_port_of(NetworkParams{}.seed, 7));
    }
    for (std::size_t k = 0; k < msgs.size(); ++k) {
      net->create_at(static_cast<MessageId>(k), msgs[k].src, msgs[k].dst, msgs[k].bytes, 0);
      EXPECT_TRUE(net->made(static_cast<MessageId>(k)));
    }
    for (std::size_t k = 0; k < msgs.size(); ++k) net->post(static_cast<MessageId>(k), msgs[k].at);
    sim->run();
    return std::make_pair(std::move(sim), std::move(net));
  };
  auto [sa, kept] = run(false);
  auto [sb, described] = run(true);
  ASSERT_EQ(kept->totals().messages_delivered, msgs.size());
  for (std::size_t k = 0; k < msgs.size(); ++k)
    ASSERT_TRUE(same(kept->message(static_cast<MessageId>(k)), described->message(static_cast<MessageId>(k)))) << k;
  EXPECT_EQ(kept->totals().packet_hops, described->totals().packet_hops);
  EXPECT_EQ(kept->link_stats().tx_bytes, described->link_stats().tx_bytes);
  EXPECT_EQ(kept->link_stats().flows, described->link_stats().flows);
}

// Describing messages set aside and dropped (a streamed trace on several
// processes, before the run) reads none of their blank records: their
// pages stay handed back (mincore), where a read would have mapped one per
// page (on some kernels a page of its own, counted as the process's).
TEST(RecordDrop, DescribingBlanksLeavesTheirPagesHandedBack) {
  const Topology topo = small_leaf_spine();
  const std::vector<Want> msgs = random_messages(13, 40'000, 1'000);
  core::Simulator sim(topo.node_count());
  struct Peek : Network {  // (the records' memory: Network::messages() is refused while dropping)
    using Network::Network;
    const void* records() const { return model().messages().data(); }
  } net(topo, NetworkParams{}, sim);
  ASSERT_EQ(net.reserve_ids_dropped(msgs.size()), 0u);
  const std::size_t bytes = msgs.size() * sizeof(Message);
  const std::size_t pages = bytes / RecordDrop::kPageBytes;
  ASSERT_GT(pages, 400u);
  EXPECT_LE(resident_pages(net.records(), bytes), 2u);
  for (std::size_t k = 0; k < msgs.size(); ++k)
    net.describe_at(static_cast<MessageId>(k), msgs[k].src, msgs[k].dst, msgs[k].bytes);
  EXPECT_LE(resident_pages(net.records(), bytes), 2u);
  // (And each still reads as its description makes it.)
  for (const std::size_t k : {std::size_t{0}, msgs.size() / 2, msgs.size() - 1}) {
    EXPECT_FALSE(net.made(static_cast<MessageId>(k)));
    EXPECT_EQ(net.message(static_cast<MessageId>(k)).bytes, msgs[k].bytes);
  }
  EXPECT_LE(resident_pages(net.records(), bytes), 2u);
}

// The packet model on one process, dropping: every record, the totals
// and every link's counters as in the same run that keeps them.
TEST(RecordDrop, PacketModelRunsAsWhenItKeepsTheRecords) {
  const Topology topo = small_leaf_spine();
  const std::vector<Want> msgs = random_messages(11, 3000, 200'000);
  auto run = [&](bool drop) {
    auto sim = std::make_unique<core::Simulator>(topo.node_count());
    auto net = std::make_unique<Network>(topo, NetworkParams{}, *sim);
    // Ids set aside first, created in order as a stream would (half of
    // them before dropping begins).
    net->reserve_ids(msgs.size());
    for (std::size_t k = 0; k < msgs.size() / 2; ++k)
      net->create_at(static_cast<MessageId>(k), msgs[k].src, msgs[k].dst, msgs[k].bytes, 0);
    if (drop) {
      EXPECT_TRUE(net->drop_delivered_records());
    }
    for (std::size_t k = msgs.size() / 2; k < msgs.size(); ++k)
      net->create_at(static_cast<MessageId>(k), msgs[k].src, msgs[k].dst, msgs[k].bytes, 0);
    for (std::size_t k = 0; k < msgs.size(); ++k) net->post(static_cast<MessageId>(k), msgs[k].at);
    sim->run();
    EXPECT_EQ(net->drops_delivered_records(), drop);
    // Every message delivered: each page whose records all are went back,
    // which is every whole page of the records (3,000 of 48 bytes: 35
    // pages, the first and last perhaps shared with other memory).
    if (drop) {
      EXPECT_GE(net->record_pages_spilled(), msgs.size() * sizeof(Message) / 4096 - 1);
    } else {
      EXPECT_EQ(net->record_pages_spilled(), 0u);
    }
    return std::make_pair(std::move(sim), std::move(net));
  };
  auto [sa, kept] = run(false);
  auto [sb, dropped] = run(true);
  ASSERT_EQ(kept->totals().messages_delivered, msgs.size());
  ASSERT_EQ(dropped->message_count(), msgs.size());
  for (std::size_t k = 0; k < msgs.size(); ++k) {
    const Message a = kept->message(static_cast<MessageId>(k)), b = dropped->message(static_cast<MessageId>(k));
    ASSERT_TRUE(same(a, b)) << k;
    ASSERT_EQ(b.bytes, msgs[k].bytes);
  }
  EXPECT_EQ(kept->totals().packet_hops, dropped->totals().packet_hops);
  EXPECT_EQ(kept->link_stats().tx_bytes, dropped->link_stats().tx_bytes);
  // Records added past the room set aside: every page made again first.
  const MessageId extra = dropped->create(0, 1, 4096);
  EXPECT_FALSE(dropped->drops_delivered_records());
  for (std::size_t k = 0; k < msgs.size(); ++k)
    ASSERT_TRUE(same(kept->message(static_cast<MessageId>(k)), dropped->messages()[k])) << k;
  EXPECT_EQ(dropped->message(extra).bytes, 4096u);
}

}  // namespace
}  // namespace fabricsim::net
