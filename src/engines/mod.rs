//! The engine registry: every compression engine family is one value implementing
//! [`Engine`], listed once in [`ALL`].
//!
//! The CLI (`hwzip gen | cosim | synth | eval | compress | flow | regress`) and the flow work
//! from this list only: they hold no per-engine match arms. An engine brings its golden model
//! (`model/`), its generators (`rtl/`), its scoreboard (`cosim/`) and one file here that ties
//! them to the trait; adding it to the flow is one line in [`ALL`] (and its parameter section
//! in [`crate::config::Config`]). See `docs/ADDING_AN_ENGINE.md`.

pub mod adaptive;
pub mod adaptive_flags;
pub mod adaptive_table3;
pub mod base_xor;
pub mod base_xor_codes;
pub mod buddy;
pub mod buddy_flags;
pub mod buddy_sums;
pub mod codecs;
pub mod cpack_lossy;
pub mod cpack_lossy_table4;
pub mod files;
pub mod zvc;
pub mod zvc_flags;

use crate::config::Config;
use crate::cosim::dut::Dut;
use crate::cosim::run::RunConfig;
use crate::cosim::stream::{RunStats, Timing};
use crate::hdl::Module;
use crate::synth::paper::PaperMark;
use crate::synth::{Liberty, ReportRow};
use serde::{Deserialize, Serialize};
use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// Every engine, in report order. Adding an engine to the flow is one line here.
pub static ALL: &[&dyn Engine] = &[
    &zvc::Zvc,
    &base_xor::BaseXor,
    &adaptive::Adaptive,
    &cpack_lossy::CpackLossy,
    &buddy::Buddy,
];

/// A registered engine.
pub type EngineRef = &'static dyn Engine;

/// Looks an engine up by its CLI name; the error lists the known engines.
pub fn by_name(name: &str) -> Result<EngineRef, String> {
    ALL.iter()
        .copied()
        .find(|e| e.name() == name)
        .ok_or_else(|| {
            let known: Vec<&str> = ALL.iter().map(|e| e.name()).collect();
            format!(
                "unknown engine `{}` (known: {})",
                crate::files::quote(name),
                known.join(", ")
            )
        })
}

/// One synthesizable unit of an engine.
#[derive(Clone, Debug)]
pub struct UnitDesign {
    /// Engine name.
    pub engine: &'static str,
    /// Unit name (`compressor`, `decompressor`, …).
    pub unit: &'static str,
    /// The generated top module.
    pub top: Arc<Module>,
    /// Parameter description for reports.
    pub params: String,
    /// Input bytes per beat (the unit's datapath width).
    pub beat_bytes: u32,
}

/// What `hwzip eval` asks of an engine. Each engine reads the fields it uses and rejects
/// requests it cannot serve with a one-line error.
#[derive(Clone, Debug)]
pub struct EvalRequest {
    /// Trace files.
    pub traces: Vec<PathBuf>,
    /// Synthetic classes or line profiles by name (`all` for every one).
    pub classes: Vec<String>,
    /// Sectors or lines per synthetic class.
    pub count: usize,
    /// Seed of the synthetic classes.
    pub seed: u64,
    /// Adaptive: λ of the penalty P = N + λ(L_C + L_D) (default 6).
    pub lambda: Option<u32>,
    /// Base+XOR: extra I/O energy per transmitted 1, pJ (default `model::ones::PJ_PER_ONE`).
    pub pj_per_one: Option<f64>,
    /// Base+XOR: toggles between transactions, `stream` (default) or `idle`.
    pub toggles: Option<String>,
}

/// An evaluation, as the CLI prints it.
#[derive(Clone, Debug)]
pub struct EvalOutput {
    /// Markdown for the terminal.
    pub markdown: String,
    /// The same results as JSON (`--json`).
    pub json: String,
    /// Charts the engine draws itself for `report.html` (besides those derived from the
    /// Markdown tables), such as the adaptive policy's decisions over time.
    pub charts: Vec<crate::report::Chart>,
}

