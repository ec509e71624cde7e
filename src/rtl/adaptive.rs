//! Parameters of the adaptive link compression hardware (Tavana et al., IPDPS'19; spec
//! docs/FORMATS.md, adaptive §3, §6), the `adaptive:` section of the YAML configuration.
//!
//! The units themselves live one file per algorithm: [`super::bdi`] (`bdi_comp`,
//! `bdi_decomp`), [`super::fpc`] (`fpc_comp`, `fpc_decomp`), [`super::cpack`] (`cpack_comp`,
//! `cpack_decomp`), [`super::adaptive_ctrl`] (`penalty_select`, `adaptive_ctrl`) and
//! [`super::link`] (`adaptive_tx`, `adaptive_rx`).

use crate::model::adaptive::{AdaptiveParams, NoQuorum, SampleSend, VoteTie};
use crate::model::bdi::{BaseRule, BdiParams};
use crate::model::cpack::{CodeTable, CpackParams, PushPolicy};
use crate::model::fpc::FpcParams;
use crate::model::LineParams;
use serde::{Deserialize, Serialize};

/// Spec reference printed in every module header.
pub const SPEC: &str = "docs/FORMATS.md, adaptive";

/// Parameters of the adaptive link compression hardware. Flat in YAML (`adaptive:` section).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct AdaptiveRtlParams {
    /// Line size in bytes: 32, 64 (default, the paper) or 128.
    pub line_bytes: usize,
    /// BDI base rule: `element0` (the paper, default) or `first-non-immediate`.
    pub bdi_base_rule: BaseRule,
    /// `bdi_decomp` register stages: 1 (default, the paper's 1 cycle) or 2 (a register after
    /// the per-element adders, for ≥ 1 GHz on Nangate45).
    pub bdi_decomp_stages: u32,
    /// `fpc_decomp` register stages: 4 (default, the paper's 5-cycle latency), 8 or 16 (fewer
    /// token steps per stage, for a faster clock; latency = stages + 1). A divisor of the
    /// line's words.
    pub fpc_decomp_stages: u32,
    /// `fpc_comp` register stages: 2 (default, the paper's 3-cycle latency), 3 (the first
    /// merge level registered; latency 4) or 4 (the word tokens and then the first merge
    /// level with the node lengths registered, for ≥ 1 GHz on Nangate45; latency 5).
    pub fpc_comp_stages: u32,
    /// C-Pack+Z: words classified per cycle, 1 or 2 (default: the original pair pipeline).
    pub cpack_words_per_cycle: usize,
    /// C-Pack+Z: dictionary entries, a power of two in 2..=64 (16, the model's default).
    pub cpack_dict_entries: usize,
    /// C-Pack+Z: push policy (`new-only` default, `no-full-match`, `all-non-zero`).
    pub cpack_push: PushPolicy,
    /// C-Pack+Z: code table (`paper` default, `original`).
    pub cpack_codes: CodeTable,
    /// Controller: λ of the penalty `P = N + λ(L_C + L_D)` (6, the paper's best).
    pub lambda: u32,
    /// Controller: sampled transactions per period (7).
    pub sample_len: u32,
    /// Controller: running-phase transactions per period (300).
    pub run_len: u32,
    /// Controller: wins needed to be selected (3).
    pub vote_threshold: u32,
    /// Controller: BDI is a candidate.
    pub use_bdi: bool,
    /// Controller: FPC is a candidate.
    pub use_fpc: bool,
    /// Controller: C-Pack+Z is a candidate.
    pub use_cpack: bool,
    /// Controller: no-quorum rule (`bypass`, `keep-previous`, `plurality`).
    pub no_quorum: NoQuorum,
    /// Controller: vote tie rule (`sum-penalty`, `lower-latency`).
    pub vote_tie: VoteTie,
    /// Controller: what sampled lines are sent with (`winner`, `current`).
    pub sample_send: SampleSend,
    /// Link egress/ingress (`adaptive_tx`, `adaptive_rx`): entries of the in-order line and
    /// route queues, a power of two in 2..=64 (4: full rate behind compressors of up to 2
    /// register stages; see `docs/FORMATS.md`).
    pub link_queue_depth: u32,
    /// Link egress (`adaptive_tx`): a skid register on each compressor's output (its ready
    /// from a register) and the egress mux's inputs registered in place of its output (the
    /// selection reaches the mux from a register). Same cycles, more flops; for ≥ 1 GHz.
    pub link_fast_egress: bool,
}

