//! YAML configuration of `hwzip` runs (`--config c.yaml`).
//!
//! Every section is optional and every key has a default; unknown keys and out-of-range values
//! are errors that name the key. Example (the defaults):
//!
//! ```yaml
//! zvc:                  # ZVC engine parameters (rtl::zvc::ZvcRtlParams)
//!   word_bits: 32       # 8 | 16 | 32
//!   lanes: 8            # 4 | 8 | 16 | 32 elements per cycle
//!   window: 32          # elements per mask
//!   prefix: brent-kung  # ripple | sklansky | kogge-stone | brent-kung
//! base_xor:             # Base+XOR engine (rtl::base_xor::BaseXorRtlParams)
//!   scheme: universal   # none | nbyte | universal
//!   t_bytes: 32         # transaction (sector) bytes: 16 | 32 | 64
//!   n_bytes: 4          # nbyte element size: 2 | 4 | 8
//!   fixed_base: false   # nbyte: XOR with element 0 instead of the left neighbour
//!   stages: 3           # universal stages (smallest base = t_bytes / 2^stages)
//!   zdr: true           # Zero Data Remapping
//!   zdr_bits: null      # 16 | 32 | 64; null = 16 at 2-byte pairing, else 32
//!   zdr_const: null     # null = 1 << (zdr_bits - 2), i.e. 0x40000000
//!   zdr_skip_zero_base: false
//!   half_order: upper-first   # upper-first | address
//!   dbi_group: 8        # 0 (off) | 8 | 16 | 32
//!   pipe: true          # output register on each path
//!   dec_style: speculative    # serial | speculative (Universal + ZDR decoder)
//!   dec_prefix: kogge-stone   # decoder without ZDR: ripple (the paper's serial chain/tree) | sklansky | kogge-stone | brent-kung
//! adaptive:             # adaptive link compression (rtl::adaptive::AdaptiveRtlParams)
//!   line_bytes: 64      # 32 | 64 | 128
//!   bdi_base_rule: element0   # element0 (the paper) | first-non-immediate
//!   lambda: 6           # controller: P = N + lambda*(L_C + L_D)
//!   sample_len: 7       # controller: sampled transactions per period
//!   run_len: 300        # controller: running-phase transactions per period
//!   vote_threshold: 3   # controller: wins needed to be selected
//!   use_bdi: true       # controller candidates (none is always one)
//!   use_fpc: true
//!   use_cpack: true
//!   no_quorum: bypass   # bypass | keep-previous | plurality
//!   vote_tie: sum-penalty     # sum-penalty | lower-latency
//!   sample_send: winner # winner | current
//! cpack_lossy:          # PACT'12 memory-link C-Pack (rtl::cpack_lossy::LossyRtlParams)
//!   words_per_cycle: 2  # compressor input words per cycle: 1 | 2
//!   codec:              # the block codec (model::cpack_lossy::LossyParams)
//!     block_bytes: 128  # 32 | 64 | 128
//!     codes: original   # original (C-Pack) | paper (C-Pack+Z codes)
//!     push: no-full-match       # new-only | no-full-match | all-non-zero
//!     dict_entries: 16
//!     raw_if_n_eq_raw: false    # raw when N would equal the raw chunk count
//!     t_table: [0, 8, 12, 16]   # truncated mantissa bits per tcode
//!     layout: packed    # packed | shifted
//!     fill: zero        # zero | midpoint
//!     md_bits: 8        # 4 (lossless) | 8
//!     lossy_fallback: bits  # bits (L < n(32-t)) | bytes (ceil(L/8) < n(32-t)/8)
//! buddy:                # Buddy Compression with BPC (rtl::buddy::BuddyRtlParams)
//!   bpc:
//!     sym_bits: 32      # 32 | 64 (the wide-symbol variant) | 8, 16 (the proofs' narrow ones)
//!     prefixes: kim2016 # kim2016 | alternate (the 5-bit plane prefixes)
//!     dec_tokens: 4     # decompressor tokens per cycle: 1..8 (1: serial lanes)
//!     dec_sum_stages: 1 # decompressor output-sum stages: 1 (11 cycles) .. 4 (1 GHz)
//!     dec_lanes: 1      # serial decoder lanes on alternate entries (dec_tokens 1): 1..8
//!   addr:
//!     pa_bits: 48
//!     page: 2m          # 2m | 64k
//!     boff_bits: 16     # buddy-offset bits (21 covers a 64 KB-page carve-out; the paper says 20)
//!   addr_stages: 0      # address generator as a unit: 0 (combinational) .. 3 (1 GHz)
//!   meta:               # per-MC metadata-cache slice (rtl::buddy::MetaSliceParams)
//!     size_bytes: 4096  # 4 KB per MC; 8192 is the "64 KB in 8 slices" reading
//!     ways: 4
//!     line_bytes: 128
//!     sector_bytes: 32  # a sector holds the 4-bit codes of 64 entries
//!     mshrs: 4
//!     mshr_slots: 4
//!     entry_bits: 27    # per-MC entry index (2^16 offsets x 2^14 entries / 8 MCs)
//!   mc:
//!     mcs: 8            # memory controllers (entries interleaved by metadata index)
//! cosim:
//!   lines: 100000       # windows pushed through each unit
//!   seed: 1
//!   in_gap: 0.2         # probability of an idle input cycle
//!   out_stall: 0.3      # probability of ready low
//!   max_windows: 8      # longest transfer, in windows
//! synth:
//!   clock_ns: 1.0
//!   clock_ns_by_library: { osu018: 4.0, sky130hd: 2.5 }   # overrides per library
//!   libraries: [osu018, nangate45, sky130hd]   # names or paths; missing references are skipped
//!   budget_s: 900       # CPU seconds per synthesis run (wall-clock backstop: 4 x this)
//!   cache: true         # reuse results of unchanged runs (<cache root>/synth)
//!   hierarchy: reuse    # reuse | families | flat: units that instantiate other units
//!   effort: full        # full | fast (the quick profile's default): Yosys and ABC effort
//!   macros: []          # memory macros for the RAMs: [{liberty: sram.lib, cell: NAME,
//!                       #   words: 256, width: 64, mask_bits: 8}] (docs/MEMORIES.md)
//! ```

