//===- HostCommunicator.cpp - collectives between host processes ----------===//

#include "HostCommunicator.h"

#include "CommOptions.h"
#include "CommReduce.h"
#include "DType.h"

#include "mte-c/ModelABI.h"

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <climits>
#include <cstdio>
#include <cstring>
#include <map>
#include <mutex>
#include <new>
#include <thread>

#include <fcntl.h>
#include <linux/futex.h>
#include <sched.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

using namespace mte::runtime;

static_assert(std::atomic<uint64_t>::is_always_lock_free &&
                  std::atomic<uint32_t>::is_always_lock_free &&
                  std::atomic<int32_t>::is_always_lock_free,
              "the communicator's atomics live in memory several processes "
              "share");

namespace {
/// Identifies a segment of this layout ("mte-cmm" and a layout version).
constexpr uint64_t kMagic = 0x016d6d632d65746dull;
/// The staging memory of all ranks together, unless MTE_COMM_BUFFER_BYTES
/// sets a slot's size: small enough for a container's 64 MiB /dev/shm.
constexpr size_t kStagingBytes = size_t(32) << 20;
constexpr size_t kMinSlotBytes = size_t(64) << 10;
constexpr size_t kMaxSlotBytes = size_t(4) << 20;
/// The elements a group of one reduces at a time (its f32 scratch).
constexpr size_t kLocalChunkElements = size_t(1) << 16;
/// A wait spins, then yields, then sleeps on the futex in slices, between
/// which it checks the awaited rank's process and the deadline.
constexpr unsigned kSpins = 256, kYields = 64;
constexpr long kSleepNanos = 10 * 1000 * 1000;
/// The end of a message of ranks that did not meet.
constexpr char kSameIdHint[] =
    "; every rank must open the model, with the same communicator id "
    "(MTE_COMM_ID), within MTE_COMM_TIMEOUT";
} // namespace

struct alignas(64) HostCommunicator::Header {
  std::atomic<uint64_t> magic;
  int32_t worldSize;
  int32_t creatorPid;
  uint64_t slotBytes;
  /// Bumped by every change a waiter may be waiting for; the futex word.
  std::atomic<uint32_t> event;
  std::atomic<uint32_t> waiters;
  /// 0, or the first rank that failed plus one: claimed before it writes
  /// `failure`, published (failedRank) after.
  std::atomic<int32_t> failureClaim;
  std::atomic<int32_t> failedRank;
  char failure[480];
};

struct alignas(64) HostCommunicator::RankControl {
  /// The rank's process once it joined, 0 before.
  std::atomic<int32_t> pid;
  std::atomic<int32_t> closed;
  /// The collective of the step its slot holds (written before the
  /// channel's `posted`).
  CollectiveCall call;
};

/// A rank's progress on one channel: the steps whose part its slot has
/// held, and the steps whose slots it has finished reading.
struct alignas(16) HostCommunicator::ChannelCounts {
  std::atomic<uint64_t> posted;
  std::atomic<uint64_t> consumed;
};

/// The most grid axes a communicator's channels are counted for.
static constexpr size_t kMaxGridAxes = 8;

static size_t alignTo64(size_t bytes) { return (bytes + 63) & ~size_t(63); }

std::string CollectiveCall::describe() const {
  const char *name = kind == AllReduce   ? "mte_comm_all_reduce"
                     : kind == AllGather ? "mte_comm_all_gather"
                     : kind == Broadcast ? "mte_comm_broadcast"
                     : kind == Send      ? "mte_comm_send"
                                         : "mte_comm_reduce_scatter";
  std::string text = std::string(name) + "(" + std::to_string(count) + " " +
                     formatDType(dtype);
  if (kind == Broadcast)
    text += ", root " + std::to_string(op);
  else if (kind == Send)
    text += ", to " + std::to_string(op);
  else if (kind != AllGather)
    text += std::string(", ") + reduceOpName(op);
  char axes[32];
  std::snprintf(axes, sizeof(axes), ", grid axes 0x%x)", gridAxes);
  return text + axes;
}

