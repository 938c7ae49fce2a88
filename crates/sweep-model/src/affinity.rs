//! Thread placement for short parallel phases.
//!
//! On the 2-CPU CI VMs the scheduler often left a freshly spawned worker on
//! the CPU of the thread that spawned it and kept both there while the
//! other CPU stayed idle, so a phase in which both threads work ran at one
//! CPU's speed in most runs. `collect-results aggregate` pins its threads
//! to distinct CPUs for the walk: its median over 1,000 files went from
//! 16–18 ms to about 11 ms and the spread narrowed to about 1 ms. Spawn
//! before pinning the spawning thread: a new thread inherits its creator's
//! affinity and would first run on (and delay) the creator's CPU.
//!
//! `generate-matrix` does the same in `par::par_map` (the calling thread
//! works too, on its own CPU; each helper is pinned to another). Pinning the
//! helpers while the calling thread only waited had made it slower. Since a
//! pinned thread sees one CPU, nested parallel phases gain nothing: the
//! YAML parse therefore runs the pieces of all files in one phase
//! (`yaml::parse_many`) instead of a parallel parse inside each file's
//! worker, which had left the largest file on a single CPU.
//!
//! Everything here is best effort: where the affinity cannot be read or
//! set, or there are fewer CPUs than threads, threads stay where the
//! scheduler puts them.

use rustix::thread::{CpuSet, sched_getaffinity, sched_getcpu, sched_setaffinity};

/// `n` distinct CPUs the calling thread may run on, its current CPU first;
/// `None` if there are fewer than `n` (or `n` is below 2).
#[must_use]
pub fn distinct_cpus(n: usize) -> Option<Vec<usize>> {
    if n < 2 {
        return None;
    }
    let allowed = sched_getaffinity(None).ok()?;
    let here = sched_getcpu();
    let mut cpus = Vec::with_capacity(n);
    if allowed.is_set(here) {
        cpus.push(here);
    }
    cpus.extend(
        (0..CpuSet::MAX_CPU)
            .filter(|&c| c != here && allowed.is_set(c))
            .take(n - cpus.len()),
    );
    (cpus.len() == n).then_some(cpus)
}

/// Where a caller and its helpers run: the caller on its current CPU,
/// helper `k` on the next distinct one. Spawn the helpers first, then
/// [`Placement::pin_caller`]: a thread starts with its creator's affinity,
/// so helpers spawned by a pinned caller would first run on its CPU.
pub struct Placement(Option<Vec<usize>>);

impl Placement {
    /// For the caller plus `helpers` threads; places nothing if there are
    /// fewer CPUs than that.
    #[must_use]
    pub fn new(helpers: usize) -> Self {
        Placement(distinct_cpus(helpers + 1))
    }

    /// The CPU of helper `k` (from 0), to pin inside the helper with [`pin`].
    #[must_use]
    pub fn helper(&self, k: usize) -> Option<usize> {
        self.0.as_ref().and_then(|c| c.get(k + 1).copied())
    }

    /// Pins the calling thread to its CPU until the guard drops.
    #[must_use = "the pin lasts as long as the guard"]
    pub fn pin_caller(&self) -> Option<Pinned> {
        self.0
            .as_ref()
            .and_then(|c| c.first().copied())
            .and_then(pin)
    }
}

/// Restricts the calling thread to `cpu` until the returned guard drops,
/// which restores the previous affinity. Best effort: `None` if the
/// affinity could not be read or set.
#[must_use = "the pin lasts as long as the guard"]
pub fn pin(cpu: usize) -> Option<Pinned> {
    let saved = sched_getaffinity(None).ok()?;
    let mut set = CpuSet::new();
    set.set(cpu);
    sched_setaffinity(None, &set).ok()?;
    Some(Pinned { saved })
}

/// The calling thread's affinity before [`pin`]; restored on drop.
pub struct Pinned {
    saved: CpuSet,
}

impl Drop for Pinned {
    fn drop(&mut self) {
        let _ = sched_setaffinity(None, &self.saved);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pin_restricts_and_the_guard_restores() {
        let before = sched_getaffinity(None).expect("affinity");
        let Some(cpus) = distinct_cpus(before.count() as usize) else {
            // One CPU: nothing to place.
            assert!(distinct_cpus(2).is_none() || before.count() >= 2);
            return;
        };
        assert_eq!(cpus[0], sched_getcpu());
        let mut seen = cpus.clone();
        seen.sort_unstable();
        seen.dedup();
        assert_eq!(seen.len(), cpus.len(), "CPUs are distinct");
        assert!(cpus.iter().all(|&c| before.is_set(c)));
        let last = *cpus.last().expect("two or more");
        {
            let _guard = pin(last).expect("pin");
            let now = sched_getaffinity(None).expect("affinity");
            assert_eq!(now.count(), 1);
            assert!(now.is_set(last));
            assert_eq!(sched_getcpu(), last);
        }
        assert_eq!(sched_getaffinity(None).expect("affinity"), before);
    }

    #[test]
    fn placement_gives_helpers_the_cpus_after_the_callers() {
        let n = sched_getaffinity(None).expect("affinity").count() as usize;
        let none = Placement::new(0);
        assert!(none.helper(0).is_none() && none.pin_caller().is_none());
        if n < 2 {
            return;
        }
        // The caller's CPU depends on where the test thread runs, so only
        // the shape is checked: n - 1 distinct helper CPUs, all allowed.
        let allowed = sched_getaffinity(None).expect("affinity");
        let place = Placement::new(n - 1);
        let mut helpers: Vec<usize> = (0..n - 1).filter_map(|k| place.helper(k)).collect();
        assert_eq!(helpers.len(), n - 1);
        assert!(helpers.iter().all(|&c| allowed.is_set(c)));
        helpers.sort_unstable();
        helpers.dedup();
        assert_eq!(helpers.len(), n - 1);
        assert!(place.helper(n - 1).is_none());
    }

    #[test]
    fn fewer_than_two_threads_need_no_placement() {
        assert!(distinct_cpus(0).is_none());
        assert!(distinct_cpus(1).is_none());
        assert!(distinct_cpus(CpuSet::MAX_CPU + 1).is_none());
    }
}