use crate::rtl::adaptive::AdaptiveRtlParams;
use crate::rtl::base_xor::BaseXorRtlParams;
use crate::rtl::buddy::BuddyRtlParams;
use crate::rtl::cpack_lossy::LossyRtlParams;
use crate::rtl::zvc::ZvcRtlParams;
use serde::{Deserialize, Serialize};
use std::path::Path;

/// The most lines (windows, sectors, blocks, requests) one co-simulation run may ask for.
pub const MAX_COSIM_LINES: u64 = 100_000_000;

/// Clock periods synthesis accepts, in ns: 10 ps (100 GHz) to 1 µs (1 MHz). Outside that no
/// library here has a meaningful answer, and a typo (`1e-30`) would still run every step.
pub const CLOCK_NS_RANGE: std::ops::RangeInclusive<f64> = 0.01..=1000.0;

/// A whole configuration file.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Config {
    /// ZVC engine parameters.
    pub zvc: ZvcRtlParams,
    /// Base+XOR engine parameters.
    pub base_xor: BaseXorRtlParams,
    /// Adaptive link compression parameters.
    pub adaptive: AdaptiveRtlParams,
    /// PACT'12 memory-link C-Pack parameters.
    pub cpack_lossy: LossyRtlParams,
    /// Buddy Compression (ISCA'20) parameters.
    pub buddy: BuddyRtlParams,
    /// Co-simulation settings.
    pub cosim: CosimConfig,
    /// Synthesis settings.
    pub synth: SynthConfig,
    /// `hwzip compress --truncate`: mantissa bits cpack-lossy truncates (0: lossless; one of
    /// `cpack_lossy.codec.t_table`). A command-line setting, not a YAML key.
    #[serde(skip)]
    pub compress_truncate: u32,
}