impl EvalOutput {
    /// Both renderings of `value` (serialized to JSON) with the given Markdown.
    pub fn new<T: Serialize + ?Sized>(value: &T, markdown: String) -> Result<EvalOutput, String> {
        Ok(EvalOutput {
            markdown,
            json: serde_json::to_string_pretty(value).map_err(|e| e.to_string())?,
            charts: Vec::new(),
        })
    }
}

/// A table set beside a paper's (Base+XOR Table II, adaptive Table III), as Markdown.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PaperTable {
    /// Engine name.
    pub engine: String,
    /// Heading (`Base+XOR: Table II cores (combinational)`).
    pub title: String,
    /// File stem the flow writes it to (`table2` → `table2.md`).
    pub file: String,
    /// The table.
    pub markdown: String,
}

impl PaperTable {
    /// The table of `engine` under `title`, written to `<file>.md`; `None` when `markdown`
    /// is empty (no row of the table was synthesized).
    pub fn of(engine: &str, title: &str, file: &str, markdown: String) -> Option<PaperTable> {
        (!markdown.is_empty()).then(|| PaperTable {
            engine: engine.into(),
            title: title.into(),
            file: file.into(),
            markdown,
        })
    }
}

/// The [`Engine`] methods `cosim_top`, `cosim` and `measure` of an engine whose RTL
/// parameters are the configuration's `$field` and implement
/// [`crate::cosim::run::UnitBench`]; `|cfg, run| stim` makes the bench's stimulus settings
/// from the configuration and the run settings.
macro_rules! bench_methods {
    ($field:ident, |$cfg:ident, $run:ident| $stim:expr) => {
        fn cosim_top(
            &self,
            cfg: &$crate::config::Config,
            unit: &str,
        ) -> Result<std::sync::Arc<$crate::hdl::Module>, String> {
            $crate::cosim::run::unit_top(&cfg.$field, unit)
        }

        fn cosim(
            &self,
            dut: &mut dyn $crate::cosim::dut::Dut,
            $cfg: &$crate::config::Config,
            unit: &str,
            $run: &$crate::cosim::run::RunConfig,
            progress: &mut dyn FnMut(&$crate::cosim::stream::RunStats),
        ) -> Result<$crate::cosim::stream::RunStats, String> {
            $crate::cosim::run::unit_cosim(dut, &$cfg.$field, unit, &$stim, progress)
        }

        fn measure(
            &self,
            dut: &mut dyn $crate::cosim::dut::Dut,
            cfg: &$crate::config::Config,
            unit: &str,
        ) -> Result<$crate::cosim::stream::Timing, String> {
            $crate::cosim::run::unit_measure(dut, &cfg.$field, unit)
        }
    };
}
pub(crate) use bench_methods;

/// The fixed facts that name an engine (one constant per engine).
#[derive(Debug)]
pub struct Identity {
    /// CLI name (`zvc`, `base-xor`, `adaptive`).
    pub name: &'static str,
    /// Its section in the YAML configuration (`zvc`, `base_xor`, `adaptive`).
    pub section: &'static str,
    /// Its heading in docs/RESULTS.md (and so the page's anchor): `ZVC`, `Base+XOR`.
    pub title: &'static str,
    /// One sentence on what the engine is and which paper it follows (docs/RESULTS.md).
    pub about: &'static str,
    /// Synthesizable units, in report order (what `--unit` accepts for `synth`).
    pub units: &'static [&'static str],
    /// Units `hwzip cosim` accepts besides the synthesizable ones (loop-backs); the first is
    /// co-simulated by the flow and `--unit all` as `loopback`.
    pub test_units: &'static [&'static str],
}

/// One compression engine family: its units, their generators, scoreboards, synthesis
/// extras, evaluation and file compression. Unit names are plain strings so that the CLI and
/// the flow need no per-engine types; each engine parses them into its own unit enum.
pub trait Engine: Sync {
    /// Who the engine is: its names, its page heading and its units.
    fn id(&self) -> &'static Identity;

