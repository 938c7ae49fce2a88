//! The one way the tools run independent work on several threads.
//!
//! [`par_map`] hands items out one at a time from a shared queue, so a few
//! large items (a config entry with a wide search space, a big piece of a
//! YAML file) do not leave one thread working while the others idle, as a
//! fixed striping of items did. Results come back in item order, so output
//! and the first error reported never depend on the number of threads.

use std::sync::{Mutex, OnceLock};

/// How many threads the parallel parts may use: `SWEEPKIT_THREADS` if set
/// (1 = sequential); else the CPUs the process may run on (at most 4)
/// unless the machine is already saturated (1-minute load average at or
/// above the CPU count), where extra threads only add contention. The
/// output never depends on this.
///
/// Decided once per process, on the first call: the CPU count is read from
/// the calling thread's affinity, which is a single CPU inside a pinned
/// worker (see [`crate::affinity`]).
#[must_use]
pub fn worker_threads() -> usize {
    static THREADS: OnceLock<usize> = OnceLock::new();
    *THREADS.get_or_init(|| {
        if let Some(n) = std::env::var("SWEEPKIT_THREADS")
            .ok()
            .and_then(|v| v.parse::<usize>().ok())
        {
            return n.max(1);
        }
        let cpus = std::thread::available_parallelism().map_or(1, std::num::NonZeroUsize::get);
        let load = std::fs::read_to_string("/proc/loadavg")
            .ok()
            .and_then(|s| {
                s.split_whitespace()
                    .next()
                    .and_then(|l| l.parse::<f64>().ok())
            })
            .unwrap_or(0.0);
        // CPU counts are small: the conversion is exact.
        #[allow(clippy::cast_precision_loss)]
        let saturated = load >= cpus as f64;
        if saturated { 1 } else { cpus.min(4) }
    })
}

/// Maps `f` over `items` on up to [`worker_threads`] threads and returns
/// the results in item order. Each thread takes the next unclaimed item
/// when it finishes one. The calling thread works too; helpers get CPUs of
/// their own (see [`crate::affinity`]). Fewer than two items, or one
/// thread, run on the calling thread alone. Every item a panicking thread
/// had taken yields `on_panic(index)`; the other threads carry on.
pub fn par_map<T: Send, R: Send>(
    items: Vec<T>,
    f: impl Fn(T) -> R + Sync,
    on_panic: impl Fn(usize) -> R,
) -> Vec<R> {
    par_map_with(worker_threads(), items, f, on_panic)
}

/// [`par_map`] with an explicit thread count.
pub fn par_map_with<T: Send, R: Send>(
    threads: usize,
    items: Vec<T>,
    f: impl Fn(T) -> R + Sync,
    on_panic: impl Fn(usize) -> R,
) -> Vec<R> {
    let n = items.len();
    let threads = threads.min(n);
    if threads <= 1 {
        return items.into_iter().map(f).collect();
    }
    let queue = Mutex::new(items.into_iter().enumerate());
    let work = || {
        let mut done: Vec<(usize, R)> = Vec::new();
        loop {
            // The lock is held only to take an item, never while `f` runs,
            // so a panic in `f` cannot poison it.
            let next = match queue.lock() {
                Ok(mut q) => q.next(),
                Err(_) => None,
            };
            let Some((i, item)) = next else { break };
            done.push((i, f(item)));
        }
        done
    };
    // Spawn first, then pin the calling thread: a thread starts with its
    // creator's affinity (see `affinity`).
    let place = crate::affinity::Placement::new(threads - 1);
    let parts: Vec<Option<Vec<(usize, R)>>> = std::thread::scope(|s| {
        let work = &work;
        let handles: Vec<_> = (0..threads - 1)
            .map(|k| {
                let cpu = place.helper(k);
                s.spawn(move || {
                    let _pin = cpu.and_then(crate::affinity::pin);
                    work()
                })
            })
            .collect();
        let _here = place.pin_caller();
        let mine = std::panic::catch_unwind(std::panic::AssertUnwindSafe(work)).ok();
        std::iter::once(mine)
            .chain(handles.into_iter().map(|h| h.join().ok()))
            .collect()
    });
    let mut slots: Vec<Option<R>> = std::iter::repeat_with(|| None).take(n).collect();
    for (i, r) in parts.into_iter().flatten().flatten() {
        if let Some(slot) = slots.get_mut(i) {
            *slot = Some(r);
        }
    }
    slots
        .into_iter()
        .enumerate()
        .map(|(i, r)| r.unwrap_or_else(|| on_panic(i)))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};

    #[test]
    fn results_keep_item_order_whatever_the_thread_count() {
        let items: Vec<u64> = (0..1000).collect();
        let want: Vec<u64> = items.iter().map(|x| x * x + 1).collect();
        for threads in [1, 2, 3, 4, 7] {
            let got = par_map_with(threads, items.clone(), |x| x * x + 1, |_| 0);
            assert_eq!(got, want, "{threads} threads");
        }
    }

    #[test]
    fn uneven_items_are_shared_out() {
        // One slow item first: with striping, the thread that took it would
        // also get every other even item; with a queue the other threads
        // take the rest while it works.
        let seen = Mutex::new(std::collections::HashSet::new());
        let per_thread = Mutex::new(std::collections::HashMap::<_, usize>::new());
        let items: Vec<u64> = (0..40).collect();
        let got = par_map_with(
            2,
            items,
            |x| {
                if x == 0 {
                    std::thread::sleep(std::time::Duration::from_millis(200));
                }
                seen.lock().expect("lock").insert(x);
                *per_thread
                    .lock()
                    .expect("lock")
                    .entry(std::thread::current().id())
                    .or_default() += 1;
                x
            },
            |_| u64::MAX,
        );
        assert_eq!(got, (0..40).collect::<Vec<_>>());
        assert_eq!(seen.lock().expect("lock").len(), 40);
        let counts = per_thread.lock().expect("lock");
        // The thread with the slow item did only it; the other did all 39.
        let mut c: Vec<usize> = counts.values().copied().collect();
        c.sort_unstable();
        assert_eq!(c, vec![1, 39]);
    }

    #[test]
    fn a_panicking_item_yields_on_panic_and_the_rest_complete() {
        let calls = AtomicUsize::new(0);
        let got = par_map_with(
            2,
            (0..20).collect::<Vec<u32>>(),
            |x| {
                calls.fetch_add(1, Ordering::Relaxed);
                assert!(x != 7, "boom");
                Some(x)
            },
            |_| None,
        );
        assert_eq!(got.len(), 20);
        assert_eq!(got[7], None);
        // Items finished by the thread that panicked are lost with it (they
        // were in its hands); every other item comes back.
        assert!(got.iter().flatten().count() >= 1);
        for (i, r) in got.iter().enumerate() {
            if let Some(v) = r {
                assert_eq!(*v as usize, i);
            }
        }
        assert_eq!(calls.load(Ordering::Relaxed), 20, "every item was taken");
    }

    #[test]
    fn worker_threads_is_stable() {
        let a = worker_threads();
        assert!(a >= 1);
        assert_eq!(a, worker_threads());
    }
}
