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
// same bits.
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
  enum Kind : int32_t { AllReduce = 1, AllGather = 2, ReduceScatter = 3 };
  int32_t kind = 0;
  int32_t dtype = 0;
  int32_t op = 0; // an mte_reduce_op; 0 for AllGather
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

  /// Marks the communicator failed for every rank, for `reason`.
  void fail(const std::string &reason);

private:
  struct Header;
  struct RankControl;

  HostCommunicator(const std::string &commId, int32_t rank,
                   const std::vector<int64_t> &grid, double timeoutSeconds);

  /// The bytes of a segment for `worldSize` ranks of `slotBytes` each.
  static size_t segmentBytes(int32_t worldSize, size_t slotBytes);

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

  /// One step of a collective among `members`: waits until the readers
  /// of this rank's slot in the previous step are done with it, then
  /// `stage` fills the slot; after every member staged its part of the same
  /// call, `combine` reads the members' slots (in `members` order).
  template <typename Stage, typename Combine>
  bool runStep(const std::vector<int32_t> &members, const CollectiveCall &call,
               Stage stage, Combine combine, std::string &error);
  /// A collective among `members` in steps of at most `chunk` elements:
  /// `stage(slot, offset, count)` fills this rank's slot with elements
  /// [offset, offset + count), and `combine(offset, count)` reads the
  /// members' slots. Fails the communicator when a step fails.
  template <typename Stage, typename Combine>
  bool runSteps(const std::vector<int32_t> &members, const CollectiveCall &call,
                size_t chunk, Stage stage, Combine combine, std::string &error);
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
  char *slots = nullptr;
  size_t slotBytes = 0;
  /// The steps this rank has posted, and the ranks that read its slot in
  /// the last one.
  uint64_t step = 0;
  std::vector<int32_t> lastReaders;
  /// f32 accumulators of f16 and bf16 reductions.
  std::vector<float> scratch;
};

} // namespace mte::runtime

#endif // MTE_LIB_RUNTIME_HOSTCOMMUNICATOR_H
