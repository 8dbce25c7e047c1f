// ThreadPool: block coverage, the caller's part, nested and concurrent
// launches, exceptions, and a stress run.
#include "runtime/thread_pool.h"

#include <atomic>
#include <memory>
#include <set>
#include <stdexcept>
#include <thread>
#include <vector>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "runtime/machine.h"

namespace autofuse::runtime {
// File-local helpers and tests, in a namespace named after the file (not an
// anonymous one): the unity build compiles several test files as one unit.
namespace thread_pool_test_local {

TEST(ThreadPool, EveryBlockRunsExactlyOnce) {
  ThreadPool pool(4);
  for (int64_t n : {2, 3, 4, 5, 7, 64, 1000}) {
    std::vector<std::atomic<int>> hits(static_cast<size_t>(n));
    pool.parallel_for(n, [&](int64_t b, int thread) {
      ASSERT_GE(thread, 0);
      ASSERT_LT(thread, pool.num_threads());
      hits[static_cast<size_t>(b)].fetch_add(1);
    });
    for (int64_t b = 0; b < n; ++b)
      EXPECT_EQ(hits[static_cast<size_t>(b)].load(), 1) << n << " " << b;
  }
}

TEST(ThreadPool, SharedPoolIsOnePerThreadCountWhileHeld) {
  std::shared_ptr<ThreadPool> a = ThreadPool::shared(3);
  std::shared_ptr<ThreadPool> b = ThreadPool::shared(3);
  std::shared_ptr<ThreadPool> c = ThreadPool::shared(2);
  EXPECT_EQ(a.get(), b.get());
  EXPECT_NE(a.get(), c.get());
  EXPECT_EQ(a->num_threads(), 3);
  EXPECT_EQ(c->num_threads(), 2);
  // Two holders launching at once from two threads: each launch covers its
  // blocks (one of them may run serially on its caller).
  std::vector<std::atomic<int>> hits(2000);
  std::thread other([&] {
    for (int rep = 0; rep < 100; ++rep)
      b->parallel_for(10, [&](int64_t blk, int) { hits[static_cast<size_t>(blk)].fetch_add(1); });
  });
  for (int rep = 0; rep < 100; ++rep)
    a->parallel_for(10,
                    [&](int64_t blk, int) { hits[static_cast<size_t>(1000 + blk)].fetch_add(1); });
  other.join();
  for (int blk = 0; blk < 10; ++blk) {
    EXPECT_EQ(hits[static_cast<size_t>(blk)].load(), 100);
    EXPECT_EQ(hits[static_cast<size_t>(1000 + blk)].load(), 100);
  }
  // Released by every holder: the next caller gets a working fresh pool.
  a.reset();
  b.reset();
  std::shared_ptr<ThreadPool> again = ThreadPool::shared(3);
  std::atomic<int> ran{0};
  again->parallel_for(5, [&](int64_t, int) { ran.fetch_add(1); });
  EXPECT_EQ(ran.load(), 5);
}

TEST(ThreadPool, ZeroBlocksDoNothing) {
  ThreadPool pool(2);
  int calls = 0;
  pool.parallel_for(0, [&](int64_t, int) { ++calls; });
  pool.parallel_for(-3, [&](int64_t, int) { ++calls; });
  EXPECT_EQ(calls, 0);
  EXPECT_EQ(pool.launches(), 0u);
}

TEST(ThreadPool, OneBlockStaysOnTheCaller) {
  ThreadPool pool(4);
  std::thread::id ran_on;
  int thread_index = -1;
  pool.parallel_for(1, [&](int64_t b, int thread) {
    EXPECT_EQ(b, 0);
    ran_on = std::this_thread::get_id();
    thread_index = thread;
  });
  EXPECT_EQ(ran_on, std::this_thread::get_id());
  EXPECT_EQ(thread_index, 0);
  EXPECT_EQ(pool.launches(), 0u);  // the workers were never woken
}

TEST(ThreadPool, CallerRunsBlockZero) {
  ThreadPool pool(3);
  for (int rep = 0; rep < 50; ++rep) {
    std::thread::id block0;
    int block0_thread = -1;
    pool.parallel_for(8, [&](int64_t b, int thread) {
      if (b == 0) {
        block0 = std::this_thread::get_id();
        block0_thread = thread;
      }
    });
    EXPECT_EQ(block0, std::this_thread::get_id());
    EXPECT_EQ(block0_thread, 0);
  }
}

TEST(ThreadPool, ThreadIndicesAreExclusive) {
  // Two blocks running at the same time never share a thread index.
  ThreadPool pool(4);
  std::vector<std::atomic<int>> in_use(4);
  std::atomic<bool> clash{false};
  for (int rep = 0; rep < 200; ++rep) {
    pool.parallel_for(16, [&](int64_t, int thread) {
      if (in_use[static_cast<size_t>(thread)].fetch_add(1) != 0) clash = true;
      std::this_thread::yield();  // widen the window for a clash
      in_use[static_cast<size_t>(thread)].fetch_sub(1);
    });
  }
  EXPECT_FALSE(clash.load());
}

TEST(ThreadPool, SingleThreadPoolRunsInOrder) {
  ThreadPool pool(1);
  EXPECT_EQ(pool.num_threads(), 1);
  std::vector<int64_t> order;
  pool.parallel_for(5, [&](int64_t b, int thread) {
    EXPECT_EQ(thread, 0);
    order.push_back(b);
  });
  EXPECT_EQ(order, (std::vector<int64_t>{0, 1, 2, 3, 4}));
}

TEST(ThreadPool, NestedLaunchRunsSerially) {
  ThreadPool pool(3);
  std::vector<std::atomic<int>> hits(6 * 5);
  pool.parallel_for(6, [&](int64_t outer, int) {
    const auto me = std::this_thread::get_id();
    pool.parallel_for(5, [&](int64_t inner, int) {
      EXPECT_EQ(std::this_thread::get_id(), me);  // inline, no deadlock
      hits[static_cast<size_t>(outer * 5 + inner)].fetch_add(1);
    });
  });
  for (auto& h : hits)
    EXPECT_EQ(h.load(), 1);
}

TEST(ThreadPool, SerialLaunchesBackToBack) {
  ThreadPool pool(2);
  int64_t total = 0;
  for (int rep = 0; rep < 2000; ++rep) {
    std::atomic<int64_t> sum{0};
    pool.parallel_for(rep % 5 + 1, [&](int64_t b, int) { sum.fetch_add(b + 1); });
    const int64_t n = rep % 5 + 1;
    ASSERT_EQ(sum.load(), n * (n + 1) / 2);
    total += sum.load();
  }
  EXPECT_GT(total, 0);
}

TEST(ThreadPool, ConcurrentLaunchersAreSafe) {
  // Launches from several threads at once: one gets the workers, the
  // others run inline; all complete correctly.
  ThreadPool pool(3);
  std::atomic<int64_t> total{0};
  std::vector<std::thread> launchers;
  for (int t = 0; t < 4; ++t) {
    launchers.emplace_back([&] {
      for (int rep = 0; rep < 300; ++rep)
        pool.parallel_for(7, [&](int64_t b, int) { total.fetch_add(b); });
    });
  }
  for (auto& th : launchers)
    th.join();
  EXPECT_EQ(total.load(), 4 * 300 * 21);
}

TEST(ThreadPool, ExceptionsPropagateToTheCaller) {
  ThreadPool pool(3);
  for (int64_t bad : {0, 1, 5}) {
    std::atomic<int> finished{0};
    EXPECT_THROW(pool.parallel_for(8,
                                   [&](int64_t b, int) {
                                     if (b == bad) throw std::runtime_error("block failed");
                                     finished.fetch_add(1);
                                   }),
                 std::runtime_error);
    EXPECT_LE(finished.load(), 7);
  }
  // The pool is still usable.
  std::atomic<int> count{0};
  pool.parallel_for(10, [&](int64_t, int) { count.fetch_add(1); });
  EXPECT_EQ(count.load(), 10);
}

TEST(ThreadPool, WorkersSleepAndWakeUp) {
  // After the spin period the workers sleep on the futex; a new launch
  // must still wake them (checked by a block that waits for another).
  ThreadPool pool(2);
  for (int rep = 0; rep < 3; ++rep) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
    std::atomic<int> started{0};
    std::set<int> threads;
    std::mutex m;
    pool.parallel_for(2, [&](int64_t, int thread) {
      {
        std::lock_guard<std::mutex> lock(m);
        threads.insert(thread);
      }
      started.fetch_add(1);
      // Each block waits for the other: both must run at the same time.
      while (started.load() < 2)
        std::this_thread::yield();
    });
    EXPECT_EQ(threads.size(), 2u);
  }
}

TEST(ThreadPool, Stress) {
  ThreadPool pool(4);
  std::vector<int64_t> data(1 << 16);
  for (int rep = 0; rep < 300; ++rep) {
    const int64_t n_blocks = 1 + rep % 37;
    const int64_t per = static_cast<int64_t>(data.size()) / n_blocks + 1;
    pool.parallel_for(n_blocks, [&](int64_t b, int) {
      const int64_t lo = b * per;
      const int64_t hi = std::min<int64_t>(lo + per, static_cast<int64_t>(data.size()));
      for (int64_t i = lo; i < hi; ++i)
        data[static_cast<size_t>(i)] += i % 7;
    });
  }
  for (size_t i = 0; i < data.size(); ++i)
    ASSERT_EQ(data[i], 300 * static_cast<int64_t>(i % 7));
}

TEST(ThreadPool, DestroyWhileIdleAndRightAfterALaunch) {
  for (int rep = 0; rep < 20; ++rep) {
    ThreadPool pool(3);
    if (rep % 2 == 0) pool.parallel_for(3, [](int64_t, int) {});
  }
}

TEST(Machine, DetectsSensibleValues) {
  af_machine m = detect_machine();
  EXPECT_GE(m.cores, 1);
  EXPECT_GE(m.l1_bytes, 4096);
  EXPECT_GE(m.l2_bytes, m.l1_bytes);
  EXPECT_GE(m.l3_bytes, 0);
  EXPECT_TRUE(m.vector_bytes == 16 || m.vector_bytes == 32 || m.vector_bytes == 64);
  EXPECT_EQ(m.min_block_bytes, kMinBlockBytes);
  const int64_t stream_max = m.vector_bytes >= 64 ? kStreamMaxOpsPerKiB512 : kStreamMaxOpsPerKiB;
  EXPECT_EQ(m.stream_max_ops_per_kib, stream_max);
  EXPECT_EQ(detect_machine(3).cores, 3);
  EXPECT_NE(machine_to_string(m).find("cores="), std::string::npos);
  EXPECT_NE(machine_to_string(m).find(fmt::format("stream_max={}/KiB", stream_max)),
            std::string::npos);
}

}  // namespace thread_pool_test_local
}  // namespace autofuse::runtime