    /// CLI name (`zvc`, `base-xor`, `adaptive`).
    fn name(&self) -> &'static str {
        self.id().name
    }

    /// Its section in the YAML configuration (`zvc`, `base_xor`, `adaptive`).
    fn section(&self) -> &'static str {
        self.id().section
    }

    /// Synthesizable units, in report order (what `--unit` accepts for `synth`).
    fn unit_names(&self) -> &'static [&'static str] {
        self.id().units
    }

    /// Units `hwzip cosim` accepts besides [`Engine::unit_names`] (loop-backs); the first is
    /// co-simulated by the flow and `--unit all` as `loopback`.
    fn test_units(&self) -> &'static [&'static str] {
        self.id().test_units
    }

    /// Its heading in docs/RESULTS.md (and so the page's anchor): `ZVC`, `Base+XOR`.
    fn title(&self) -> &'static str {
        self.id().title
    }

    /// One sentence on what the engine is and which paper it follows (docs/RESULTS.md).
    fn about(&self) -> &'static str {
        self.id().about
    }

    /// Parameter description of the configuration (reports).
    fn describe(&self, cfg: &Config) -> String;

    /// Generates every synthesizable unit for the configuration.
    fn units(&self, cfg: &Config) -> Result<Vec<UnitDesign>, String>;

    /// Modules that `hwzip gen` writes besides the units (cores a paper table synthesizes),
    /// so they land in `rtl_out/` and are linted.
    fn extra_modules(&self, _cfg: &Config) -> Result<Vec<Arc<Module>>, String> {
        Ok(Vec::new())
    }

    /// The top module that `unit` (a unit or test unit) co-simulates.
    fn cosim_top(&self, cfg: &Config, unit: &str) -> Result<Arc<Module>, String>;

    /// Runs `unit` on `dut` against the golden model with `stim`'s random gaps and stalls;
    /// a mismatch stops the run and is in [`RunStats::first_mismatch`].
    fn cosim(
        &self,
        dut: &mut dyn Dut,
        cfg: &Config,
        unit: &str,
        stim: &RunConfig,
        progress: &mut dyn FnMut(&RunStats),
    ) -> Result<RunStats, String>;

    /// Latency and throughput of `unit` in simulation (no back-pressure).
    fn measure(&self, dut: &mut dyn Dut, cfg: &Config, unit: &str) -> Result<Timing, String>;

    /// Element width a `--trace` file is read with for co-simulation.
    fn trace_word_bits(&self, _cfg: &Config) -> u32 {
        32
    }

    /// `hwzip eval`: the golden model on traces and synthetic classes.
    fn eval(&self, cfg: &Config, req: &EvalRequest) -> Result<EvalOutput, String>;

    /// Whether [`Engine::core_table`] exists (the flow schedules it as one step).
    fn has_core_table(&self) -> bool {
        false
    }

    /// Synthesizes the engine's combinational cores beside a paper's table on `libs` into
    /// `out` (Base+XOR Table II).
    fn core_table(
        &self,
        _cfg: &Config,
        _libs: &[Liberty],
        _out: &Path,
        _log: &mut dyn FnMut(&str),
    ) -> Result<PaperTable, String> {
        Err(format!("{} has no core table", self.name()))
    }

    /// A table built from the engine's synthesis rows beside a paper's (adaptive Table III).
    fn rows_table(&self, _rows: &[ReportRow]) -> Option<PaperTable> {
        None
    }

    /// The paper's published figures for `unit`, with its latency as the paper counts it
    /// (`None`: the paper gives none for the unit). See [`paper_mark`].
    fn paper_mark(&self, _unit: &str) -> Option<PaperMark> {
        None
    }

    /// A paper's latency of `unit` counted as hwzip counts it, from the cycle that accepts
    /// the input to the first output. Most papers count the cycles after the accepting one
    /// (IPDPS'19 Table III, PACT'12 Table 4, Buddy's added cycles), so one is added.
    fn latency_as_ours(&self, _unit: &str, published: u32) -> u32 {
        published + 1
    }

    /// Whether `hwzip eval` has synthetic data for the engine (classes, `--class all`); an
    /// engine without takes trace files only.
    fn has_synthetic_classes(&self) -> bool {
        true
    }

    /// Whether the engine's design uses the shared cache + MSHR block (`rtl::cache`), which
    /// the long tier then co-simulates on its own.
    fn uses_cache_block(&self) -> bool {
        false
    }

    /// Whether the long tier co-simulates the engine's osu018 netlists at gate level (the
    /// units small enough for a gate-level model in minutes).
    fn gate_level_in_long_tier(&self) -> bool {
        false
    }

    /// Whether `hwzip compress --truncate N` (lossy mantissa truncation) applies.
    fn truncates(&self) -> bool {
        false
    }

    /// The paper's published energy figures, which `flow::energy` sets beside the measured
    /// pJ per line of the units each covers.
    fn paper_energy(&self) -> &'static [PaperEnergy] {
        &[]
    }

    /// The round trips `hwzip prove` checks: loop-back tops with how their output lines
    /// relate to their input lines (none by default).
    fn round_trips(&self, _cfg: &Config) -> Result<Vec<crate::formal::RoundTrip>, String> {
        Ok(Vec::new())
    }

    /// The decompressors whose error flag `hwzip prove` checks against a reference of the
    /// model's verdict on corrupt input (property `error`). None by default.
    fn error_flags(&self, _cfg: &Config) -> Result<Vec<crate::formal::ErrorFlag>, String> {
        Ok(Vec::new())
    }

    /// The carry-save prefix-sum networks `hwzip prove` checks (property `sums`): each
    /// output lane the sum of the input lanes up to it, for every input. None by default.
    fn sum_nets(&self, _cfg: &Config) -> Result<Vec<crate::formal::SumNet>, String> {
        Ok(Vec::new())
    }

    /// The combinational link codes `hwzip prove` checks (property `code`): decode(encode(x))
    /// = x and the encoder's output against a reference, for every input. None by default.
    fn codes(&self, _cfg: &Config) -> Result<Vec<crate::formal::Code>, String> {
        Ok(Vec::new())
    }

    /// `hwzip compress`: `data` into a self-describing container.
    fn compress(&self, _cfg: &Config, _data: &[u8]) -> Result<Packed, String> {
        Err(no_container(self.name()))
    }

    /// `hwzip decompress`: a container written by [`Engine::compress`].
    fn decompress(&self, _data: &[u8]) -> Result<Packed, String> {
        Err(no_container(self.name()))
    }
}

