// A persistent thread pool for SPMD launches: parallel_for(n_blocks, fn)
// runs fn(block, thread) for every block index, the calling thread taking
// part (it runs block 0 first). One block never involves another thread.
// Workers spin briefly after a launch (back-to-back kernels find them
// awake; waking a sleeping thread costs a futex syscall), then sleep on a
// futex. A launch allocates nothing.
#pragma once

#include <atomic>
#include <cstdint>
#include <exception>
#include <memory>
#include <mutex>
#include <thread>
#include <type_traits>
#include <vector>

namespace autofuse::runtime {

class ThreadPool {
 public:
  /// `num_threads` >= 1 counts the caller: num_threads - 1 workers start.
  explicit ThreadPool(int num_threads);
  /// The process's pool of `num_threads` threads, shared by every caller
  /// that asks for that many while one of them holds it. Executables use it:
  /// each with its own workers, two executables run one after the other
  /// (fused and unfused in `autofuse bench`, a model's graphs under
  /// torch.compile) left one's workers spinning on the cores the other's
  /// needed: a 2-block kernel on 2 cores ran as fast as on one.
  static std::shared_ptr<ThreadPool> shared(int num_threads);
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  /// Threads that run blocks at once (workers + the caller).
  int num_threads() const { return static_cast<int>(workers_.size()) + 1; }

  /// Runs fn(int64_t block, int thread) for every block in [0, n_blocks) and
  /// returns when all are done. `thread` is in [0, num_threads()), distinct
  /// among blocks running at the same time (0 is the caller), for per-thread
  /// scratch. Blocks are handed out dynamically. A launch from inside a
  /// block, or while another thread's launch is running, runs its blocks
  /// serially on the calling thread (thread index 0). The first exception a
  /// block throws is rethrown here after every started block has finished;
  /// blocks not yet started are skipped.
  template <typename F>
  void parallel_for(int64_t n_blocks, F&& fn) {
    if (n_blocks <= 0) return;
    if (n_blocks == 1) {
      fn(int64_t{0}, 0);
      return;
    }
    using Fn = std::remove_reference_t<F>;
    launch(
        n_blocks,
        [](void* ctx, int64_t block, int thread) { (*static_cast<Fn*>(ctx))(block, thread); },
        const_cast<void*>(static_cast<const void*>(&fn)));
  }

  /// Launches that used the workers (for tests and stats).
  uint64_t launches() const { return launches_.load(std::memory_order_relaxed); }

 private:
  using BlockFn = void (*)(void* ctx, int64_t block, int thread);

  void launch(int64_t n_blocks, BlockFn fn, void* ctx);
  void worker_main(int index);
  /// Waits until the job word's sequence differs from `seen`; returns it.
  uint64_t wait_for_job(uint64_t seen);
  /// Joins job `seq` unless it was closed or replaced; true if joined.
  bool try_join(uint64_t seq);
  void run_blocks(int thread);
  void record_error();

  std::vector<std::thread> workers_;
  std::atomic<bool> busy_{false};
  std::atomic<bool> stopping_{false};
  std::atomic<uint64_t> launches_{0};

  // The current job. Written by the launcher before it publishes job_word_;
  // read only by that job's participants, which the launcher waits for.
  BlockFn job_fn_ = nullptr;
  void* job_ctx_ = nullptr;
  int64_t job_blocks_ = 0;
  uint64_t seq_ = 0;  // launcher-only

  // (sequence << 16) | participants: workers 1..participants may join.
  alignas(64) std::atomic<uint64_t> job_word_{0};
  std::atomic<uint32_t> wake_{0};      // futex word workers sleep on
  std::atomic<uint32_t> sleepers_{0};  // workers asleep (or about to be)
  alignas(64) std::atomic<int64_t> next_block_{0};
  // (sequence << 32) | closed bit | workers that joined. The caller closes
  // the job once it ran out of blocks and waits only for workers that had
  // joined: a worker the OS has not scheduled yet never delays a launch.
  alignas(64) std::atomic<uint64_t> entry_{0};
  std::atomic<uint32_t> left_{0};  // joined workers that finished (futex word)
  std::atomic<uint32_t> caller_waiting_{0};

  std::mutex error_mutex_;
  std::exception_ptr error_;
};

}  // namespace autofuse::runtime
