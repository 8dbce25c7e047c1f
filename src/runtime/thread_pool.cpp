#include "runtime/thread_pool.h"

#include <linux/futex.h>
#include <sched.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <climits>

#include "autofuse/error.h"

namespace autofuse::runtime {

namespace {

// How long a thread spins before sleeping: long enough to cover the gap
// between two kernels of one run and between back-to-back runs (a few us),
// short enough not to burn a core when the pool goes idle.
constexpr auto kSpinTime = std::chrono::microseconds(100);
constexpr int kParticipantBits = 16;
constexpr uint64_t kParticipantMask = (uint64_t{1} << kParticipantBits) - 1;
constexpr uint64_t kSeqMask = 0xffffffffull;
constexpr uint64_t kClosed = uint64_t{1} << 31;
constexpr uint64_t kJoinedMask = kClosed - 1;

static_assert(sizeof(std::atomic<uint32_t>) == sizeof(uint32_t) &&
                  std::atomic<uint32_t>::is_always_lock_free,
              "futex words must be plain 32-bit integers");

uint32_t* futex_addr(std::atomic<uint32_t>& word) {
  return reinterpret_cast<uint32_t*>(&word);
}
void futex_wait(std::atomic<uint32_t>& word, uint32_t expected) {
  syscall(SYS_futex, futex_addr(word), FUTEX_WAIT_PRIVATE, expected, nullptr, nullptr, 0);
}
void futex_wake(std::atomic<uint32_t>& word, int count) {
  syscall(SYS_futex, futex_addr(word), FUTEX_WAKE_PRIVATE, count, nullptr, nullptr, 0);
}

inline void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  asm volatile("yield");
#endif
}

/// Spins until pred() holds or kSpinTime passes; true if it holds. Each
/// round of pauses ends in sched_yield(): on a 2-vCPU VM (AMD Zen 3, session
/// 14) a pure pause loop left small 2-thread runs bimodal per process
/// (batchnorm_stats N=64: 4.7-13 us, serial 5.8) and with the yield they ran
/// 3.8-4.1 us in each of 8 processes (rmsnorm f32 B=1,S=64: 6.6 -> 5.5 us,
/// its unfused run 15.5 -> 11.5). With nothing else to run, the yield
/// returns at once.
template <typename Pred>
bool spin_until(Pred pred) {
  const auto deadline = std::chrono::steady_clock::now() + kSpinTime;
  for (;;) {
    for (int i = 0; i < 64; ++i) {
      if (pred()) return true;
      cpu_relax();
    }
    if (std::chrono::steady_clock::now() >= deadline) return pred();
    sched_yield();
  }
}

}  // namespace

ThreadPool::ThreadPool(int num_threads) {
  AF_CHECK(num_threads >= 1 && static_cast<uint64_t>(num_threads) <= kParticipantMask,
           "thread pool of {} threads", num_threads);
  workers_.reserve(static_cast<size_t>(num_threads - 1));
  for (int i = 1; i < num_threads; ++i)
    workers_.emplace_back([this, i] { worker_main(i); });
}

std::shared_ptr<ThreadPool> ThreadPool::shared(int num_threads) {
  static std::mutex mutex;
  static std::vector<std::pair<int, std::weak_ptr<ThreadPool>>> pools;
  std::lock_guard<std::mutex> lock(mutex);
  for (auto& [threads, pool] : pools) {
    if (threads != num_threads) continue;
    if (std::shared_ptr<ThreadPool> alive = pool.lock()) return alive;
    auto made = std::make_shared<ThreadPool>(num_threads);
    pool = made;
    return made;
  }
  auto made = std::make_shared<ThreadPool>(num_threads);
  pools.emplace_back(num_threads, made);
  return made;
}

ThreadPool::~ThreadPool() {
  stopping_.store(true, std::memory_order_seq_cst);
  job_word_.store((++seq_) << kParticipantBits, std::memory_order_seq_cst);
  wake_.fetch_add(1, std::memory_order_seq_cst);
  futex_wake(wake_, INT_MAX);
  for (std::thread& t : workers_)
    t.join();
}