/// Co-simulation settings.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct CosimConfig {
    /// Windows (lines) pushed through each unit.
    pub lines: u64,
    /// Random seed.
    pub seed: u64,
    /// Probability of an idle input cycle between beats (0 ≤ p < 1).
    pub in_gap: f64,
    /// Probability that the sink holds `ready` low in a cycle (0 ≤ p < 1).
    pub out_stall: f64,
    /// Longest transfer, in windows (≥ 1).
    pub max_windows: u32,
}

impl Default for CosimConfig {
    fn default() -> Self {
        CosimConfig {
            lines: 100_000,
            seed: 1,
            in_gap: 0.2,
            out_stall: 0.3,
            max_windows: 8,
        }
    }
}

/// `synth.buffer_fanout` by default (see [`SynthConfig::buffer_fanout`]).
pub const DEFAULT_BUFFER_FANOUT: u32 = 6;

/// Synthesis settings.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct SynthConfig {
    /// Clock period in ns (timing constraint and ABC delay target).
    pub clock_ns: f64,
    /// Per-library clock period overrides (library name as in `libraries` → ns), so that a
    /// slow library is not mapped against an unreachable target (which inflates area).
    pub clock_ns_by_library: std::collections::BTreeMap<String, f64>,
    /// Liberty libraries: `osu018`, `nangate45`, `sky130hd` or a path to a `.lib`/`.lib.gz`.
    pub libraries: Vec<String>,
    /// CPU-time budget per synthesis run (Yosys, ABC and OpenSTA together), seconds; a
    /// wall-clock backstop of 4 times it catches a tool that hangs without computing.
    pub budget_s: u64,
    /// Reuse a synthesis result when nothing that can change it changed (Verilog, liberty,
    /// scripts, clock, tool versions; see `synth::cache`).
    pub cache: bool,
    /// How a unit that instantiates other units (Buddy's controller, the PACT'12 MC top, the
    /// adaptive link units) is synthesized: `reuse` maps the parent's own logic and reads
    /// in the netlists its child units got in their own runs (each child is mapped once;
    /// timing covers the whole netlist), `flat` maps everything together as one design.
    pub hierarchy: Hierarchy,
    /// How hard Yosys and ABC work: `full` (the figures docs/RESULTS.md quotes) or `fast` (the
    /// quick profile: no ABC pass inside Yosys' `synth`, and an ABC script that maps once
    /// without choice computation, SAT sweeping or retiming; about twice as fast on large
    /// units, a few percent more area).
    pub effort: Effort,
    /// Most loads ABC's `buffer` pass lets one gate or buffer drive when it buffers a
    /// combinational net (`buffer -N`), 2..=32. 6 by default: ABC builds its trees of the
    /// smallest buffer, and at 16 loads per `BUF_X1` the trees' depth cost up to 0.5 ns on
    /// a 1 ns path (docs/TOOLCHAIN.md has the measured sweep: 4, 6, 8, 16).
    pub buffer_fanout: u32,
    /// Memory macros the units' RAMs may be built of (`{liberty, cell, words, width,
    /// mask_bits}`); each RAM is reported with the smallest-area one that fits
    /// (docs/MEMORIES.md).
    #[serde(default)]
    pub macros: Vec<MacroSpec>,
    /// Where synthesis results are shared within one run when `cache` is off (set by the
    /// flow; not a YAML key).
    #[serde(skip)]
    pub run_cache: Option<std::path::PathBuf>,
}

/// `synth.macros`: a memory macro named by the user (`crate::synth::memories`): its
/// liberty, its cell and its dimensions.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MacroSpec {
    /// Liberty file (`.lib`) holding the cell.
    pub liberty: std::path::PathBuf,
    /// Cell name in it.
    pub cell: String,
    /// Words of one macro.
    pub words: u32,
    /// Bits per word.
    pub width: u32,
    /// Bits per write-mask bit (`None`: the macro writes whole words).
    #[serde(default)]
    pub mask_bits: Option<u32>,
}

impl MacroSpec {
    /// Checks the dimensions.
    pub fn validate(&self) -> Result<(), String> {
        let mask_ok = self
            .mask_bits
            .is_none_or(|m| m > 0 && self.width.is_multiple_of(m));
        if self.words == 0 || self.width == 0 || !mask_ok || self.cell.is_empty() {
            return Err(format!(
                "memory macro `{}`: needs a cell name, words and width above 0 and a mask \
                 width that divides the word",
                self.cell
            ));
        }
        Ok(())
    }
}