impl Default for AdaptiveRtlParams {
    fn default() -> Self {
        AdaptiveRtlParams {
            line_bytes: 64,
            bdi_base_rule: BaseRule::Element0,
            bdi_decomp_stages: 1,
            fpc_decomp_stages: 4,
            fpc_comp_stages: 2,
            cpack_words_per_cycle: 2,
            cpack_dict_entries: 16,
            cpack_push: PushPolicy::NewOnly,
            cpack_codes: CodeTable::Paper,
            lambda: 6,
            sample_len: 7,
            run_len: 300,
            vote_threshold: 3,
            use_bdi: true,
            use_fpc: true,
            use_cpack: true,
            no_quorum: NoQuorum::Bypass,
            vote_tie: VoteTie::SumPenalty,
            sample_send: SampleSend::Winner,
            link_queue_depth: 4,
            link_fast_egress: false,
        }
    }
}

impl AdaptiveRtlParams {
    /// Checks the parameter set; the message names the bad value and what is allowed.
    pub fn validate(&self) -> Result<(), String> {
        if !crate::model::bits::LINE_BYTES.contains(&self.line_bytes) {
            return Err(format!(
                "line_bytes = {} is not supported (allowed: 16 for proofs, 32, 64, 128)",
                self.line_bytes
            ));
        }
        if !(1..=2).contains(&self.bdi_decomp_stages) {
            return Err(format!(
                "bdi_decomp_stages = {} is not supported (allowed: 1, 2)",
                self.bdi_decomp_stages
            ));
        }
        let words = (self.line_bytes / 4) as u32;
        if ![4, 8, 16].contains(&self.fpc_decomp_stages)
            || !words.is_multiple_of(self.fpc_decomp_stages)
        {
            return Err(format!(
                "fpc_decomp_stages = {} is not supported at line_bytes = {} (allowed: 4, 8, \
                 16, dividing the {} words)",
                self.fpc_decomp_stages, self.line_bytes, words
            ));
        }
        if ![2, 3, 4].contains(&self.fpc_comp_stages) {
            return Err(format!(
                "fpc_comp_stages = {} is not supported (allowed: 2, 3, 4)",
                self.fpc_comp_stages
            ));
        }
        if ![1, 2].contains(&self.cpack_words_per_cycle) {
            return Err(format!(
                "cpack_words_per_cycle = {} is not supported (allowed: 1, 2)",
                self.cpack_words_per_cycle
            ));
        }
        self.cpack()
            .validate()
            .map_err(|e| format!("cpack_dict_entries: {}", e))?;
        if self.lambda > 1 << 20 {
            return Err(format!(
                "lambda = {} is too large (allowed: 0..=1048576)",
                self.lambda
            ));
        }
        if !(2..=64).contains(&self.link_queue_depth) || !self.link_queue_depth.is_power_of_two() {
            return Err(format!(
                "link_queue_depth = {} is not supported (allowed: a power of two in 2..=64)",
                self.link_queue_depth
            ));
        }
        if self.sample_len == 0 || self.sample_len > 255 {
            return Err(format!(
                "sample_len = {} is not supported (allowed: 1..=255)",
                self.sample_len
            ));
        }
        if self.run_len > 1 << 20 {
            return Err(format!(
                "run_len = {} is too large (allowed: 0..=1048576)",
                self.run_len
            ));
        }
        if self.vote_threshold == 0 || self.vote_threshold > self.sample_len {
            return Err(format!(
                "vote_threshold = {} is not supported (allowed: 1..={}, sample_len)",
                self.vote_threshold, self.sample_len
            ));
        }
        Ok(())
    }

    /// The matching golden-model parameters of the adaptive controller (Table III costs,
    /// default FPC and C-Pack+Z parameters at this line size).
    pub fn model(&self) -> AdaptiveParams {
        AdaptiveParams {
            lambda: self.lambda,
            sample_len: self.sample_len,
            run_len: self.run_len,
            vote_threshold: self.vote_threshold,
            use_bdi: self.use_bdi,
            use_fpc: self.use_fpc,
            use_cpack: self.use_cpack,
            no_quorum: self.no_quorum,
            vote_tie: self.vote_tie,
            sample_send: self.sample_send,
            bdi: self.bdi(),
            fpc: self.fpc(),
            cpack: self.cpack(),
            ..AdaptiveParams::default()
        }
    }

