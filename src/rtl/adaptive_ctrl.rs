//! Adaptive controller generators (Tavana et al., IPDPS'19; docs/FORMATS.md, adaptive
//! §2.4 policy, §3, §6 `penalty_select`, `adaptive_ctrl`, `k_table`), bit-exact with
//! [`crate::model::adaptive::replay`].
//!
//! * `penalty_select` (combinational): the per-transaction sizes `N_alg` (bits as sent, as the
//!   compressors report them; none is the constant line size `L`) plus the `k_table` constants
//!   `K_alg = λ(L_C + L_D)` ([`AdaptiveParams::k_values`]) give `P_alg = N_alg + K_alg`; the
//!   winner is argmin P over the enabled candidates, ties to the earlier in the model's tie
//!   order ([`AdaptiveParams::tie_order`]: increasing `L_C + L_D`, i.e. none < BDI < FPC <
//!   C-Pack+Z). Outputs the winner's Comp Alg code and every P.
//! * `adaptive_ctrl` (one transaction per cycle, one register stage): a phase counter over
//!   `sample_len + run_len` transactions (sampling first; the next transaction's phase flags
//!   are registered), per-candidate vote counters and summed-P registers (the first sample of a
//!   period starts from zero), and the decision in the cycle after the last sample, computed
//!   from the counter registers and written to the running-phase selection `cur_q`; a
//!   transaction accepted in that very cycle takes the decision directly (so the controller
//!   keeps one transaction per cycle without an adder in the decision path): candidates with
//!   ≥ `vote_threshold` wins qualify; several are split by more wins, then (`sum-penalty`) lower
//!   summed P, then the tie order; none qualifying applies the `no_quorum` rule (bypass by
//!   default, keep the previous selection, or plurality over all candidates). A sampled
//!   transaction is sent with its own winner (`sample_send: winner`) or the current selection.
//!
//! λ, the phase lengths, the threshold, the candidate set and the option rules are
//! generation-time parameters ([`AdaptiveRtlParams`]).

use super::adaptive::{AdaptiveRtlParams, SPEC};
use crate::hdl::pipe::{Pipeline, Policy};
use crate::hdl::stream::{self, Layout};
use crate::hdl::{clog2, Expr, HdlError, Module, ModuleBuilder};
use crate::model::adaptive::{AdaptiveParams, Alg, NoQuorum, SampleSend, VoteTie};
use std::sync::Arc;

fn err(msg: String) -> HdlError {
    HdlError {
        module: "adaptive_ctrl".into(),
        problems: vec![msg],
    }
}

/// Enabled candidates in tie order (none first).
fn candidates(mp: &AdaptiveParams) -> Vec<Alg> {
    mp.tie_order()
        .into_iter()
        .filter(|a| mp.enabled(*a))
        .collect()
}

/// Width of a penalty: `clog2(L + max K + 1)`.
pub fn penalty_bits(p: &AdaptiveRtlParams) -> u32 {
    let k = p.model().k_values().into_iter().max().unwrap_or(0);
    clog2(p.line_bits() as u64 + k + 1)
}

/// Width of a summed penalty over the samples.
pub fn sum_bits(p: &AdaptiveRtlParams) -> u32 {
    let k = p.model().k_values().into_iter().max().unwrap_or(0);
    clog2(p.sample_len as u64 * (p.line_bits() as u64 + k) + 1)
}

fn header(m: &mut ModuleBuilder, generator: &str, p: &AdaptiveRtlParams, spec: &str) {
    let mp = p.model();
    let spec = format!("{SPEC} {spec}");
    m.provenance(
        &format!("adaptive_ctrl::{generator}"),
        &p.describe_ctrl(),
        &spec,
    );
    let k = mp.k_values();
    m.header(format!(
        "k_table (K = lambda*(L_C+L_D), by Comp Alg code none/fpc/cpack/bdi): {} {} {} {}",
        k[0], k[1], k[2], k[3]
    ));
    m.header(format!(
        "Tie order: {}; Comp Alg codes none=0 fpc=1 cpack=2 bdi=3",
        candidates(&mp)
            .iter()
            .map(|a| a.name())
            .collect::<Vec<_>>()
            .join(" < ")
    ));
}