static std::string formatSeconds(double seconds) {
  char text[32];
  std::snprintf(text, sizeof(text), "%g s", seconds);
  return text;
}

/// The shared memory name of the next communicator this process joins
/// under `commId`: the ranks of a sharded model open it in the same
/// order, so the k-th of every rank meet. Characters a name cannot hold
/// become '_', and a hash of the id keeps such ids apart.
static std::string segmentName(const std::string &commId) {
  static std::mutex *mutex = new std::mutex();
  static auto *opens = new std::map<std::string, uint64_t>();
  uint64_t sequence;
  {
    std::lock_guard<std::mutex> guard(*mutex);
    sequence = ++(*opens)[commId];
  }
  std::string name = "/mte-";
  for (char c : commId.substr(0, 96)) {
    bool keep = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
                (c >= '0' && c <= '9') || c == '.' || c == '_' || c == '-';
    name += keep ? c : '_';
  }
  uint64_t hash = 0xcbf29ce484222325ull; // FNV-1a
  for (unsigned char c : commId)
    hash = (hash ^ c) * 0x100000001b3ull;
  char suffix[48];
  std::snprintf(suffix, sizeof(suffix), "-%016llx.%llu",
                static_cast<unsigned long long>(hash),
                static_cast<unsigned long long>(sequence));
  return name + suffix;
}

/// Whether process `pid` has exited (a zombie not yet reaped counts).
static bool processExited(int32_t pid) {
  if (::kill(pid, 0) != 0)
    return errno == ESRCH;
  char path[40];
  std::snprintf(path, sizeof(path), "/proc/%d/stat", pid);
  int fd = ::open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return false;
  char text[512];
  ssize_t length = ::read(fd, text, sizeof(text) - 1);
  ::close(fd);
  if (length <= 0)
    return false;
  text[length] = '\0';
  // "pid (command) state ...", where the command may hold ") ".
  const char *end = std::strrchr(text, ')');
  return end && end[1] == ' ' && (end[2] == 'Z' || end[2] == 'X');
}

static void futexWait(std::atomic<uint32_t> &word, uint32_t expected,
                      long nanos) {
  timespec timeout = {0, nanos};
  ::syscall(SYS_futex, reinterpret_cast<uint32_t *>(&word), FUTEX_WAIT,
            expected, &timeout, nullptr, 0);
}

static void futexWakeAll(std::atomic<uint32_t> &word) {
  ::syscall(SYS_futex, reinterpret_cast<uint32_t *>(&word), FUTEX_WAKE, INT_MAX,
            nullptr, nullptr, 0);
}

static void cpuRelax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  asm volatile("yield");
#endif
}

/// The channels of a rank of `worldSize` on a grid of `numAxes` axes.
static uint32_t channelsFor(int32_t worldSize, size_t numAxes) {
  return (1u << numAxes) + static_cast<uint32_t>(worldSize);
}

size_t HostCommunicator::segmentBytes(int32_t worldSize, size_t numAxes,
                                      size_t slotBytes) {
  size_t ranks = static_cast<size_t>(worldSize);
  return alignTo64(sizeof(Header)) + ranks * sizeof(RankControl) +
         alignTo64(ranks * channelsFor(worldSize, numAxes) *
                   sizeof(ChannelCounts)) +
         ranks * slotBytes;
}

uint32_t HostCommunicator::numChannels() const {
  return channelsFor(worldSize, grid.size());
}

HostCommunicator::ChannelCounts &
HostCommunicator::counts(int32_t of, uint32_t channel) const {
  return channelCounts[static_cast<size_t>(of) * numChannels() + channel];
}

HostCommunicator::HostCommunicator(const std::string &commId, int32_t rank,
                                   const std::vector<int64_t> &grid,
                                   double timeoutSeconds)
    : commId(commId), rank(rank), grid(grid),
      // A deadline beyond a few months would overflow the clock.
      timeoutSeconds(std::min(timeoutSeconds, 1e7)) {
  int64_t ranks = 1;
  for (int64_t extent : grid)
    ranks *= extent;
  worldSize = static_cast<int32_t>(ranks);
  if (grid.size() <= kMaxGridAxes && ranks <= kMaxRanks)
    steps.assign(numChannels(), 0);
}

