//! What the main job is asked for (its profile) and what it produced (its report), apart
//! from the job itself so that the report writers need not depend on it.

use super::step::{StepStatus, StepTime};
use super::{CosimReport, FlowResult};
use crate::config::Config;
use crate::engines::PaperTable;
use crate::synth::ReportRow;
use serde::{Deserialize, Serialize};

/// A set of defaults for the main job.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Profile {
    /// osu018 only, 10,000 lines per unit, `-O1` models, `fast` synthesis effort: the whole
    /// job in minutes.
    Quick,
    /// osu018, Nangate45 and sky130hd (when present), 10^6 lines per unit, `-O2` models,
    /// `full` synthesis effort.
    Paper,
}

impl Profile {
    /// Parses `quick` or `paper`.
    pub fn from_name(s: &str) -> FlowResult<Profile> {
        match s {
            "quick" => Ok(Profile::Quick),
            "paper" => Ok(Profile::Paper),
            _ => Err(format!(
                "unknown profile `{}` (known: quick, paper)",
                crate::files::quote(s)
            )),
        }
    }

    /// Name as on the command line.
    pub fn name(self) -> &'static str {
        match self {
            Profile::Quick => "quick",
            Profile::Paper => "paper",
        }
    }

    /// Co-simulation length per unit.
    pub fn lines(self) -> u64 {
        match self {
            Profile::Quick => 10_000,
            Profile::Paper => 1_000_000,
        }
    }

    /// Liberty libraries.
    pub fn libraries(self) -> Vec<String> {
        match self {
            Profile::Quick => vec!["osu018".into()],
            Profile::Paper => vec!["osu018".into(), "nangate45".into(), "sky130hd".into()],
        }
    }

    /// `-O` level of the Verilated C++ ([`crate::cosim::set_opt_level`]).
    pub fn cxx_opt(self) -> u8 {
        match self {
            Profile::Quick => 1,
            Profile::Paper => 2,
        }
    }

    /// Synthesis effort ([`crate::config::Effort`]).
    pub fn effort(self) -> crate::config::Effort {
        match self {
            Profile::Quick => crate::config::Effort::Fast,
            Profile::Paper => crate::config::Effort::Full,
        }
    }

    /// How units built of other modules are synthesized ([`crate::config::Hierarchy`]): the
    /// quick profile maps each instance family once (up to half the synthesis time of a
    /// unit built of repeated blocks, a few percent more area: no optimization crosses a
    /// family's ports); the paper profile maps each unit's own logic flat, as the published
    /// figures are.
    pub fn hierarchy(self) -> crate::config::Hierarchy {
        match self {
            Profile::Quick => crate::config::Hierarchy::Families,
            Profile::Paper => crate::config::Hierarchy::Reuse,
        }
    }

    /// Applies the profile's lines, libraries, synthesis effort and hierarchy to `cfg`,
    /// except where the configuration file set them (`explicit` holds its `section.key`
    /// names, see [`crate::config::explicit_keys`]).
    pub fn apply(self, cfg: &mut Config, explicit: &std::collections::BTreeSet<String>) {
        if !explicit.contains("cosim.lines") {
            cfg.cosim.lines = self.lines();
        }
        if !explicit.contains("synth.libraries") {
            cfg.synth.libraries = self.libraries();
        }
        if !explicit.contains("synth.effort") {
            cfg.synth.effort = self.effort();
        }
        if !explicit.contains("synth.hierarchy") {
            cfg.synth.hierarchy = self.hierarchy();
        }
    }
}

/// Everything one flow run produced (`report.json`, read back by `regress --merge`).
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct FlowReport {
    /// Profile name.
    pub profile: Profile,
    /// Libraries synthesized (labels).
    pub libraries: Vec<String>,
    /// Co-simulation lines per unit.
    pub lines: u64,
    /// Worker threads.
    pub jobs: usize,
    /// `-O` level of the Verilator models.
    pub cxx_opt: u8,
    /// `-O` level of the models of units without child units, when it differs (the `quick`
    /// profile builds them at `-O0`).
    pub leaf_cxx_opt: Option<u8>,
    /// Synthesis effort and hierarchy (`fast`/`full`, `reuse`/`flat`).
    pub synth_method: String,
    /// Wall-clock seconds of the whole run.
    pub seconds: f64,
    /// Every unit matched its model (and every gate-level run).
    pub ok: bool,
    /// Every step with its time.
    pub steps: Vec<StepTime>,
    /// Co-simulation results.
    pub cosim: Vec<CosimReport>,
    /// Synthesis rows.
    pub synth: Vec<ReportRow>,
    /// Tables beside the papers' (Base+XOR Table II, adaptive Table III), when synthesized.
    pub tables: Vec<PaperTable>,
    /// Energy per line of every synthesized netlist (`--energy`; empty otherwise).
    pub energy: Vec<super::energy::EnergyRow>,
    /// The leaf units placed and routed on an FPGA (`--fpga`; empty otherwise).
    #[serde(default)]
    pub fpga: Vec<crate::synth::fpga::FpgaRow>,
    /// The formal proofs of the flow's engines (`--prove`; `None` otherwise).
    #[serde(default)]
    pub prove: Option<crate::formal::report::ProveReport>,
    /// Notes (skipped libraries, ...).
    pub notes: Vec<String>,
}

impl FlowReport {
    /// The steps that failed or mismatched, in step order.
    pub fn failures(&self) -> Vec<&StepTime> {
        self.steps.iter().filter(|s| s.is_failure()).collect()
    }

    /// The steps that were skipped (`--fail-fast`).
    pub fn skipped(&self) -> usize {
        self.steps
            .iter()
            .filter(|s| s.status == StepStatus::Skipped)
            .count()
    }
}