    /// Human-readable controller parameter line (the `penalty_select` / `adaptive_ctrl`
    /// headers).
    pub fn describe_ctrl(&self) -> String {
        format!(
            "line_bytes={} lambda={} sample_len={} run_len={} vote_threshold={} candidates={}{}{} no_quorum={} vote_tie={} sample_send={}",
            self.line_bytes,
            self.lambda,
            self.sample_len,
            self.run_len,
            self.vote_threshold,
            if self.use_bdi { "bdi," } else { "" },
            if self.use_fpc { "fpc," } else { "" },
            if self.use_cpack { "cpack" } else { "" },
            match self.no_quorum {
                NoQuorum::Bypass => "bypass",
                NoQuorum::KeepPrevious => "keep-previous",
                NoQuorum::Plurality => "plurality",
            },
            match self.vote_tie {
                VoteTie::SumPenalty => "sum-penalty",
                VoteTie::LowerLatency => "lower-latency",
            },
            match self.sample_send {
                SampleSend::Winner => "winner",
                SampleSend::Current => "current",
            },
        )
    }

    /// Parameter line of the link units (`adaptive_tx`, `adaptive_rx`): the controller's, the
    /// compressors' and the queue depth.
    pub fn describe_link(&self) -> String {
        // `describe` and `describe_ctrl` both start with the line size.
        let d = self.describe();
        let units = d.split_once(' ').map_or("", |(_, rest)| rest);
        format!(
            "{} {} link_queue_depth={}{}",
            self.describe_ctrl(),
            units,
            self.link_queue_depth,
            if self.link_fast_egress {
                " link_fast_egress=true"
            } else {
                ""
            }
        )
    }

    /// Line size in bits (the payload bus width).
    pub fn line_bits(&self) -> u32 {
        self.line_bytes as u32 * 8
    }

    /// Width of the compressed-size fields (`len`, bits): `clog2(line_bits + 1)`.
    pub fn len_bits(&self) -> u32 {
        crate::hdl::clog2(self.line_bits() as u64 + 1)
    }

    /// The matching FPC golden-model parameters (Original mode, the decodable format).
    pub fn fpc(&self) -> FpcParams {
        FpcParams {
            line_bytes: self.line_bytes,
            ..FpcParams::default()
        }
    }

    /// The matching BDI golden-model parameters.
    pub fn bdi(&self) -> BdiParams {
        BdiParams {
            line_bytes: self.line_bytes,
            base_rule: self.bdi_base_rule,
        }
    }

    /// The matching C-Pack golden-model parameters (dictionary starts empty).
    pub fn cpack(&self) -> CpackParams {
        CpackParams {
            codes: self.cpack_codes,
            push: self.cpack_push,
            line_bytes: self.line_bytes,
            dict_entries: self.cpack_dict_entries,
            dict_init_zero: false,
        }
    }

    /// The C-Pack+Z hardware parameters of this configuration.
    pub fn cpack_rtl(&self) -> super::cpack::CpackRtlParams {
        super::cpack::CpackRtlParams {
            codec: self.cpack(),
            words_per_cycle: self.cpack_words_per_cycle,
        }
    }

    /// Human-readable C-Pack+Z parameter line (the `cpack_*` headers and reports).
    pub fn describe_cpack(&self) -> String {
        self.cpack_rtl().describe()
    }

    /// Human-readable parameter line for headers and reports (the stage counts only when
    /// they are not the defaults).
    pub fn describe(&self) -> String {
        let mut s = format!(
            "line_bytes={} bdi_base_rule={}",
            self.line_bytes,
            match self.bdi_base_rule {
                BaseRule::Element0 => "element0",
                BaseRule::FirstNonImmediate => "first-non-immediate",
            }
        );
        if self.bdi_decomp_stages != 1 {
            s.push_str(&format!(" bdi_decomp_stages={}", self.bdi_decomp_stages));
        }
        if self.fpc_comp_stages != 2 {
            s.push_str(&format!(" fpc_comp_stages={}", self.fpc_comp_stages));
        }
        if self.fpc_decomp_stages != 4 {
            s.push_str(&format!(" fpc_decomp_stages={}", self.fpc_decomp_stages));
        }
        s
    }
}