/// `synth.effort`: how hard Yosys and ABC work.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Effort {
    /// The full flow (`synth/abc.script.in`).
    #[default]
    Full,
    /// The quick flow (`synth -noabc`, `synth/abc_fast.script.in`).
    Fast,
}

impl Effort {
    /// Name as in the configuration.
    pub fn name(self) -> &'static str {
        match self {
            Effort::Full => "full",
            Effort::Fast => "fast",
        }
    }
}

/// `synth.hierarchy`: how units that instantiate other units are synthesized.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Hierarchy {
    /// Each child unit is mapped once, in its own run, and its netlist reused in the parent.
    #[default]
    Reuse,
    /// As `reuse`, and also every other child module the parent instantiates more than once
    /// (an instance family: lanes, plane encoders, adder cells) is mapped once and its netlist
    /// reused for each instance. Quicker on units built of repeated blocks; no optimization
    /// crosses the family's ports.
    Families,
    /// The parent and its children are flattened and mapped as one design.
    Flat,
}

impl Hierarchy {
    /// Name as in the configuration.
    pub fn name(self) -> &'static str {
        match self {
            Hierarchy::Reuse => "reuse",
            Hierarchy::Families => "families",
            Hierarchy::Flat => "flat",
        }
    }
}

impl Default for SynthConfig {
    fn default() -> Self {
        SynthConfig {
            clock_ns: 1.0,
            clock_ns_by_library: [("osu018".to_string(), 4.0), ("sky130hd".to_string(), 2.5)]
                .into_iter()
                .collect(),
            libraries: vec!["osu018".into(), "nangate45".into(), "sky130hd".into()],
            budget_s: 900,
            cache: true,
            hierarchy: Hierarchy::Reuse,
            effort: Effort::Full,
            buffer_fanout: DEFAULT_BUFFER_FANOUT,
            macros: Vec::new(),
            run_cache: None,
        }
    }
}

impl SynthConfig {
    /// The clock period for library `label`: `clock_ns_by_library`, else `clock_ns`.
    pub fn clock_for(&self, label: &str) -> f64 {
        self.clock_ns_by_library
            .get(label)
            .copied()
            .unwrap_or(self.clock_ns)
    }
}

/// The `section.key` names set explicitly in a YAML configuration text (for settings whose
/// default comes from elsewhere, such as a flow profile). Unparsable text gives none.
pub fn explicit_keys(text: &str) -> std::collections::BTreeSet<String> {
    let mut out = std::collections::BTreeSet::new();
    if let Ok(serde_yaml::Value::Mapping(top)) = serde_yaml::from_str::<serde_yaml::Value>(text) {
        for (sec, v) in top {
            let (Some(sec), serde_yaml::Value::Mapping(m)) = (sec.as_str(), v) else {
                continue;
            };
            for k in m.keys().filter_map(|k| k.as_str()) {
                out.insert(format!("{}.{}", sec, k));
            }
        }
    }
    out
}

impl Config {
    /// Parses YAML text and validates every value.
    pub fn from_yaml(text: &str) -> Result<Config, String> {
        crate::files::input::check_yaml_nesting(text).map_err(|e| format!("config: {}", e))?;
        let c: Config = if text.trim().is_empty() {
            Config::default()
        } else {
            serde_yaml::from_str(text)
                .map_err(|e| format!("config: {}", crate::files::clip(&e.to_string())))?
        };
        c.validate()?;
        Ok(c)
    }

    /// Reads and validates a configuration file.
    pub fn load(path: &Path) -> Result<Config, String> {
        let text = crate::files::input::read_to_string(path, crate::files::input::Purpose::Config)
            .map_err(|e| format!("cannot read config {}: {}", path.display(), e))?;
        Config::from_yaml(&text).map_err(|e| format!("{}: {}", path.display(), e))
    }