fn tag(a: Alg) -> &'static str {
    a.name()
}

/// Name tag of the parameters for module names.
pub(crate) fn name_tag(p: &AdaptiveRtlParams) -> String {
    let mut s = format!("l{}_lam{}", p.line_bytes, p.lambda);
    let d = AdaptiveRtlParams {
        line_bytes: p.line_bytes,
        lambda: p.lambda,
        bdi_base_rule: p.bdi_base_rule,
        ..AdaptiveRtlParams::default()
    };
    if *p != d {
        // Non-default controller options: a short stable hash keeps names distinct.
        use std::hash::{Hash, Hasher};
        let mut h = std::collections::hash_map::DefaultHasher::new();
        (
            p.sample_len,
            p.run_len,
            p.vote_threshold,
            p.use_bdi,
            p.use_fpc,
            p.use_cpack,
        )
            .hash(&mut h);
        (p.no_quorum, p.vote_tie, p.sample_send).hash(&mut h);
        s.push_str(&format!("_{:06x}", h.finish() & 0xff_ffff));
    }
    s
}

/// ORs `a`'s Comp Alg code into `code` when the one-hot `hit` is set (none, code 0, adds
/// nothing: its select is marked unused).
fn or_code(m: &mut ModuleBuilder, code: Expr, hit: &Expr, a: Alg) -> Expr {
    if a.code() == 0 {
        m.unused(hit);
        code
    } else {
        code | hit.gate(&Expr::lit(2, a.code() as u64))
    }
}

/// `penalty_select`: sizes in, winner and penalties out (combinational; see the module docs).
///
/// Ports: `size_bdi_i`, `size_fpc_i`, `size_cpack_i` (`clog2(L+1)` bits each; the line size
/// when the compressor does not save space) → `win_o[1:0]` (Comp Alg code), `pen_none_o`,
/// `pen_bdi_o`, `pen_fpc_o`, `pen_cpack_o` ([`penalty_bits`] each; a disabled candidate's
/// penalty is its size plus K and never wins).
pub fn penalty_select(p: &AdaptiveRtlParams) -> Result<Arc<Module>, HdlError> {
    p.validate().map_err(err)?;
    let mp = p.model();
    let lw = p.len_bits();
    let pw = penalty_bits(p);
    let k = mp.k_values();
    let mut m = ModuleBuilder::new(format!("penalty_select_{}", name_tag(p)));
    header(
        &mut m,
        "penalty_select",
        p,
        "§2.4 (Eq. 1 P = N + K, per-sample argmin and tie rule), §6 penalty_select, k_table",
    );
    let mut pen = std::collections::HashMap::new();
    for a in [Alg::Bdi, Alg::Fpc, Alg::Cpack] {
        let s = m.input(&format!("size_{}_i", tag(a)), lw);
        let v = m.wire(
            &format!("pen_{}", tag(a)),
            &(s.zext(pw) + Expr::lit(pw, k[a as usize])),
        );
        pen.insert(a, v);
    }
    pen.insert(
        Alg::None,
        Expr::lit(pw, p.line_bits() as u64 + k[Alg::None as usize]),
    );
    let cands = candidates(&mp);
    // a wins iff P_a < P_b for every earlier candidate b and P_a <= P_b for every later one.
    let mut code = Expr::zero(2);
    for (i, a) in cands.iter().enumerate() {
        let mut terms = vec![Expr::ones(1)];
        for (j, b) in cands.iter().enumerate() {
            if i == j {
                continue;
            }
            terms.push(if j < i {
                pen[a].lt(&pen[b])
            } else {
                pen[a].le(&pen[b])
            });
        }
        let w = m.wire(&format!("win_{}", tag(*a)), &Expr::cat(&terms).all());
        code = or_code(&mut m, code, &w, *a);
    }
    m.output_expr("win_o", &code);
    for a in [Alg::None, Alg::Bdi, Alg::Fpc, Alg::Cpack] {
        m.output_expr(&format!("pen_{}_o", tag(a)), &pen[&a]);
    }
    m.finish()
}

