// util::SpillFile: records put in any order read back as an array in
// memory would hold them (tests/core: the util layer has no suite of its own).
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include "fabricsim/util/error.hpp"
#include "fabricsim/util/spill_file.hpp"

namespace {

using Record = std::array<std::uint32_t, 7>;  // 28 bytes: blocks end mid-record-run

TEST(SpillFile, ReadsBackWhatWasPutInAnyOrderAndZerosForTheRest) {
  constexpr std::uint64_t kRecords = 120'000;  // 3.4 MB: several read-ahead blocks
  fabricsim::util::SpillFile f(sizeof(Record), "test records");
  std::vector<Record> want(kRecords, Record{});
  std::mt19937_64 rng(7);
  std::vector<std::uint64_t> order(kRecords);
  for (std::uint64_t i = 0; i < kRecords; ++i) order[i] = i;
  std::shuffle(order.begin(), order.end(), rng);
  order.resize(kRecords * 3 / 4);  // a quarter never put
  for (std::uint64_t i : order) {
    Record r;
    for (auto& x : r) x = static_cast<std::uint32_t>(rng());
    want[i] = r;
    f.put(i, &r);
  }
  Record got{};
  for (std::uint64_t i = 0; i < kRecords; ++i) {
    f.get(i, &got);
    ASSERT_EQ(got, want[i]) << "record " << i << " in order";
  }
  // Random reads, and a put into the block just read ahead.
  for (int k = 0; k < 2000; ++k) {
    const std::uint64_t i = rng() % kRecords;
    f.get(i, &got);
    ASSERT_EQ(got, want[i]) << "record " << i << " at random";
    const std::uint64_t j = std::min<std::uint64_t>(kRecords - 1, i + 1);
    Record r;
    for (auto& x : r) x = static_cast<std::uint32_t>(rng());
    want[j] = r;
    f.put(j, &r);
    f.get(j, &got);
    ASSERT_EQ(got, want[j]) << "record " << j << " put after its block was read";
  }
}

TEST(SpillFile, ARecordPutAgainReadsAsTheLastPut) {
  // Puts wait in a batch written sorted: a repeated index within one batch,
  // across batches, and around a run of its neighbours.
  fabricsim::util::SpillFile f(sizeof(Record), "test records");
  std::vector<Record> want(100'000, Record{});
  std::mt19937_64 rng(11);
  for (int k = 0; k < 300'000; ++k) {  // about 16 batches of 512 KiB
    const std::uint64_t i = rng() % 2 == 0 ? rng() % 64 : rng() % want.size();
    Record r;
    for (auto& x : r) x = static_cast<std::uint32_t>(rng());
    want[i] = r;
    f.put(i, &r);
  }
  Record got{};
  for (std::uint64_t i = 0; i < want.size(); ++i) {
    f.get(i, &got);
    ASSERT_EQ(got, want[i]) << "record " << i;
  }
}

TEST(SpillFile, NamesTheDirectoryItCannotUse) {
  const char* old = std::getenv("TMPDIR");
  const std::string saved = old ? old : "";
  setenv("TMPDIR", "/nonexistent-fabricsim-dir", 1);
  try {
    fabricsim::util::SpillFile f(8, "the rows");
    ADD_FAILURE() << "made a file in a directory that does not exist";
  } catch (const fabricsim::util::UserError& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("the rows"), std::string::npos) << m;
    EXPECT_NE(m.find("/nonexistent-fabricsim-dir"), std::string::npos) << m;
    EXPECT_EQ(m.find('\n'), std::string::npos) << m;
  }
  if (old) setenv("TMPDIR", saved.c_str(), 1);
  else unsetenv("TMPDIR");
}

}  // namespace