    /// Checks ranges; the message names the key.
    pub fn validate(&self) -> Result<(), String> {
        self.zvc.validate().map_err(|e| format!("zvc: {}", e))?;
        self.base_xor
            .validate()
            .map_err(|e| format!("base_xor: {}", e))?;
        self.adaptive
            .validate()
            .map_err(|e| format!("adaptive: {}", e))?;
        self.cpack_lossy
            .validate()
            .map_err(|e| format!("cpack_lossy: {}", e))?;
        self.buddy.validate().map_err(|e| format!("buddy: {}", e))?;
        let c = &self.cosim;
        if !(1..=MAX_COSIM_LINES).contains(&c.lines) {
            return Err(format!(
                "cosim.lines = {} must be in 1..={} (about an hour for the slowest unit)",
                c.lines, MAX_COSIM_LINES
            ));
        }
        for (k, v) in [("cosim.in_gap", c.in_gap), ("cosim.out_stall", c.out_stall)] {
            if !(0.0..1.0).contains(&v) {
                return Err(format!("{} = {} must be in [0, 1)", k, v));
            }
        }
        if c.max_windows == 0 {
            return Err("cosim.max_windows must be at least 1".into());
        }
        let s = &self.synth;
        if !(2..=32).contains(&s.buffer_fanout) {
            return Err(format!(
                "synth.buffer_fanout = {} must be in 2..=32",
                s.buffer_fanout
            ));
        }
        if !CLOCK_NS_RANGE.contains(&s.clock_ns) {
            return Err(format!(
                "synth.clock_ns = {} must be in [{}, {}] ns",
                s.clock_ns,
                CLOCK_NS_RANGE.start(),
                CLOCK_NS_RANGE.end()
            ));
        }
        for (lib, ns) in &s.clock_ns_by_library {
            if !CLOCK_NS_RANGE.contains(ns) {
                return Err(format!(
                    "synth.clock_ns_by_library.{} = {} must be in [{}, {}] ns",
                    crate::files::quote(lib),
                    ns,
                    CLOCK_NS_RANGE.start(),
                    CLOCK_NS_RANGE.end()
                ));
            }
        }
        for m in &s.macros {
            m.validate().map_err(|e| format!("synth.macros: {e}"))?;
        }
        if s.budget_s == 0 {
            return Err("synth.budget_s must be at least 1".into());
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_and_partial_files() {
        assert_eq!(Config::from_yaml("").unwrap(), Config::default());
        let c =
            Config::from_yaml("zvc:\n  word_bits: 16\n  lanes: 32\ncosim:\n  lines: 5\n").unwrap();
        assert_eq!(c.zvc.word_bits, 16);
        assert_eq!(c.zvc.lanes, 32);
        assert_eq!(c.zvc.window, 32);
        assert_eq!(c.cosim.lines, 5);
        let c = Config::from_yaml("zvc:\n  prefix: kogge-stone\n").unwrap();
        assert_eq!(c.zvc.prefix, crate::hdl::PrefixTopology::KoggeStone);
        // The documented scheme names (`nbyte`, as `Scheme::name`).
        let c = Config::from_yaml("base_xor: {scheme: nbyte, n_bytes: 8}\n").unwrap();
        assert_eq!(c.base_xor.scheme, crate::model::base_xor::Scheme::NByte);
        assert_eq!(c.base_xor.n_bytes, 8);
    }

    #[test]
    fn bad_configs_name_the_key() {
        let e = Config::from_yaml("zvc:\n  lanez: 8\n").unwrap_err();
        assert!(e.contains("lanez"), "{}", e);
        let e = Config::from_yaml("zvc:\n  lanes: 6\n").unwrap_err();
        assert!(e.contains("lanes = 6"), "{}", e);
        let e = Config::from_yaml("cosim:\n  out_stall: 1.5\n").unwrap_err();
        assert!(e.contains("cosim.out_stall"), "{}", e);
        let e = Config::from_yaml("engine: zvc\n").unwrap_err();
        assert!(e.contains("engine"), "{}", e);
        let e = Config::from_yaml("zvc: [1, 2]\n").unwrap_err();
        assert!(e.contains("config"), "{}", e);
        let e = Config::from_yaml("synth:\n  clock_ns: -1\n").unwrap_err();
        assert!(e.contains("clock_ns"), "{}", e);
    }
}
