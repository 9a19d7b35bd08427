// kmaha core: thread control and exception-safe parallel loops.
//
// Every threaded loop of the core goes through the helpers here, which take
// the thread count and the interrupt callback from the call's context
// (context.hpp; R resolves the count once per user call: argument, option
// kmaha.num_threads, environment variable KMAHA_NUM_THREADS, default 2).
// They give all loops one policy:
//  * work is cut into tasks (blocks of rows) that are independent of the
//    thread count, so every output entry is computed by one thread in a fixed
//    order and results do not depend on how many threads ran;
//  * the interrupt callback is polled on the calling thread only, between
//    waves of tasks, never inside a parallel region;
//  * an exception thrown by a task on any thread stops the remaining tasks
//    and is rethrown on the calling thread after the parallel region (an
//    exception must never leave an OpenMP region; parallel_errors of
//    common.hpp).
// thread_scope sets the OpenMP thread count of the calling thread, which the
// parallel products of Eigen and the elementwise kernels of Armadillo follow,
// for the duration of a core call.
#ifndef KMAHA_PARALLEL_HPP
#define KMAHA_PARALLEL_HPP

#include <algorithm>
#include <cstddef>
#include <exception>
#include <vector>
#include "common.hpp"
#include "context.hpp"
#ifdef _OPENMP
#include <omp.h>
#endif

namespace kmaha {

// Threads usable for a request (at least 1; 1 without OpenMP).
inline int usable_threads(int requested) {
#ifdef _OPENMP
  return std::max(1, requested);
#else
  (void)requested;
  return 1;
#endif
}

// Sets the calling thread's OpenMP thread count for the lifetime of the
// object and restores the previous value after.
class thread_scope {
 public:
  explicit thread_scope(int num_threads) {
#ifdef _OPENMP
    old_ = omp_get_max_threads();
    omp_set_num_threads(usable_threads(num_threads));
#else
    (void)num_threads;
#endif
  }
  ~thread_scope() {
#ifdef _OPENMP
    omp_set_num_threads(old_);
#endif
  }
  thread_scope(const thread_scope&) = delete;
  thread_scope& operator=(const thread_scope&) = delete;

 private:
  int old_ = 1;
};

// Index of the calling thread within the current parallel region (0 outside).
inline int thread_index() {
#ifdef _OPENMP
  return omp_get_thread_num();
#else
  return 0;
#endif
}

// One scratch object per thread of a parallel_for() on num_threads threads.
// With one thread the loop runs on the calling thread, which may itself be
// thread t > 0 of an enclosing parallel region (a task of an outer
// parallel_for running a single-threaded inner loop, as the kernel screen
// does): the one object is then the calling thread's, whatever its index.
template <class T>
class per_thread {
 public:
  explicit per_thread(int num_threads)
      : v_(static_cast<std::size_t>(usable_threads(num_threads))) {}
  T& local() {
    return v_.size() == 1 ? v_[0] : v_[static_cast<std::size_t>(thread_index())];
  }

