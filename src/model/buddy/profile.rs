//! The Buddy-Threshold profiler (docs/FORMATS.md, Buddy §3.6 \[proposal\]): per-allocation
//! targets chosen from snapshots of the allocation's entries, capping the expected fraction
//! of accesses that need buddy memory.
//!
//! For each allocation the largest target that passes is taken, trying 16×, 4×, 2×, 4/3×,
//! then 1× (always passes):
//! * 16× passes when, **in every snapshot**, at most `threshold` of the entries are larger
//!   than the 8 B device slot (the "mostly-zero in every snapshot" rule);
//! * the others pass when, over all snapshot entries together, at most `threshold` are
//!   larger than `D = 128 / T`.
//!
//! The buddy carve-out is sized for a 4× maximum, so the program-level ratio
//! `Σ bytes / Σ (bytes / T)` must stay below `max_overall` (4): while it does not, the
//! allocation with the highest target (the largest one on a tie, then the first) drops one
//! step.

use super::{SizeCode, Target};
use crate::model::ModelError;

/// Profiler settings.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ProfileParams {
    /// Largest allowed fraction of entries that need buddy memory (the paper uses 0.30 and
    /// sweeps 0.10-0.40).
    pub threshold: f64,
    /// The program-level ratio must stay below this (the carve-out's 4×).
    pub max_overall: f64,
    /// Whether 16× may be chosen.
    pub allow_16x: bool,
}

impl Default for ProfileParams {
    fn default() -> Self {
        ProfileParams {
            threshold: 0.30,
            max_overall: 4.0,
            allow_16x: true,
        }
    }
}

/// One allocation: its entries' size codes in each snapshot (every snapshot the same
/// length).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Allocation {
    /// Name for reports.
    pub name: String,
    /// `snapshots[s][e]`: the code of entry `e` in snapshot `s`.
    pub snapshots: Vec<Vec<SizeCode>>,
}

impl Allocation {
    /// Entries (128 B each).
    pub fn entries(&self) -> usize {
        self.snapshots.first().map_or(0, |s| s.len())
    }

    /// Fraction of all snapshot entries larger than the target's device bytes.
    pub fn buddy_fraction(&self, t: Target) -> f64 {
        let n: usize = self.snapshots.iter().map(|s| s.len()).sum();
        if n == 0 {
            return 0.0;
        }
        let over: usize = self
            .snapshots
            .iter()
            .map(|s| s.iter().filter(|c| c.bytes() > t.device_bytes()).count())
            .sum();
        over as f64 / n as f64
    }

    fn passes(&self, t: Target, p: &ProfileParams) -> bool {
        match t {
            Target::X1 => true,
            Target::X16 => {
                p.allow_16x
                    && self.snapshots.iter().all(|s| {
                        let over = s.iter().filter(|c| c.bytes() > 8).count();
                        over as f64 <= p.threshold * s.len() as f64
                    })
            }
            t => self.buddy_fraction(t) <= p.threshold,
        }
    }
}

/// The profiler's choice for one allocation.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Choice {
    /// Target.
    pub target: Target,
    /// Expected fraction of accesses that need buddy memory (over the snapshots).
    pub buddy_fraction: f64,
}

/// Program-level ratio of allocations of `entries[i]` entries at `targets[i]`.
pub fn overall_ratio(entries: &[usize], targets: &[Target]) -> f64 {
    let bytes: f64 = entries.iter().map(|&e| e as f64).sum();
    let dev: f64 = entries
        .iter()
        .zip(targets)
        .map(|(&e, t)| e as f64 / t.ratio())
        .sum();
    if dev == 0.0 {
        1.0
    } else {
        bytes / dev
    }
}

/// Chooses every allocation's target (see the module documentation).
pub fn profile(allocs: &[Allocation], p: &ProfileParams) -> Result<Vec<Choice>, ModelError> {
    if !(0.0..=1.0).contains(&p.threshold) {
        return Err(ModelError::param("threshold", p.threshold, "0..=1"));
    }
    if p.max_overall <= 1.0 || p.max_overall.is_nan() {
        return Err(ModelError::param("max_overall", p.max_overall, "> 1"));
    }
    for a in allocs {
        if a.snapshots.iter().any(|s| s.len() != a.entries()) {
            return Err(ModelError::Corrupt(format!(
                "allocation {}: snapshots of different lengths",
                a.name
            )));
        }
    }
    let order = [
        Target::X16,
        Target::X4,
        Target::X2,
        Target::X4_3,
        Target::X1,
    ];
    let mut targets: Vec<Target> = allocs
        .iter()
        .map(|a| {
            order
                .into_iter()
                .find(|t| a.passes(*t, p))
                .unwrap_or(Target::X1)
        })
        .collect();
    let entries: Vec<usize> = allocs.iter().map(|a| a.entries()).collect();
    while overall_ratio(&entries, &targets) >= p.max_overall {
        // The highest target, then the largest allocation, then the first.
        let Some(i) = (0..targets.len())
            .filter(|&i| targets[i] != Target::X1)
            .max_by(|&a, &b| {
                (targets[a], entries[a])
                    .cmp(&(targets[b], entries[b]))
                    .then(b.cmp(&a))
            })
        else {
            break;
        };
        let k = order.iter().position(|t| *t == targets[i]).unwrap_or(0);
        targets[i] = order[(k + 1).min(order.len() - 1)];
    }
    Ok(allocs
        .iter()
        .zip(targets)
        .map(|(a, target)| Choice {
            target,
            buddy_fraction: a.buddy_fraction(target),
        })
        .collect())
}
