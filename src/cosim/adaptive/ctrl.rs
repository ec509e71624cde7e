//! The controller unit (`adaptive_ctrl`): phase-trace lines, the model's decisions, and the
//! transactions that check them.

use super::units::*;
use crate::cosim::stream::{Beat, Txn};
use crate::model::adaptive::{evaluate, replay_lines, AdaptiveReport, Alg, Phase};
use crate::rtl::adaptive::AdaptiveRtlParams;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// The controller stimulus: `cfg.run.data` cut into lines, or a phase trace
/// ([`crate::trace::lines::phase_trace`]) of segments of 100..=1500 lines, each of a profile
/// drawn from `cfg.profiles` (every profile when empty), so that the decisions change.
pub fn ctrl_lines(p: &AdaptiveRtlParams, cfg: &StimConfig) -> Vec<Vec<u8>> {
    let lb = p.line_bytes;
    let n = cfg.run.lines as usize;
    if let Some(d) = &cfg.run.data_bytes() {
        return d
            .chunks(lb)
            .take(n)
            .map(|c| {
                let mut l = c.to_vec();
                l.resize(lb, 0);
                l
            })
            .collect();
    }
    let profiles = if cfg.profiles.is_empty() {
        all_profiles()
    } else {
        cfg.profiles.clone()
    };
    let mut rng = ChaCha8Rng::seed_from_u64(cfg.run.seed ^ 0xc7_u64);
    let mut segs = Vec::new();
    let mut total = 0;
    while total < n {
        let pr = profiles[rng.gen_range(0..profiles.len())];
        let len = rng.gen_range(100..=1500).min(n - total);
        segs.push((pr, len));
        total += len;
    }
    crate::trace::lines::phase_trace(&segs, lb, cfg.run.seed)
}

/// One controller transaction: the sizes the compressors report and what the model selects.
#[derive(Clone, Debug)]
pub struct CtrlCase {
    /// N per algorithm in bits, by Comp Alg code ([`crate::model::adaptive::evaluate`]).
    pub sizes: [usize; 4],
    /// The model's `sel_alg` ([`crate::model::adaptive::AdaptiveReport::sel_alg_sequence`]).
    pub sel: Alg,
    /// A sampling-phase transaction.
    pub sample: bool,
}

/// The controller transactions of `lines` and the model's report over them.
pub fn ctrl_cases(
    p: &AdaptiveRtlParams,
    lines: &[Vec<u8>],
) -> Result<(Vec<CtrlCase>, AdaptiveReport), String> {
    let mp = p.model();
    let rep = replay_lines(&mp, lines).map_err(|e| e.to_string())?;
    let sel = rep.sel_alg_sequence();
    let mut out = Vec::with_capacity(lines.len());
    for (i, (l, t)) in lines.iter().zip(&rep.txns).enumerate() {
        let sizes = match &t.eval {
            Some(e) => e.sizes,
            None => evaluate(&mp, l).map_err(|e| e.to_string())?.sizes,
        };
        out.push(CtrlCase {
            sizes,
            sel: sel[i],
            sample: t.phase == Phase::Sampling,
        });
    }
    Ok((out, rep))
}

/// The stream transaction of one controller case.
pub fn ctrl_transaction(c: &CtrlCase) -> Txn {
    let s = |a: Alg| c.sizes[a as usize] as u64;
    Txn {
        inputs: vec![Beat::new()
            .num("size_bdi", s(Alg::Bdi))
            .num("size_fpc", s(Alg::Fpc))
            .num("size_cpack", s(Alg::Cpack))],
        expected: vec![Beat::new()
            .num("sel_alg", c.sel.code().into())
            .num("sample", c.sample.into())],
    }
}

/// The controller's transactions over `lines` (the expected `sel_alg` sequence is the
/// model's over the same lines) and the model's report on them.
pub(super) fn ctrl_replay(p: &AdaptiveRtlParams, lines: &[Vec<u8>]) -> Result<Replay, String> {
    let (cases, rep) = ctrl_cases(p, lines)?;
    Ok((cases.iter().map(ctrl_transaction).collect(), rep))
}