void ThreadPool::launch(int64_t n_blocks, BlockFn fn, void* ctx) {
  bool expected = false;
  if (workers_.empty() ||
      !busy_.compare_exchange_strong(expected, true, std::memory_order_acquire)) {
    // No workers, or a nested / concurrent launch: run here, in order.
    for (int64_t b = 0; b < n_blocks; ++b)
      fn(ctx, b, 0);
    return;
  }
  launches_.fetch_add(1, std::memory_order_relaxed);
  const auto participants =
      static_cast<uint32_t>(std::min<int64_t>(n_blocks - 1, static_cast<int64_t>(workers_.size())));
  job_fn_ = fn;
  job_ctx_ = ctx;
  job_blocks_ = n_blocks;
  error_ = nullptr;
  next_block_.store(1, std::memory_order_relaxed);  // block 0 is the caller's
  left_.store(0, std::memory_order_relaxed);
  ++seq_;
  // Publishes the job fields to workers that join (their CAS acquires).
  entry_.store((seq_ & kSeqMask) << 32, std::memory_order_release);
  job_word_.store((seq_ << kParticipantBits) | participants, std::memory_order_seq_cst);
  wake_.fetch_add(1, std::memory_order_seq_cst);
  if (sleepers_.load(std::memory_order_seq_cst) > 0) futex_wake(wake_, INT_MAX);

  try {
    fn(ctx, 0, 0);
  } catch (...) {
    record_error();
  }
  run_blocks(0);

  // Close the job, then wait for the workers that joined it: after that no
  // worker reads the job fields, so the next launch may overwrite them.
  const uint64_t closed = entry_.fetch_or(kClosed, std::memory_order_acq_rel);
  const auto joined = static_cast<uint32_t>(closed & kJoinedMask);
  auto all_left = [&] { return left_.load(std::memory_order_acquire) == joined; };
  if (!spin_until(all_left)) {
    caller_waiting_.store(1, std::memory_order_seq_cst);
    for (;;) {
      const uint32_t l = left_.load(std::memory_order_seq_cst);
      if (l == joined) break;
      futex_wait(left_, l);
    }
    caller_waiting_.store(0, std::memory_order_relaxed);
  }
  std::exception_ptr error = error_;
  error_ = nullptr;
  busy_.store(false, std::memory_order_release);
  if (error) std::rethrow_exception(error);
}

bool ThreadPool::try_join(uint64_t seq) {
  uint64_t e = entry_.load(std::memory_order_acquire);
  for (;;) {
    if ((e >> 32) != (seq & kSeqMask) || (e & kClosed) != 0) return false;
    if (entry_.compare_exchange_weak(e, e + 1, std::memory_order_acq_rel)) return true;
  }
}

void ThreadPool::run_blocks(int thread) {
  for (;;) {
    const int64_t b = next_block_.fetch_add(1, std::memory_order_relaxed);
    if (b >= job_blocks_) return;
    try {
      job_fn_(job_ctx_, b, thread);
    } catch (...) {
      record_error();
    }
  }
}

void ThreadPool::record_error() {
  std::lock_guard<std::mutex> lock(error_mutex_);
  if (!error_) error_ = std::current_exception();
  next_block_.store(job_blocks_, std::memory_order_relaxed);  // skip the rest
}

uint64_t ThreadPool::wait_for_job(uint64_t seen) {
  uint64_t word = 0;
  auto changed = [&] {
    word = job_word_.load(std::memory_order_acquire);
    return (word >> kParticipantBits) != seen;
  };
  if (spin_until(changed)) return word;
  sleepers_.fetch_add(1, std::memory_order_seq_cst);
  for (;;) {
    // Read the futex word before the job word: a launch that lands between
    // the two changes wake_, so futex_wait returns at once.
    const uint32_t w = wake_.load(std::memory_order_seq_cst);
    word = job_word_.load(std::memory_order_seq_cst);
    if ((word >> kParticipantBits) != seen) break;
    futex_wait(wake_, w);
  }
  sleepers_.fetch_sub(1, std::memory_order_relaxed);
  return word;
}

void ThreadPool::worker_main(int index) {
  uint64_t seen = 0;
  for (;;) {
    const uint64_t word = wait_for_job(seen);
    if (stopping_.load(std::memory_order_acquire)) return;
    seen = word >> kParticipantBits;
    const auto participants = static_cast<uint32_t>(word & kParticipantMask);
    if (static_cast<uint32_t>(index) > participants || !try_join(seen)) continue;
    run_blocks(index);
    left_.fetch_add(1, std::memory_order_seq_cst);
    if (caller_waiting_.load(std::memory_order_seq_cst) != 0) futex_wake(left_, 1);
  }
}

}  // namespace autofuse::runtime
