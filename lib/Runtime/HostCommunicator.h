//===- HostCommunicator.h - collectives between host processes --*- C++ -*-===//
//
// Internal to libmte_runtime. The ranks of a sharded host model are
// processes on one machine, one per rank, that meet in a POSIX shared
// memory segment named after their communicator id: rank 0 creates it, the
// others attach, and opening the model returns once every rank has joined
// (the name is removed then, so a crash leaves nothing behind). Each rank
// owns a staging slot there; a collective moves its data through the slots
// in steps of at most a slot, every rank of the group reading all of the
// group's slots, so reductions run in rank order and give every rank the
// same bits. A send stages its data in the sender's slot for the receiver
// alone, a broadcast in the root's for its group.
//
// Steps are counted per channel: a group of grid axes (every member of a
// group runs the same sequence of collectives over those axes) or the
// link from one rank to another. The ranks of different pipeline stages
// run different programs, so they meet only on the channels they share.
//
// Waits spin briefly, then sleep on a futex, and give up after the
// communicator's timeout, or as soon as the awaited rank's process has
// exited or closed the model, or another rank has failed: the first rank
// that fails marks the communicator failed for all, and every later
// collective of any rank fails with its reason.
//
//===----------------------------------------------------------------------===//

#ifndef MTE_LIB_RUNTIME_HOSTCOMMUNICATOR_H
#define MTE_LIB_RUNTIME_HOSTCOMMUNICATOR_H

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace mte::runtime {

struct CommLimits;

/// What a rank called, which every rank of the group must have called too.
struct CollectiveCall {
  enum Kind : int32_t {
    AllReduce = 1,
    AllGather = 2,
    ReduceScatter = 3,
    Broadcast = 4,
    Send = 5,
  };
  int32_t kind = 0;
  int32_t dtype = 0;
  /// An mte_reduce_op; for Broadcast the root's index in the group, for
  /// Send the receiver's; 0 for AllGather.
  int32_t op = 0;
  uint32_t gridAxes = 0;
  /// count, sendCount or recvCount, as KernelABI.h names them (not
  /// negative once the call is checked).
  int64_t count = 0;

  bool operator==(const CollectiveCall &other) const {
    return kind == other.kind && dtype == other.dtype && op == other.op &&
           gridAxes == other.gridAxes && count == other.count;
  }
  bool operator!=(const CollectiveCall &other) const {
    return !(*this == other);
  }

  /// "mte_comm_all_reduce(12 f32, sum, grid axes 0x1)".
  std::string describe() const;
};

/// The group of `rank` on `grid` for `gridAxes` (axes the grid has): the
/// ranks sharing every grid coordinate but those of the axes, by linear
/// index (a rank's coordinates are its linear index, row-major), and
/// `rank`'s index among them.
std::vector<int32_t> gridGroup(const std::vector<int64_t> &grid, int32_t rank,
                               uint32_t gridAxes, size_t &index);

/// A grid in messages: "2" or "2x2".
std::string formatGrid(const std::vector<int64_t> &grid);

/// The number of ranks in a group of `gridAxes` on `grid`.
int64_t gridGroupSize(const std::vector<int64_t> &grid, uint32_t gridAxes);

class HostCommunicator {
public:
  /// The most ranks one communicator holds.
  static constexpr int64_t kMaxRanks = 1024;

  /// Joins communicator `commId` as `rank` of the ranks of `grid` (their
  /// number is its product), waiting for all of them; null with the reason
  /// in `error`. A grid of one rank needs no shared memory.
  static std::unique_ptr<HostCommunicator>
  join(const std::string &commId, int32_t rank,
       const std::vector<int64_t> &grid, const CommLimits &limits,
       std::string &error);

  HostCommunicator(const HostCommunicator &) = delete;
  HostCommunicator &operator=(const HostCommunicator &) = delete;
  /// Leaves the communicator: ranks still waiting for this one fail.
  ~HostCommunicator();

  /// Runs `call`, a collective of KernelABI.h, over host buffers among the
  /// ranks of the group of `call.gridAxes` (the axes exist: the caller
  /// checks them, the dtype, the op and the buffers). False with the reason
  /// in `error`; the communicator has then failed for every rank.
  bool run(const void *send, void *recv, const CollectiveCall &call,
           std::string &error);
  /// Sends `call.count` elements of `send` to the rank of index `call.op`
  /// in this rank's group of `call.gridAxes` (a Send call), or receives them
  /// into `recv` from the rank of index `source` (the sender's call, which
  /// must match). A send returns once its last part is staged; the next
  /// use of this rank's slot waits for the receiver.
  bool send(const void *send, const CollectiveCall &call, std::string &error);
  bool receive(void *recv, const CollectiveCall &call, int32_t source,
               std::string &error);

  /// Marks the communicator failed for every rank, for `reason`.
  void fail(const std::string &reason);

private:
  struct Header;
  struct RankControl;
  struct ChannelCounts;

  HostCommunicator(const std::string &commId, int32_t rank,
                   const std::vector<int64_t> &grid, double timeoutSeconds);

  /// The bytes of a segment for `worldSize` ranks of `slotBytes` each on a
  /// grid of `numAxes` axes.
  static size_t segmentBytes(int32_t worldSize, size_t numAxes,
                             size_t slotBytes);
  /// The channels of a rank: one per set of grid axes, then one per rank
  /// it sends to or receives from.
  uint32_t numChannels() const;
  /// `of`'s counts on `channel`.
  ChannelCounts &counts(int32_t of, uint32_t channel) const;

  /// Rank 0: creates the segment, of `slotBytes` per rank.
  bool create(size_t slotBytes, std::string &error);
  /// The other ranks: attaches to the segment rank 0 created.
  bool attach(std::string &error);
  /// Maps `bytes` of `fd`; false with the reason.
  bool map(int fd, size_t bytes, std::string &error);
  void unmap();
  /// Waits until every rank has joined; rank 0 then removes the name.
  bool awaitJoined(std::string &error);

  /// What a collective works on: the buffers, the group and this rank's
  /// index in it, and the size of an element.
  struct Operands {
    const char *in;
    char *out;
    std::vector<int32_t> members;
    size_t index;
    size_t elementSize;
  };
  bool allReduce(const Operands &operands, const CollectiveCall &call,
                 std::string &error);
  bool allGather(const Operands &operands, const CollectiveCall &call,
                 std::string &error);
  bool reduceScatter(const Operands &operands, const CollectiveCall &call,
                     std::string &error);
  bool broadcast(const Operands &operands, const CollectiveCall &call,
                 std::string &error);

  /// Waits until `pending` returns -1 rather than a rank still awaited;
  /// `describeTimeout(rank)` says what the rank did not do in time.
  template <typename Pending, typename Describe>
  bool waitUntil(Pending pending, Describe describeTimeout, std::string &error);
  /// Whether a rank (this one included) has marked the communicator
  /// failed; sets `error` to its reason then.
  bool checkFailed(std::string &error) const;
  /// False, with the reason in `error`, when `rank`'s process has exited
  /// or closed the model.
  bool checkAlive(int32_t rank, std::string &error) const;
  /// Wakes the ranks waiting in waitUntil.
  void notify();

  /// A reader of this rank's slot: the rank, its channel, and the step of
  /// that channel it must have consumed before the slot is written again.
  struct Reader {
    int32_t rank;
    uint32_t channel;
    uint64_t step;
  };
  /// Waits until the readers of this rank's slot are done with it.
  bool awaitSlot(std::string &error);
  /// One step of a collective among `members` on channel `channel`: waits
  /// until this rank's slot is free, then `stage` fills it; after every
  /// member staged its part of the same call (or, with `root` >= 0, the
  /// member of that index alone stages and the others wait for it),
  /// `combine` reads the members' slots (in `members` order).
  template <typename Stage, typename Combine>
  bool runStep(const std::vector<int32_t> &members, uint32_t channel,
               const CollectiveCall &call, int32_t root, Stage stage,
               Combine combine, std::string &error);
  /// A collective among `members` in steps of at most `chunk` elements:
  /// `stage(slot, offset, count)` fills this rank's slot with elements
  /// [offset, offset + count), and `combine(offset, count)` reads the
  /// members' slots. Fails the communicator when a step fails.
  template <typename Stage, typename Combine>
  bool runSteps(const std::vector<int32_t> &members, const CollectiveCall &call,
                size_t chunk, Stage stage, Combine combine, std::string &error,
                int32_t root = -1);
  /// The slot of `rank`.
  char *slot(int32_t rank) const;
  /// The f32 scratch of a reduction of `count` elements of `dtype` (f16 and
  /// bf16 accumulate there).
  float *scratchFor(int32_t dtype, size_t count);

  std::string commId;
  int32_t rank;
  std::vector<int64_t> grid;
  int32_t worldSize;
  double timeoutSeconds;
  /// The segment's name, and where it is mapped (null for one rank).
  std::string name;
  void *mapping = nullptr;
  size_t mappedBytes = 0;
  Header *header = nullptr;
  RankControl *controls = nullptr;
  ChannelCounts *channelCounts = nullptr;
  char *slots = nullptr;
  size_t slotBytes = 0;
  /// The steps this rank has taken on each channel, and the readers of its
  /// slot's last content.
  std::vector<uint64_t> steps;
  std::vector<Reader> lastReaders;
  /// f32 accumulators of f16 and bf16 reductions.
  std::vector<float> scratch;
};

} // namespace mte::runtime

#endif // MTE_LIB_RUNTIME_HOSTCOMMUNICATOR_H
