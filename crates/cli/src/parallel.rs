//! Runs one job per input on a few threads and hands the results back in
//! input order: how `summarize` reads many logs at once. Plain scoped std
//! threads and a shared counter: the inputs are whole files, so there is
//! nothing for a work-stealing pool to balance.

use std::num::NonZeroUsize;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc;

/// Threads to use by default: one per CPU.
pub fn default_jobs() -> usize {
    std::thread::available_parallelism().map_or(1, NonZeroUsize::get)
}

/// Calls `job` on every item on up to `jobs` threads; `done(k)` runs on the
/// calling thread after each of the `k` results arrives (for a progress
/// bar). Results are in the order of `items`.
pub fn map<T, R, F>(items: &[T], jobs: usize, job: F, mut done: impl FnMut(usize)) -> Vec<R>
where
    T: Sync,
    R: Send,
    F: Fn(&T) -> R + Sync,
{
    let mut out: Vec<Option<R>> = std::iter::repeat_with(|| None).take(items.len()).collect();
    let next = AtomicUsize::new(0);
    let workers = jobs.clamp(1, items.len().max(1));
    std::thread::scope(|s| {
        let (tx, rx) = mpsc::channel::<(usize, R)>();
        for _ in 0..workers {
            let tx = tx.clone();
            let (next, job) = (&next, &job);
            s.spawn(move || loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                let Some(item) = items.get(i) else { break };
                // The receiver lives until every result is in.
                if tx.send((i, job(item))).is_err() {
                    break;
                }
            });
        }
        drop(tx);
        for (k, (i, r)) in rx.iter().enumerate() {
            out[i] = Some(r);
            done(k + 1);
        }
    });
    // A job that panicked has already propagated out of the scope above, so
    // every slot is filled here.
    out.into_iter().flatten().collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn results_keep_input_order() {
        let items: Vec<u64> = (0..100).collect();
        let mut ticks = Vec::new();
        let out = map(
            &items,
            4,
            |&i| {
                std::thread::sleep(std::time::Duration::from_micros((100 - i) * 10));
                i * 2
            },
            |k| ticks.push(k),
        );
        assert_eq!(out, items.iter().map(|i| i * 2).collect::<Vec<_>>());
        assert_eq!(ticks, (1..=100).collect::<Vec<_>>());
        assert!(map(&[] as &[u8], 4, |_| 0, |_| {}).is_empty());
    }
}