/// A paper's published energy for one unit or a compressor/decompressor pair.
#[derive(Clone, Copy, Debug)]
pub struct PaperEnergy {
    /// What the figure is: the units, the quantity and per what.
    pub what: &'static str,
    /// The paper's figure, pJ, as published.
    pub pj: &'static str,
    /// The paper's node (and any scaling it applied).
    pub node: &'static str,
    /// The units whose measured pJ per line add up to the figure.
    pub units: &'static [&'static str],
}

/// What `hwzip compress` and `decompress` produce: the output bytes and the statistics
/// `--stats` prints (Markdown: lines, encoding histogram, ratio).
#[derive(Clone, Debug, Default)]
pub struct Packed {
    /// The container (compress) or the original file (decompress).
    pub bytes: Vec<u8>,
    /// The statistics.
    pub stats: String,
}

impl fmt::Debug for dyn Engine {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl PartialEq for dyn Engine {
    fn eq(&self, other: &Self) -> bool {
        self.name() == other.name()
    }
}

/// The units `hwzip cosim --unit all` and the flow co-simulate: the engine's units and its
/// loop-back (the first test unit, named `loopback`).
pub fn cosim_units(engine: EngineRef) -> Vec<String> {
    let mut v: Vec<String> = engine.unit_names().iter().map(|s| s.to_string()).collect();
    if !engine.test_units().is_empty() {
        v.push("loopback".into());
    }
    v
}

/// `units` without the engine units missing from `designs` (the units a configuration
/// has: no Buddy controller when the BPC entries are not 128 B); loop-backs and test units
/// stay.
pub fn configured(engine: EngineRef, designs: &[UnitDesign], units: Vec<String>) -> Vec<String> {
    units
        .into_iter()
        .filter(|u| {
            !engine.unit_names().contains(&u.as_str()) || designs.iter().any(|d| d.unit == u)
        })
        .collect()
}

/// Every unit `hwzip cosim --unit` accepts: [`cosim_units`] and the test-only loop-backs.
pub fn known_cosim_units(engine: EngineRef) -> Vec<String> {
    let mut v = cosim_units(engine);
    for t in engine.test_units() {
        if !v.iter().any(|u| u == t) {
            v.push(t.to_string());
        }
    }
    v
}

/// The paper's figures for `unit` of the engine named `engine`, with the latency also
/// counted as hwzip counts it ([`Engine::latency_as_ours`]); `None` for an unknown engine or
/// a unit the paper gives no figure for.
pub fn paper_mark(engine: &str, unit: &str) -> Option<PaperMark> {
    let e = by_name(engine).ok()?;
    e.paper_mark(unit).map(|m| PaperMark {
        latency_ours: m.latency.map(|l| e.latency_as_ours(unit, l)),
        ..m
    })
}

fn no_container(name: &str) -> String {
    format!(
        "{} has no file container yet: use `hwzip cosim|synth --engine {}` for its hardware",
        name, name
    )
}

/// A trace file as bytes ([`crate::trace::file::load_bytes`]), zero-padded to whole blocks
/// of `block` bytes (sectors, lines); an empty trace is an error.
pub(crate) fn load_blocks(path: &Path, block: usize) -> Result<Vec<u8>, String> {
    let mut bytes = crate::trace::file::load_bytes(path).map_err(|e| e.to_string())?;
    if bytes.is_empty() {
        return Err(format!("{}: empty trace", path.display()));
    }
    bytes.resize(bytes.len().div_ceil(block) * block, 0);
    Ok(bytes)
}

/// Largest amount of synthetic data `hwzip eval` generates per class (1 GiB).
pub const MAX_EVAL_BYTES: usize = 1 << 30;

/// Checks `count` blocks of `block` bytes per synthetic class against [`MAX_EVAL_BYTES`].
pub(crate) fn check_count(count: usize, block: usize, what: &str) -> Result<(), String> {
    if count == 0 || count.checked_mul(block).is_none_or(|b| b > MAX_EVAL_BYTES) {
        return Err(format!(
            "--lines {} must be in 1..={} ({} of {} B, at most 1 GiB per class)",
            count,
            MAX_EVAL_BYTES / block,
            what,
            block
        ));
    }
    Ok(())
}

impl EvalRequest {
    /// The synthetic classes and extra studies the request names: `all` is every class of
    /// `all` and every study, a name in `studies` turns that study on, and `parse` reads any
    /// other name. With any class, `--lines` is checked as that many `block`-byte `what`.
    pub(crate) fn classes<C>(
        &self,
        all: impl Fn() -> Vec<C>,
        studies: &[&str],
        parse: impl Fn(&str) -> Result<C, String>,
        (block, what): (usize, &str),
    ) -> Result<(Vec<C>, Vec<bool>), String> {
        let mut classes = Vec::new();
        let mut on = vec![false; studies.len()];
        for name in &self.classes {
            if name == "all" {
                classes.extend(all());
                on.fill(true);
            } else if let Some(i) = studies.iter().position(|s| s == name) {
                on[i] = true;
            } else {
                classes.push(parse(name)?);
            }
        }
        if !classes.is_empty() {
            check_count(self.count, block, what)?;
        }
        Ok((classes, on))
    }