std::unique_ptr<HostCommunicator>
HostCommunicator::join(const std::string &commId, int32_t rank,
                       const std::vector<int64_t> &grid,
                       const CommLimits &limits, std::string &error) {
  std::unique_ptr<HostCommunicator> comm(
      new HostCommunicator(commId, rank, grid, limits.timeoutSeconds));
  int32_t worldSize = comm->worldSize;
  if (worldSize == 1)
    return comm;
  if (worldSize > kMaxRanks) {
    error = "a host communicator holds at most " + std::to_string(kMaxRanks) +
            " ranks, not " + std::to_string(worldSize);
    return nullptr;
  }
  if (grid.size() > kMaxGridAxes) {
    error = "a host communicator's grid has at most " +
            std::to_string(kMaxGridAxes) + " axes, not " +
            std::to_string(grid.size());
    return nullptr;
  }
  comm->name = segmentName(commId);
  size_t slotBytes =
      limits.bufferBytes
          ? limits.bufferBytes
          : std::clamp(kStagingBytes / worldSize, kMinSlotBytes, kMaxSlotBytes);
  // A reduce-scatter step stages one element of every rank's part.
  slotBytes = std::max(slotBytes & ~size_t(63),
                       alignTo64(sizeof(uint64_t) * worldSize));
  bool joined =
      rank == 0 ? comm->create(slotBytes, error) : comm->attach(error);
  if (!joined || !comm->awaitJoined(error))
    return nullptr;
  return comm;
}

HostCommunicator::~HostCommunicator() {
  if (controls && controls[rank].pid.load() == ::getpid()) {
    controls[rank].closed.store(1);
    notify();
  }
  unmap();
}

bool HostCommunicator::map(int fd, size_t bytes, std::string &error) {
  void *memory =
      ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (memory == MAP_FAILED) {
    error = "cannot map the shared memory of communicator '" + commId +
            "': " + std::strerror(errno);
    return false;
  }
  mapping = memory;
  mappedBytes = bytes;
  header = static_cast<Header *>(memory);
  controls = reinterpret_cast<RankControl *>(static_cast<char *>(memory) +
                                             alignTo64(sizeof(Header)));
  channelCounts = reinterpret_cast<ChannelCounts *>(controls + worldSize);
  slots = reinterpret_cast<char *>(channelCounts) +
          alignTo64(static_cast<size_t>(worldSize) * numChannels() *
                    sizeof(ChannelCounts));
  return true;
}

void HostCommunicator::unmap() {
  if (mapping)
    ::munmap(mapping, mappedBytes);
  mapping = nullptr;
  header = nullptr;
  controls = nullptr;
  channelCounts = nullptr;
  slots = nullptr;
}