/// `adaptive_ctrl`: size vectors in, `sel_alg` per transaction out (see the module docs).
///
/// Ports: `s_valid_i`/`s_ready_o`/`s_size_bdi_i`/`s_size_fpc_i`/`s_size_cpack_i`
/// (`clog2(L+1)` bits each) → `m_valid_o`/`m_ready_i`/`m_sel_alg_o[1:0]` (Comp Alg code the
/// egress mux selects)/`m_sample_o` (1 = a sampling-phase transaction), plus `s_sel_alg_o`
/// (combinational: the selection of the transaction offered now) and `cur_sel_o` (the
/// running-phase selection register, `cur_q`: it holds the decision from the cycle after
/// the period's last sample, which is when the link's fork may next read it, having
/// waited for its pipeline to drain) for the link egress ([`super::link`]). One
/// transaction per cycle; the output register holds while `m_ready_i` is low.
pub fn controller(p: &AdaptiveRtlParams) -> Result<Arc<Module>, HdlError> {
    p.validate().map_err(err)?;
    let mp = p.model();
    let lw = p.len_bits();
    let sw = sum_bits(p);
    let ps = penalty_select(p)?;
    let mut m = ModuleBuilder::new(format!("adaptive_ctrl_{}", name_tag(p)));
    header(
        &mut m,
        "controller",
        p,
        "§2.4 (phases, votes, decision, tie and no-quorum rules), §6 adaptive_ctrl (II = 1)",
    );
    let size_fields: Vec<String> = [Alg::Bdi, Alg::Fpc, Alg::Cpack]
        .iter()
        .map(|a| format!("size_{}", tag(*a)))
        .collect();
    let layout: Vec<(&str, u32)> = size_fields.iter().map(|f| (f.as_str(), lw)).collect();
    let s_in = stream::input(&mut m, "s", &Layout::new(&layout));
    let s_valid = s_in.valid.clone();
    let sz: Vec<Expr> = size_fields.iter().map(|f| s_in.field(f)).collect();
    let out = stream::output_port(&mut m, "m");
    let m_ready = out.ready();
    let inst = m.instance(
        &ps,
        "u_penalty",
        &[
            ("size_bdi_i", sz[0].clone()),
            ("size_fpc_i", sz[1].clone()),
            ("size_cpack_i", sz[2].clone()),
        ],
    );
    let win = m.wire("win", &inst.out("win_o"));

    // ---- Handshake: one output register, a one-stage pipeline ----
    let mut out_pipe = Pipeline::new(&mut m, "out", Policy::Bubble, &s_valid);
    let st_out = out_pipe.stage(&mut m, "out");
    let load = st_out.load();

    // ---- Phase counter ----
    m.comment("Phase counter: positions 0..sample_len-1 sample, the rest run");
    let period = (p.sample_len + p.run_len) as u64;
    let cw = clog2(period).max(1);
    let pos = m.reg("pos_q", cw, Some(0));
    let wrap = pos.q().eq_lit(period - 1);
    let pos_n = wrap.select(&Expr::zero(cw), &(pos.q() + Expr::lit(cw, 1)));
    m.next(&pos, &pos_n, Some(&load));
    // Phase flags of the next transaction, registered (off the decision path).
    let sl = p.sample_len as u64;
    let smp_r = m.reg("sampling_q", 1, Some(1));
    m.next(&smp_r, &pos_n.lt(&Expr::lit(cw, sl)), Some(&load));
    let last_r = m.reg("last_sample_q", 1, Some((sl == 1) as u64));
    m.next(&last_r, &pos_n.eq_lit(sl - 1), Some(&load));
    let sampling = m.wire("sampling", &smp_r.q());
    let last = m.wire("last_sample", &last_r.q());
    let upd = m.wire("sample_load", &(&load & &sampling));
    let dec = m.wire("decide", &(&load & &last));
    // Set by the last sample, cleared by the next sample: that sample starts from zero.
    let clr = m.reg("clear_q", 1, Some(1));
    m.next(&clr, &last, Some(&upd));
    // The cycle after the last sample: the counters hold the full period, the decision is
    // taken from them and written to `cur_q`; a transaction in that cycle uses it directly.
    let fresh = m.reg("fresh_q", 1, Some(0));
    m.next(&fresh, &dec, None);

    // ---- Votes and summed penalties ----
    m.comment("Vote counters and summed penalties");
    let cands = candidates(&mp);
    let vw = clog2(p.sample_len as u64 + 1);
    let mut votes = std::collections::HashMap::new();
    let mut sums = std::collections::HashMap::new();
    for a in &cands {
        let t = tag(*a);
        let vr = m.reg(&format!("votes_{}_q", t), vw, Some(0));
        let hit = win.eq_lit(a.code() as u64);
        let vb = clr.q().select(&Expr::zero(vw), &vr.q());
        // The count + 1 is formed from registers; the late win only selects it.
        let vi = m.wire(
            &format!("votes_{}_inc", t),
            &(vb.clone() + Expr::lit(vw, 1)),
        );
        let vn = m.wire(&format!("votes_{}_n", t), &hit.select(&vi, &vb));
        m.next(&vr, &vn, Some(&upd));
        votes.insert(*a, vr.q());
        let sr = m.reg(&format!("sum_{}_q", t), sw, Some(0));
        let pen = inst.out(&format!("pen_{}_o", t));
        let sb = clr.q().select(&Expr::zero(sw), &sr.q());
        let sn = m.wire(&format!("sum_{}_n", t), &(sb + pen.zext(sw)));
        m.next(&sr, &sn, Some(&upd));
        sums.insert(*a, sr.q());
    }
    for a in [Alg::None, Alg::Bdi, Alg::Fpc, Alg::Cpack] {
        if !cands.contains(&a) {
            m.unused(&inst.out(&format!("pen_{}_o", tag(a))));
        }
    }

    // ---- Decision ----
    m.comment("Decision: qualified = votes >= threshold; more votes, lower sum, tie order");
    let cur = m.reg("cur_q", 2, Some(0));
    let rank = |a: &Alg| cands.iter().position(|x| x == a).unwrap_or(4);
    // a strictly better than b.
    let better = |a: &Alg, b: &Alg| -> Expr {
        let (va, vb) = (&votes[a], &votes[b]);
        // Equal votes (and sums) go to the earlier candidate of the tie order.
        let earlier = rank(a) < rank(b);
        match mp.vote_tie {
            VoteTie::SumPenalty => {
                let (sa, sb) = (&sums[a], &sums[b]);
                let s = if earlier { sa.le(sb) } else { sa.lt(sb) };
                va.gt(vb) | (va.eq(vb) & s)
            }
            VoteTie::LowerLatency if earlier => va.ge(vb),
            VoteTie::LowerLatency => va.gt(vb),
        }
    };
    let thr = Expr::lit(vw, p.vote_threshold as u64);
    let mut qual = std::collections::HashMap::new();
    for a in &cands {
        qual.insert(*a, m.wire(&format!("qual_{}", tag(*a)), &votes[a].ge(&thr)));
    }
    let any_qual = m.wire(
        "any_qual",
        &Expr::cat(&cands.iter().map(|a| qual[a].clone()).collect::<Vec<_>>()).any(),
    );
    let mut q_code = Expr::zero(2);
    for a in &cands {
        let mut terms = vec![qual[a].clone()];
        for b in &cands {
            if a != b {
                terms.push(!qual[b].clone() | better(a, b));
            }
        }
        let w = m.wire(&format!("pick_{}", tag(*a)), &Expr::cat(&terms).all());
        q_code = or_code(&mut m, q_code, &w, *a);
    }
    let q_code = m.wire("quorum_sel", &q_code);
    let nq = match mp.no_quorum {
        NoQuorum::Bypass => Expr::lit(2, Alg::None.code() as u64),
        NoQuorum::KeepPrevious => cur.q(),
        NoQuorum::Plurality => {
            let mut c = Expr::zero(2);
            for a in &cands {
                let mut terms = vec![Expr::ones(1)];
                for b in &cands {
                    if a != b {
                        terms.push(better(a, b));
                    }
                }
                let w = m.wire(&format!("plur_{}", tag(*a)), &Expr::cat(&terms).all());
                c = or_code(&mut m, c, &w, *a);
            }
            c
        }
    };
    let nq = m.wire("no_quorum_sel", &nq);
    let decision = m.wire("decision", &any_qual.select(&q_code, &nq));
    m.next(&cur, &decision, Some(&fresh.q()));
    let cur_eff = m.wire("cur_sel", &fresh.q().select(&decision, &cur.q()));

    // ---- Output ----
    let sample_sel = match mp.sample_send {
        SampleSend::Winner => win.clone(),
        SampleSend::Current => cur_eff.clone(),
    };
    let sel = m.wire("sel_alg", &sampling.select(&sample_sel, &cur_eff));
    let sel_q = m.reg_next("sel_alg_q", Some(0), &sel, Some(&load));
    let smp_q = m.reg_next("sample_q", Some(0), &sampling, Some(&load));
    let ends = out_pipe.finish(&mut m, &m_ready);
    s_in.accept(&mut m, &ends.in_ready);
    out.drive(
        &mut m,
        &ends.out_valid,
        &[("sel_alg", sel_q.clone()), ("sample", smp_q.clone())],
    );
    // For the link egress (`rtl::link`): the selection the offered transaction gets (valid
    // with `s_valid_i && s_ready_o`, registered into `m_sel_alg_o`), and the running-phase
    // selection register (the fork's lines wait for no decision logic).
    m.output_expr("s_sel_alg_o", &sel);
    m.output_expr("cur_sel_o", &cur.q());
    m.finish()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hdl::sim::Sim;
    use crate::model::adaptive::evaluate;
    use crate::trace::lines::{lines, LineProfile};

    #[test]
    fn penalty_select_matches_evaluate() {
        for y in [
            "{}",
            "{lambda: 0}",
            "{lambda: 32}",
            "{lambda: 6, use_fpc: false}",
            "{line_bytes: 32, lambda: 1}",
        ] {
            let p: AdaptiveRtlParams = serde_yaml::from_str(y).unwrap();
            let mp = p.model();
            let mut sim = Sim::new(&penalty_select(&p).unwrap()).unwrap();
            for pr in LineProfile::PRIMITIVES {
                for line in lines(pr, p.line_bytes, 50, 3) {
                    let e = evaluate(&mp, &line).unwrap();
                    sim.set_u64("size_bdi_i", e.sizes[3] as u64).unwrap();
                    sim.set_u64("size_fpc_i", e.sizes[1] as u64).unwrap();
                    sim.set_u64("size_cpack_i", e.sizes[2] as u64).unwrap();
                    sim.eval();
                    assert_eq!(sim.get_u64("win_o"), e.winner.code() as u64, "{y}");
                    for a in candidates(&mp) {
                        let port = format!("pen_{}_o", tag(a));
                        assert_eq!(sim.get_u64(&port), e.penalties[a as usize], "{y}");
                    }
                }
            }
        }
    }

    #[test]
    fn units_generate_for_option_sets() {
        for y in [
            "{}",
            "{no_quorum: keep-previous, vote_tie: lower-latency, sample_send: current}",
            "{no_quorum: plurality, run_len: 0, sample_len: 1, vote_threshold: 1}",
            "{use_bdi: false, use_cpack: false, line_bytes: 128}",
        ] {
            let p: AdaptiveRtlParams = serde_yaml::from_str(y).unwrap();
            controller(&p).unwrap();
        }
    }
}