    /// Accesses per stream of a cache study: at least `min`; `--lines` above `max` is
    /// refused (`per`: what an access is, e.g. `reads`).
    pub(crate) fn study_len(
        &self,
        (min, max): (usize, usize),
        per: &str,
        study: &str,
    ) -> Result<usize, String> {
        if self.count > max {
            return Err(format!(
                "--lines {} is too many {per} per stream for the {study} (at most {max})",
                self.count
            ));
        }
        Ok(self.count.max(min))
    }

    /// A request for `classes` with no traces and no engine options (tests).
    #[cfg(test)]
    pub(crate) fn of_classes(classes: &[&str]) -> Self {
        EvalRequest {
            traces: Vec::new(),
            classes: classes.iter().map(|s| s.to_string()).collect(),
            count: 64,
            seed: 3,
            lambda: None,
            pj_per_one: None,
            toggles: None,
        }
    }

    /// Refuses the engine-specific options (`--lambda`, `--pj-per-one`, `--toggles`) that
    /// this request sets and `engine` does not take; `takes` lists those it does.
    pub(crate) fn check_options(&self, engine: &str, takes: &[&str]) -> Result<(), String> {
        let set = [
            ("--lambda", self.lambda.is_some()),
            ("--pj-per-one", self.pj_per_one.is_some()),
            ("--toggles", self.toggles.is_some()),
        ];
        let unused: Vec<&str> = set
            .iter()
            .filter(|(name, on)| *on && !takes.contains(name))
            .map(|(name, _)| *name)
            .collect();
        if unused.is_empty() {
            return Ok(());
        }
        Err(format!(
            "eval --engine {} does not take {}",
            engine,
            unused.join(" or ")
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paper_marks_come_from_the_papers_tables() {
        let m = paper_mark("adaptive", "fpc_decomp").unwrap();
        assert_eq!(m.latency, Some(5));
        let k = m.kge.unwrap();
        assert!((k - 4428.0 / 2.0 / 0.0875 / 1000.0).abs() < 1e-9);
        let c = paper_mark("cpack-lossy", "compressor").unwrap();
        assert_eq!(c.mhz, Some(1250.0));
        assert!(paper_mark("base-xor", "encoder").is_none());
        assert!(paper_mark("no-such-engine", "compressor").is_none());
        // Bounds are kept apart from values.
        let md = paper_mark("cpack-lossy", "md-cache").unwrap();
        assert_eq!((md.kge, md.mhz), (None, None));
        assert_eq!(md.mhz_at_least, Some(1250.0));
        assert!((md.kge_at_most.unwrap() - 50_000.0 / 1.44 / 1000.0).abs() < 1e-9);
        // Latencies counted as ours: the accepting cycle added, except cDMA's line latency.
        assert_eq!(m.latency_ours, Some(6));
        let zvc = |u| paper_mark("zvc", u).unwrap().latency_ours;
        assert_eq!((zvc("compressor"), zvc("decompressor")), (Some(6), Some(3)));
        assert_eq!(
            paper_mark("buddy", "bpc-decompress").unwrap().latency_ours,
            Some(12)
        );
    }

    #[test]
    fn registry_names_sections_and_units_are_unique() {
        let mut names = std::collections::BTreeSet::new();
        let mut sections = std::collections::BTreeSet::new();
        for e in ALL {
            assert!(names.insert(e.name()), "{}", e.name());
            assert!(sections.insert(e.section()), "{}", e.section());
            assert_eq!(by_name(e.name()).unwrap(), *e);
            let units = cosim_units(*e);
            let set: std::collections::BTreeSet<_> = units.iter().collect();
            assert_eq!(set.len(), units.len(), "{}", e.name());
            let designs = e.units(&Config::default()).unwrap();
            let got: Vec<&str> = designs.iter().map(|d| d.unit).collect();
            assert_eq!(got, e.unit_names(), "{}", e.name());
            assert!(designs.iter().all(|d| d.engine == e.name()));
        }
        let err = by_name("lz4").unwrap_err();
        assert!(err.contains("zvc") && err.contains("adaptive"), "{}", err);
    }
}