bool HostCommunicator::create(size_t wantedSlotBytes, std::string &error) {
  // A segment of the name may be left by a job whose rank 0 died while the
  // ranks joined; this job's ranks must not take it for theirs.
  ::shm_unlink(name.c_str());
  int fd =
      ::shm_open(name.c_str(), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (fd < 0) {
    error = "cannot create the shared memory '" + name + "' of communicator '" +
            commId + "': " + std::strerror(errno);
    return false;
  }
  size_t bytes = segmentBytes(worldSize, grid.size(), wantedSlotBytes);
  // Reserve the memory now: a tmpfs that runs out later would kill the
  // process with SIGBUS on a write.
  int reserved = ::posix_fallocate(fd, 0, static_cast<off_t>(bytes));
  if (reserved == EOPNOTSUPP || reserved == EINVAL)
    reserved = ::ftruncate(fd, static_cast<off_t>(bytes)) == 0 ? 0 : errno;
  bool mapped = false;
  if (reserved != 0)
    error = "cannot allocate " + std::to_string(bytes) +
            " bytes of shared memory (/dev/shm) for communicator '" + commId +
            "': " + std::strerror(reserved);
  else
    mapped = map(fd, bytes, error);
  ::close(fd);
  if (!mapped) {
    ::shm_unlink(name.c_str());
    return false;
  }
  new (header) Header();
  for (int32_t r = 0; r < worldSize; ++r)
    new (&controls[r]) RankControl();
  for (size_t c = 0, e = size_t(worldSize) * numChannels(); c < e; ++c)
    new (&channelCounts[c]) ChannelCounts();
  header->worldSize = worldSize;
  header->creatorPid = ::getpid();
  header->slotBytes = wantedSlotBytes;
  slotBytes = wantedSlotBytes;
  controls[0].pid.store(::getpid());
  header->magic.store(kMagic, std::memory_order_release);
  return true;
}

bool HostCommunicator::attach(std::string &error) {
  using Clock = std::chrono::steady_clock;
  auto deadline =
      Clock::now() + std::chrono::duration_cast<Clock::duration>(
                         std::chrono::duration<double>(timeoutSeconds));
  for (unsigned attempt = 0;; ++attempt) {
    int fd = ::shm_open(name.c_str(), O_RDWR | O_CLOEXEC, 0);
    if (fd < 0 && errno != ENOENT) {
      error = "cannot open the shared memory '" + name + "' of communicator '" +
              commId + "': " + std::strerror(errno);
      return false;
    }
    struct stat status;
    if (fd >= 0 && ::fstat(fd, &status) == 0 &&
        static_cast<size_t>(status.st_size) >= sizeof(Header)) {
      bool mapped = map(fd, static_cast<size_t>(status.st_size), error);
      ::close(fd);
      fd = -1;
      if (!mapped)
        return false;
      // Rank 0 sets the magic once the segment is complete; a segment
      // whose creator is gone is a failed job's.
      if (header->magic.load(std::memory_order_acquire) == kMagic &&
          !processExited(header->creatorPid)) {
        if (header->worldSize != worldSize ||
            segmentBytes(worldSize, grid.size(), header->slotBytes) !=
                mappedBytes) {
          error = "communicator '" + commId + "' was opened by rank 0 " +
                  "(process " + std::to_string(header->creatorPid) + ") for " +
                  std::to_string(header->worldSize) +
                  " ranks, by this rank for " + std::to_string(worldSize);
          return false;
        }
        break;
      }
      unmap();
    }
    if (fd >= 0)
      ::close(fd);
    if (Clock::now() >= deadline) {
      error = "rank 0 did not open communicator '" + commId + "' within " +
              formatSeconds(timeoutSeconds) + kSameIdHint;
      return false;
    }
    std::this_thread::sleep_for(
        std::chrono::milliseconds(attempt < 100 ? 1 : 10));
  }
  slotBytes = header->slotBytes;
  int32_t unclaimed = 0;
  if (!controls[rank].pid.compare_exchange_strong(unclaimed, ::getpid())) {
    error = "rank " + std::to_string(rank) + " of communicator '" + commId +
            "' is taken by process " + std::to_string(unclaimed) +
            ": two processes opened the model as rank " + std::to_string(rank);
    return false;
  }
  notify();
  return true;
}

bool HostCommunicator::awaitJoined(std::string &error) {
  // Rank 0 waits for every rank; the others watch rank 0, which fails the
  // communicator for all when it gives up.
  auto missing = [&] {
    for (int32_t r = 0; r < worldSize; ++r)
      if (controls[r].pid.load() == 0)
        return rank == 0 ? r : 0;
    return -1;
  };
  auto describeTimeout = [&](int32_t) {
    std::string absent;
    int32_t numAbsent = 0;
    for (int32_t r = 0; r < worldSize; ++r) {
      if (controls[r].pid.load() != 0)
        continue;
      if (numAbsent++ < 8)
        absent += (absent.empty() ? "" : ", ") + std::to_string(r);
      else if (numAbsent == 9)
        absent += ", ...";
    }
    return std::to_string(worldSize - numAbsent) + " of " +
           std::to_string(worldSize) + " ranks joined communicator '" + commId +
           "' within " + formatSeconds(timeoutSeconds) + " (missing: rank" +
           (numAbsent > 1 ? "s " : " ") + absent + ")" + kSameIdHint;
  };
  bool joined = waitUntil(missing, describeTimeout, error);
  // Every rank has the segment mapped, or the join failed: the name is no
  // longer needed.
  if (rank == 0)
    ::shm_unlink(name.c_str());
  // Rank 0 gives up for all (the others' own messages say less).
  if (!joined && rank == 0)
    fail(error);
  return joined;
}

std::vector<int32_t> mte::runtime::gridGroup(const std::vector<int64_t> &grid,
                                             int32_t rank, uint32_t gridAxes,
                                             size_t &index) {
  auto coordinate = [&](int64_t linear, size_t axis) {
    for (size_t a = grid.size(); --a > axis;)
      linear /= grid[a];
    return linear % grid[axis];
  };
  int64_t worldSize = gridGroupSize(grid, ~0u);
  std::vector<int32_t> members;
  index = 0;
  for (int32_t r = 0; r < worldSize; ++r) {
    bool member = true;
    for (size_t axis = 0; member && axis < grid.size(); ++axis)
      member = ((gridAxes >> axis) & 1) ||
               coordinate(r, axis) == coordinate(rank, axis);
    if (!member)
      continue;
    if (r == rank)
      index = members.size();
    members.push_back(r);
  }
  return members;
}

std::string mte::runtime::formatGrid(const std::vector<int64_t> &grid) {
  std::string text;
  for (int64_t extent : grid)
    text += (text.empty() ? "" : "x") + std::to_string(extent);
  return text;
}

int64_t mte::runtime::gridGroupSize(const std::vector<int64_t> &grid,
                                    uint32_t gridAxes) {
  int64_t size = 1;
  for (size_t axis = 0; axis < grid.size(); ++axis)
    if ((gridAxes >> axis) & 1)
      size *= grid[axis];
  return size;
}

char *HostCommunicator::slot(int32_t of) const {
  return slots + static_cast<size_t>(of) * slotBytes;
}

void HostCommunicator::notify() {
  header->event.fetch_add(1);
  if (header->waiters.load())
    futexWakeAll(header->event);
}

void HostCommunicator::fail(const std::string &reason) {
  if (!header)
    return;
  int32_t none = 0;
  if (!header->failureClaim.compare_exchange_strong(none, rank + 1))
    return; // the first failure is the one every rank reports
  std::snprintf(header->failure, sizeof(header->failure), "%s", reason.c_str());
  header->failedRank.store(rank + 1, std::memory_order_release);
  notify();
}

bool HostCommunicator::checkFailed(std::string &error) const {
  if (!header)
    return false;
  int32_t failed = header->failedRank.load(std::memory_order_acquire);
  if (!failed)
    return false;
  error = failed - 1 == rank ? std::string("the communicator failed before: ") +
                                   header->failure
                             : "rank " + std::to_string(failed - 1) +
                                   " failed: " + header->failure;
  return true;
}

bool HostCommunicator::checkAlive(int32_t of, std::string &error) const {
  int32_t pid = controls[of].pid.load();
  if (pid == 0)
    return true;
  std::string who =
      "rank " + std::to_string(of) + " (process " + std::to_string(pid) + ")";
  if (controls[of].closed.load())
    error = who + " closed the model";
  else if (processExited(pid))
    error = who + " exited";
  else
    return true;
  return false;
}

template <typename Pending, typename Describe>
bool HostCommunicator::waitUntil(Pending pending, Describe describeTimeout,
                                 std::string &error) {
  using Clock = std::chrono::steady_clock;
  auto deadline =
      Clock::now() + std::chrono::duration_cast<Clock::duration>(
                         std::chrono::duration<double>(timeoutSeconds));
  for (unsigned attempt = 0;; ++attempt) {
    int32_t awaited = pending();
    if (awaited < 0)
      return true;
    if (checkFailed(error))
      return false;
    if (attempt < kSpins) {
      cpuRelax();
      continue;
    }
    if (attempt < kSpins + kYields) {
      ::sched_yield();
      continue;
    }
    if (!checkAlive(awaited, error))
      return false;
    if (Clock::now() >= deadline) {
      error = describeTimeout(awaited);
      return false;
    }
    // Announced before reading the event, so that a rank changing what we
    // wait for after the read either sees us waiting or changes the event.
    header->waiters.fetch_add(1);
    uint32_t seen = header->event.load();
    if (pending() >= 0 && !header->failedRank.load())
      futexWait(header->event, seen, kSleepNanos);
    header->waiters.fetch_sub(1);
  }
}

/// "rank 3 (process 1234) did not <what> within 30 s (MTE_COMM_TIMEOUT)".
static std::string describeLate(int32_t of, int32_t pid, const char *what,
                                double timeoutSeconds) {
  return "rank " + std::to_string(of) + " (process " + std::to_string(pid) +
         ") did not " + what + " within " + formatSeconds(timeoutSeconds) +
         " (MTE_COMM_TIMEOUT)";
}

bool HostCommunicator::awaitSlot(std::string &error) {
  auto reading = [&] {
    for (const Reader &reader : lastReaders)
      if (reader.rank != rank &&
          counts(reader.rank, reader.channel)
                  .consumed.load(std::memory_order_acquire) < reader.step)
        return reader.rank;
    return -1;
  };
  return waitUntil(
      reading,
      [&](int32_t of) {
        return describeLate(of, controls[of].pid.load(),
                            "finish reading this rank's last collective",
                            timeoutSeconds);
      },
      error);
}

template <typename Stage, typename Combine>
bool HostCommunicator::runStep(const std::vector<int32_t> &members,
                               uint32_t channel, const CollectiveCall &call,
                               int32_t root, Stage stage, Combine combine,
                               std::string &error) {
  uint64_t step = ++steps[channel];
  bool stages = root < 0 || members[root] == rank;
  if (stages) {
    // The slot's last readers must be done with it before it is written.
    if (!awaitSlot(error))
      return false;
    stage(slot(rank));
    controls[rank].call = call;
    counts(rank, channel).posted.store(step, std::memory_order_release);
    notify();
  }
  auto staging = [&](size_t k) { return root < 0 || int32_t(k) == root; };
  auto posting = [&] {
    for (size_t k = 0; k < members.size(); ++k)
      if (staging(k) && counts(members[k], channel)
                                .posted.load(std::memory_order_acquire) < step)
        return members[k];
    return -1;
  };
  if (!waitUntil(
          posting,
          [&](int32_t of) {
            return describeLate(of, controls[of].pid.load(),
                                "reach this collective", timeoutSeconds);
          },
          error))
    return false;
  for (size_t k = 0; k < members.size(); ++k)
    if (staging(k) && controls[members[k]].call != call) {
      error = "rank " + std::to_string(members[k]) + " called " +
              controls[members[k]].call.describe() + " where rank " +
              std::to_string(rank) + " called " + call.describe();
      return false;
    }
  combine();
  counts(rank, channel).consumed.store(step, std::memory_order_release);
  notify();
  if (stages) {
    lastReaders.clear();
    for (int32_t member : members)
      if (member != rank)
        lastReaders.push_back({member, channel, step});
  }
  return true;
}

template <typename Stage, typename Combine>
bool HostCommunicator::runSteps(const std::vector<int32_t> &members,
                                const CollectiveCall &call, size_t chunk,
                                Stage stage, Combine combine,
                                std::string &error, int32_t root) {
  size_t total = static_cast<size_t>(call.count);
  for (size_t offset = 0; offset < total; offset += chunk) {
    size_t count = std::min(chunk, total - offset);
    if (!runStep(
            members, call.gridAxes, call, root,
            [&](char *mine) { stage(mine, offset, count); },
            [&] { combine(offset, count); }, error)) {
      fail(error);
      return false;
    }
  }
  return true;
}

bool HostCommunicator::send(const void *send, const CollectiveCall &call,
                            std::string &error) {
  if (checkFailed(error))
    return false;
  size_t index;
  std::vector<int32_t> members = gridGroup(grid, rank, call.gridAxes, index);
  int32_t to = members[static_cast<size_t>(call.op)];
  uint32_t masks = 1u << grid.size();
  uint32_t channel = masks + static_cast<uint32_t>(to);
  size_t elementSize = lookupDType(call.dtype)->size;
  size_t chunk = slotBytes / elementSize;
  size_t total = static_cast<size_t>(call.count);
  const char *in = static_cast<const char *>(send);
  for (size_t offset = 0; offset < total; offset += chunk) {
    size_t count = std::min(chunk, total - offset);
    uint64_t step = ++steps[channel];
    if (!awaitSlot(error)) {
      fail(error);
      return false;
    }
    std::memcpy(slot(rank), in + offset * elementSize, count * elementSize);
    controls[rank].call = call;
    counts(rank, channel).posted.store(step, std::memory_order_release);
    notify();
    // The receiver counts what it took from this rank on its own channel.
    lastReaders = {{to, masks + static_cast<uint32_t>(rank), step}};
  }
  return true;
}

bool HostCommunicator::receive(void *recv, const CollectiveCall &call,
                               int32_t source, std::string &error) {
  if (checkFailed(error))
    return false;
  size_t index;
  std::vector<int32_t> members = gridGroup(grid, rank, call.gridAxes, index);
  int32_t from = members[static_cast<size_t>(source)];
  uint32_t masks = 1u << grid.size();
  uint32_t channel = masks + static_cast<uint32_t>(from);
  size_t elementSize = lookupDType(call.dtype)->size;
  size_t chunk = slotBytes / elementSize;
  size_t total = static_cast<size_t>(call.count);
  char *out = static_cast<char *>(recv);
  for (size_t offset = 0; offset < total; offset += chunk) {
    size_t count = std::min(chunk, total - offset);
    uint64_t step = ++steps[channel];
    auto sent = [&] {
      return counts(from, masks + static_cast<uint32_t>(rank))
                         .posted.load(std::memory_order_acquire) < step
                 ? from
                 : -1;
    };
    if (!waitUntil(
            sent,
            [&](int32_t of) {
              return describeLate(of, controls[of].pid.load(),
                                  "send what this rank receives",
                                  timeoutSeconds);
            },
            error)) {
      fail(error);
      return false;
    }
    if (controls[from].call != call) {
      error = "rank " + std::to_string(from) + " called " +
              controls[from].call.describe() + " where rank " +
              std::to_string(rank) + " expects " + call.describe();
      fail(error);
      return false;
    }
    std::memcpy(out + offset * elementSize, slot(from), count * elementSize);
    counts(rank, channel).consumed.store(step, std::memory_order_release);
    notify();
  }
  return true;
}

float *HostCommunicator::scratchFor(int32_t dtype, size_t count) {
  if ((dtype == MTE_DTYPE_F16 || dtype == MTE_DTYPE_BF16) &&
      scratch.size() < count)
    scratch.resize(count);
  return scratch.data();
}

bool HostCommunicator::run(const void *send, void *recv,
                           const CollectiveCall &call, std::string &error) {
  if (checkFailed(error))
    return false;
  Operands operands;
  operands.in = static_cast<const char *>(send);
  operands.out = static_cast<char *>(recv);
  operands.members = gridGroup(grid, rank, call.gridAxes, operands.index);
  operands.elementSize = lookupDType(call.dtype)->size;
  switch (call.kind) {
  case CollectiveCall::AllReduce:
    return allReduce(operands, call, error);
  case CollectiveCall::AllGather:
    return allGather(operands, call, error);
  case CollectiveCall::Broadcast:
    return broadcast(operands, call, error);
  default:
    // A group of one reduces its own part, as an all-reduce.
    return operands.members.size() == 1 ? allReduce(operands, call, error)
                                        : reduceScatter(operands, call, error);
  }
}

bool HostCommunicator::allReduce(const Operands &operands,
                                 const CollectiveCall &call,
                                 std::string &error) {
  const std::vector<int32_t> &members = operands.members;
  size_t elementSize = operands.elementSize;
  std::vector<const void *> inputs(members.size());
  auto reduceInto = [&](size_t offset, size_t count) {
    reduceElements(call.dtype, call.op, inputs.data(), inputs.size(), count,
                   operands.out + offset * elementSize,
                   scratchFor(call.dtype, count));
  };
  if (members.size() == 1) {
    // Its own buffer, a bounded scratch at a time.
    size_t total = static_cast<size_t>(call.count);
    for (size_t offset = 0; offset < total; offset += kLocalChunkElements) {
      inputs[0] = operands.in + offset * elementSize;
      reduceInto(offset, std::min(kLocalChunkElements, total - offset));
    }
    return true;
  }
  auto stage = [&](char *mine, size_t offset, size_t count) {
    std::memcpy(mine, operands.in + offset * elementSize, count * elementSize);
  };
  auto combine = [&](size_t offset, size_t count) {
    for (size_t k = 0; k < members.size(); ++k)
      inputs[k] = slot(members[k]);
    reduceInto(offset, count);
  };
  return runSteps(members, call, slotBytes / elementSize, stage, combine,
                  error);
}

bool HostCommunicator::allGather(const Operands &operands,
                                 const CollectiveCall &call,
                                 std::string &error) {
  const std::vector<int32_t> &members = operands.members;
  size_t elementSize = operands.elementSize;
  size_t partBytes = static_cast<size_t>(call.count) * elementSize;
  if (members.size() == 1) {
    std::memmove(operands.out, operands.in, partBytes);
    return true;
  }
  auto stage = [&](char *mine, size_t offset, size_t count) {
    std::memcpy(mine, operands.in + offset * elementSize, count * elementSize);
  };
  auto combine = [&](size_t offset, size_t count) {
    for (size_t k = 0; k < members.size(); ++k)
      std::memcpy(operands.out + k * partBytes + offset * elementSize,
                  slot(members[k]), count * elementSize);
  };
  return runSteps(members, call, slotBytes / elementSize, stage, combine,
                  error);
}

bool HostCommunicator::reduceScatter(const Operands &operands,
                                     const CollectiveCall &call,
                                     std::string &error) {
  const std::vector<int32_t> &members = operands.members;
  size_t elementSize = operands.elementSize;
  size_t partBytes = static_cast<size_t>(call.count) * elementSize;
  std::vector<const void *> inputs(members.size());
  // A step stages the same range of every member's part, one after
  // another; this rank reduces its own part's range of every slot.
  auto stage = [&](char *mine, size_t offset, size_t count) {
    for (size_t part = 0; part < members.size(); ++part)
      std::memcpy(mine + part * count * elementSize,
                  operands.in + part * partBytes + offset * elementSize,
                  count * elementSize);
  };
  auto combine = [&](size_t offset, size_t count) {
    for (size_t k = 0; k < members.size(); ++k)
      inputs[k] = slot(members[k]) + operands.index * count * elementSize;
    reduceElements(call.dtype, call.op, inputs.data(), inputs.size(), count,
                   operands.out + offset * elementSize,
                   scratchFor(call.dtype, count));
  };
  return runSteps(members, call, slotBytes / (members.size() * elementSize),
                  stage, combine, error);
}

bool HostCommunicator::broadcast(const Operands &operands,
                                 const CollectiveCall &call,
                                 std::string &error) {
  const std::vector<int32_t> &members = operands.members;
  size_t elementSize = operands.elementSize;
  size_t bytes = static_cast<size_t>(call.count) * elementSize;
  if (members.size() == 1) {
    std::memmove(operands.out, operands.in, bytes);
    return true;
  }
  int32_t root = call.op;
  auto stage = [&](char *mine, size_t offset, size_t count) {
    std::memcpy(mine, operands.in + offset * elementSize, count * elementSize);
  };
  auto combine = [&](size_t offset, size_t count) {
    std::memcpy(operands.out + offset * elementSize,
                slot(members[static_cast<size_t>(root)]), count * elementSize);
  };
  return runSteps(members, call, slotBytes / elementSize, stage, combine,
                  error, root);
}
