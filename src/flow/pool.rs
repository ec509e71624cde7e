//! A worker pool for independent steps, in priority order, with dependencies.
//!
//! Steps are started in index order (the flow sorts them longest first), each by the first
//! free worker, as soon as the steps it depends on have finished: a composite unit's
//! synthesis waits for its child units' runs without holding a worker.

use super::FlowResult;
use std::sync::{Condvar, Mutex};

/// What [`pool`] says of an index it did not run because an earlier one failed.
pub(crate) const SKIPPED: &str = "skipped after an earlier error";

/// The error of an index whose dependency failed (it is not run).
pub(crate) const DEP_FAILED: &str = "not run: a step it depends on failed";

/// Runs `f(i)` for `i` in `0..n` on `jobs` threads, each index once, and returns the
/// results in index order. With `fail_fast`, no new index is started after the first error
/// (those report [`SKIPPED`]); otherwise every index runs.
pub(crate) fn pool<T: Send>(
    n: usize,
    jobs: usize,
    fail_fast: bool,
    f: &(dyn Fn(usize) -> FlowResult<T> + Sync),
) -> Vec<FlowResult<T>> {
    pool_after(n, jobs, fail_fast, &vec![Vec::new(); n], f)
}

struct State {
    started: Vec<bool>,
    /// `Some(ok)` once an index finished.
    done: Vec<Option<bool>>,
    failed: bool,
}

/// [`pool`] where index `i` starts only after every index in `deps[i]` finished (lower
/// indices first among those ready). An index whose dependency failed is not run: its
/// result is an error starting with [`DEP_FAILED`]. `deps` must not have cycles; indices
/// out of range are ignored.
pub(crate) fn pool_after<T: Send>(
    n: usize,
    jobs: usize,
    fail_fast: bool,
    deps: &[Vec<usize>],
    f: &(dyn Fn(usize) -> FlowResult<T> + Sync),
) -> Vec<FlowResult<T>> {
    let deps_of = |i: usize| {
        deps.get(i)
            .map(|d| {
                d.iter()
                    .copied()
                    .filter(|&j| j < n && j != i)
                    .collect::<Vec<usize>>()
            })
            .unwrap_or_default()
    };
    let state = Mutex::new(State {
        started: vec![false; n],
        done: vec![None; n],
        failed: false,
    });
    let wake = Condvar::new();
    let out: Mutex<Vec<Option<FlowResult<T>>>> = Mutex::new((0..n).map(|_| None).collect());
    std::thread::scope(|s| {
        for _ in 0..jobs.clamp(1, n.max(1)) {
            s.spawn(|| loop {
                // The next index whose dependencies are done, or None when all started.
                let pick = {
                    let mut st = state.lock().unwrap_or_else(|e| e.into_inner());
                    loop {
                        if st.started.iter().all(|&x| x) {
                            break None;
                        }
                        let ready = (0..n).find(|&i| {
                            !st.started[i] && deps_of(i).iter().all(|&j| st.done[j].is_some())
                        });
                        if let Some(i) = ready {
                            st.started[i] = true;
                            let dep_failed = deps_of(i).iter().any(|&j| st.done[j] == Some(false));
                            break Some((i, dep_failed, st.failed));
                        }
                        st = wake.wait(st).unwrap_or_else(|e| e.into_inner());
                    }
                };
                let Some((i, dep_failed, failed)) = pick else {
                    break;
                };
                let r = if fail_fast && failed {
                    Err(SKIPPED.into())
                } else if dep_failed {
                    Err(DEP_FAILED.into())
                } else {
                    f(i)
                };
                let ok = r.is_ok();
                out.lock().unwrap_or_else(|e| e.into_inner())[i] = Some(r);
                let mut st = state.lock().unwrap_or_else(|e| e.into_inner());
                st.done[i] = Some(ok);
                st.failed |= !ok;
                wake.notify_all();
            });
        }
    });
    out.into_inner()
        .unwrap_or_else(|e| e.into_inner())
        .into_iter()
        .map(|r| r.unwrap_or_else(|| Err("not run".into())))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};

    #[test]
    fn every_index_runs_after_its_dependencies() {
        let order = Mutex::new(Vec::new());
        // 0 waits for 2 and 3; 1 waits for 0.
        let deps = vec![vec![2, 3], vec![0], vec![], vec![], vec![]];
        let r = pool_after(5, 2, false, &deps, &|i| {
            std::thread::sleep(std::time::Duration::from_millis(5 * (5 - i as u64)));
            order.lock().unwrap().push(i);
            Ok(i)
        });
        assert_eq!(
            r.into_iter().map(Result::unwrap).collect::<Vec<_>>(),
            [0, 1, 2, 3, 4]
        );
        let o = order.into_inner().unwrap();
        let pos = |i| o.iter().position(|&x| x == i).unwrap();
        assert!(
            pos(0) > pos(2) && pos(0) > pos(3) && pos(1) > pos(0),
            "{:?}",
            o
        );
    }

    #[test]
    fn a_failure_stops_only_its_dependents_unless_fail_fast() {
        let ran = AtomicUsize::new(0);
        let f = |i: usize| {
            ran.fetch_add(1, Ordering::Relaxed);
            if i == 1 {
                Err("boom".to_string())
            } else {
                Ok(())
            }
        };
        let deps = vec![vec![], vec![], vec![1], vec![]];
        let r = pool_after(4, 1, false, &deps, &f);
        assert!(r[0].is_ok() && r[3].is_ok());
        assert_eq!(r[1].as_ref().unwrap_err(), "boom");
        assert_eq!(r[2].as_ref().unwrap_err(), DEP_FAILED);
        assert_eq!(ran.load(Ordering::Relaxed), 3);
        ran.store(0, Ordering::Relaxed);
        let r = pool(4, 1, true, &f);
        assert_eq!(ran.load(Ordering::Relaxed), 2);
        assert_eq!(r[2].as_ref().unwrap_err(), SKIPPED);
        assert_eq!(r[3].as_ref().unwrap_err(), SKIPPED);
    }
}