 private:
  std::vector<T> v_;
};

namespace detail {

// Runs body(task, slot) for task in [t0, t1) on up to nt threads; slot is
// task - t0 (a per-wave buffer index).  Exceptions are captured and rethrown
// on the calling thread.
template <class Body>
inline void run_wave(std::size_t t0, std::size_t t1, int nt, Body& body) {
  const std::ptrdiff_t len = static_cast<std::ptrdiff_t>(t1 - t0);
  if (nt <= 1 || len <= 1) {
    for (std::size_t t = t0; t < t1; ++t) body(t, t - t0);
    return;
  }
  parallel_errors errs;
#ifdef _OPENMP
#pragma omp parallel for num_threads(nt) schedule(dynamic, 1)
#endif
  for (std::ptrdiff_t s = 0; s < len; ++s) {
    errs.run([&] { body(t0 + static_cast<std::size_t>(s), static_cast<std::size_t>(s)); });
  }
  errs.rethrow();
}

}  // namespace detail

// body(task, slot) for task = 0 .. n_tasks - 1 on up to ctx.threads threads
// (dynamic schedule).  Tasks run in waves of `wave` tasks (0: 2 per
// thread); ctx.interrupt is polled on the calling thread after each wave.
// slot = task mod wave indexes per-wave scratch when a caller needs it.
template <class Body>
inline void parallel_for(std::size_t n_tasks, const context& ctx, Body body,
                         std::size_t wave = 0) {
  const int nt = static_cast<int>(std::min<std::size_t>(
      static_cast<std::size_t>(usable_threads(ctx.threads)),
      std::max<std::size_t>(n_tasks, 1)));
  if (wave == 0) wave = 2 * static_cast<std::size_t>(nt);
  // Inside the parallel region Eigen's and Armadillo's own parallel code
  // runs serially; a wave run on the calling thread may use ctx.threads.
  const thread_scope scope(ctx.threads);
  for (std::size_t t0 = 0; t0 < n_tasks; t0 += wave) {
    const std::size_t t1 = std::min(n_tasks, t0 + wave);
    detail::run_wave(t0, t1, nt, body);
    check_interrupt(ctx.interrupt);
  }
}

// A reduction whose result does not depend on the thread count: tasks run in
// waves of ctx.threads, compute(task, buf) fills buffer buf (one per task of
// the wave), and merge(buf) is then called on the calling thread for the
// wave's tasks in task order.  `make` creates a buffer.
template <class Buffer, class Make, class Compute, class Merge>
inline void ordered_reduce(std::size_t n_tasks, const context& ctx, Make make,
                           Compute compute, Merge merge) {
  const std::size_t nt = static_cast<std::size_t>(usable_threads(ctx.threads));
  const std::size_t wave = std::min<std::size_t>(nt, std::max<std::size_t>(n_tasks, 1));
  std::vector<Buffer> bufs;
  bufs.reserve(wave);
  for (std::size_t i = 0; i < wave; ++i) bufs.push_back(make());
  auto body = [&](std::size_t task, std::size_t slot) { compute(task, bufs[slot]); };
  const thread_scope scope(ctx.threads);
  for (std::size_t t0 = 0; t0 < n_tasks; t0 += wave) {
    const std::size_t t1 = std::min(n_tasks, t0 + wave);
    detail::run_wave(t0, t1, static_cast<int>(wave), body);
    for (std::size_t t = t0; t < t1; ++t) merge(bufs[t - t0]);
    check_interrupt(ctx.interrupt);
  }
}

// Tasks dealt to `slots` accumulators, for reductions that sum into one
// buffer per slot and combine the slots in slot order afterwards: slot s
// runs tasks s, s + S, s + 2S, ... (S = slots) in that order, on one thread
// at a time, so body(task, slot) may accumulate into the slot's buffer
// without synchronisation (scratch that is not accumulated may be per
// thread, per_thread<T>).  The slots are handed to up to ctx.threads threads
// as they come free (dynamic schedule: more slots than threads balance the
// load on a busy machine).  The sums then depend on the number of slots
// only, never on the scheduling, so a run is reproducible; with one slot
// they are the plain sums in task order.  (ordered_reduce() gives results
// independent of the thread count too, but merges every task on the calling
// thread.)  Tasks run in waves of `wave` tasks (0: 2 per slot); ctx.interrupt
// is polled on the calling thread after each wave.
template <class Body>
inline void dealt_for(std::size_t n_tasks, std::size_t slots, const context& ctx,
                      Body body, std::size_t wave = 0) {
  if (slots == 0) slots = 1;
  if (wave == 0) wave = 2 * slots;
  const int nt = static_cast<int>(std::min<std::size_t>(
      static_cast<std::size_t>(usable_threads(ctx.threads)), slots));
  const thread_scope scope(ctx.threads);
  for (std::size_t t0 = 0; t0 < n_tasks; t0 += wave) {
    const std::size_t t1 = std::min(n_tasks, t0 + wave);
    // Slot s's first task in the wave: the least t >= t0 with t = s mod S.
    auto run_slot = [&](std::size_t s) {
      for (std::size_t t = t0 + (s + slots - t0 % slots) % slots; t < t1; t += slots)
        body(t, s);
    };
    if (nt <= 1) {
      for (std::size_t s = 0; s < slots; ++s) run_slot(s);
    } else {
      parallel_errors errs;
      const std::ptrdiff_t ns = static_cast<std::ptrdiff_t>(slots);
#ifdef _OPENMP
#pragma omp parallel for num_threads(nt) schedule(dynamic, 1)
#endif
      for (std::ptrdiff_t s = 0; s < ns; ++s) {
        errs.run([&] { run_slot(static_cast<std::size_t>(s)); });
      }
      errs.rethrow();
    }
    check_interrupt(ctx.interrupt);
  }
}

// Row blocks [start, end) of n rows, each of at most `block` rows.
struct row_blocks {
  arma::uword n, block;
  row_blocks(arma::uword n_, arma::uword block_)
      : n(n_), block(std::max<arma::uword>(1, block_)) {}
  std::size_t count() const { return n == 0 ? 0 : (n + block - 1) / block; }
  arma::uword start(std::size_t b) const { return static_cast<arma::uword>(b) * block; }
  arma::uword end(std::size_t b) const { return std::min(n, start(b) + block); }
};

}  // namespace kmaha

#endif  // KMAHA_PARALLEL_HPP
