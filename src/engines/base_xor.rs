//! Base+XOR Transfer, Zero Data Remapping and DBI (HPCA'18) in the registry:
//! `model::base_xor`, `rtl::base_xor`, `cosim::base_xor`, and the Table II cores.

use super::{load_blocks, Engine, EvalOutput, EvalRequest, Identity, PaperTable, UnitDesign};
use crate::config::Config;
use crate::cosim::base_xor as bench;
use crate::cosim::run::Stimulus;
use crate::hdl::Module;
use crate::model::ones;
use crate::rtl::base_xor as rtl;
use crate::synth::cores::{self, CoreSpec, PaperFigures, PaperNode};
use crate::synth::Liberty;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

/// The Base+XOR engine: write-path encoder, read-path decoder, DQ serializer/deserializer.
pub struct BaseXor;

/// The paper's node for the normalisation: TSMC 16 nm FinFET. The paper gives no gate size;
/// a 16FF NAND2_X1 is taken as 0.15 µm² (3 CPP × 90 nm on a 9-track, 0.576 µm row) — an
/// assumption, and the paper's areas include wires. One XOR level = 24 ps (Table II's
/// one-level encoders; 360 = 15 × 24, 168 = 7 × 24, 72 = 3 × 24).
pub fn paper_node() -> PaperNode {
    PaperNode {
        label: "TSMC 16 nm FinFET".into(),
        nand2_um2: 0.15,
        level_ps: 24.0,
    }
}

/// The Table II cores as synthesis specifications.
fn core_specs() -> Result<Vec<CoreSpec>, String> {
    Ok(rtl::table2::cores()
        .map_err(|e| e.to_string())?
        .into_iter()
        .map(|c| CoreSpec {
            row: c.row,
            dir: c.dir,
            module: c.module,
            xor_levels: c.xor_levels,
            paper: c.paper.map(|f| PaperFigures {
                area_um2: f.area_um2,
                latency_ps: f.latency_ps,
            }),
        })
        .collect())
}

impl Engine for BaseXor {
    /// HPCA'18's encoder energy (Universal base + ZDR) per 32 B sector, at 16 nm.
    fn paper_energy(&self) -> &'static [super::PaperEnergy] {
        const E: [super::PaperEnergy; 1] = [super::PaperEnergy {
            what: "Base+XOR Universal+ZDR enc, pJ per 32 B",
            pj: "0.201",
            node: "16 nm",
            units: &["encoder"],
        }];
        &E
    }

    fn id(&self) -> &'static Identity {
        &Identity {
            name: "base-xor",
            section: "base_xor",
            title: "Base+XOR",
            about: "N-byte and Universal Base+XOR transfer with zero data remapping and data bus \
             inversion on a link (Lee et al., HPCA'18).",
            units: &["encoder", "decoder", "serializer", "deserializer"],
            test_units: &["loopback"],
        }
    }

    fn describe(&self, cfg: &Config) -> String {
        cfg.base_xor.describe()
    }

    fn units(&self, cfg: &Config) -> Result<Vec<UnitDesign>, String> {
        let p = &cfg.base_xor;
        let unit = |unit: &'static str, top: Arc<Module>, beat_bytes: u32| UnitDesign {
            engine: self.name(),
            unit,
            top,
            params: p.describe(),
            beat_bytes,
        };
        let e = |e: crate::hdl::HdlError| e.to_string();
        Ok(vec![
            unit("encoder", rtl::encoder(p).map_err(e)?, p.beat_bytes()),
            unit("decoder", rtl::decoder(p).map_err(e)?, p.beat_bytes()),
            unit("serializer", rtl::serializer(p).map_err(e)?, p.beat_bytes()),
            unit("deserializer", rtl::deserializer(p).map_err(e)?, 4),
        ])
    }

    /// The Table II cores (every scheme's encoder/decoder, ZDR word units) and the DBI beat
    /// encoder, so the FORMATS §6 modules are all in the output and linted, whatever the
    /// configured scheme.
    fn extra_modules(&self, cfg: &Config) -> Result<Vec<Arc<Module>>, String> {
        let mut mods: Vec<Arc<Module>> = core_specs()?.into_iter().map(|c| c.module).collect();
        // The default write path fuses the DBI beat encoder with ZDR.
        let g = if cfg.base_xor.dbi_group == 0 {
            8
        } else {
            cfg.base_xor.dbi_group
        };
        mods.push(crate::rtl::dbi::dbi_beat_enc(g).map_err(|e| e.to_string())?);
        Ok(mods)
    }

    super::bench_methods!(base_xor, |_cfg, s| bench::StimConfig::of(s));

    /// Encoder → serializer → deserializer → decoder: every sector comes back unchanged.
    fn round_trips(&self, cfg: &Config) -> Result<Vec<crate::formal::RoundTrip>, String> {
        let top = self.cosim_top(cfg, "loopback")?;
        Ok(vec![crate::formal::RoundTrip::lines(
            "loopback",
            top,
            "sector",
            "sector",
            &[],
        )])
    }

    /// The configured codec's combinational cores, every Table II core pair, the ZDR block
    /// and DBI-DC at every group width ([`super::base_xor_codes`]).
    fn codes(&self, cfg: &Config) -> Result<Vec<crate::formal::Code>, String> {
        super::base_xor_codes::codes(&cfg.base_xor)
    }

    /// Ones, toggles and I/O energy of the paper's schemes ([`ones::paper_schemes`], plus
    /// the configured codec when it differs) on every trace and sector class; every
    /// transaction is also decoded and checked.
    fn eval(&self, cfg: &Config, req: &EvalRequest) -> Result<EvalOutput, String> {
        use crate::model::base_xor::words_le;
        use crate::trace::sectors::SectorClass;
        if req.traces.is_empty() && req.classes.is_empty() {
            return Err(
                "eval --engine base-xor needs --trace F and/or --class C (or `all`)".into(),
            );
        }
        req.check_options(self.name(), &["--pj-per-one", "--toggles"])?;
        let pj_per_one = req.pj_per_one.unwrap_or(ones::PJ_PER_ONE);
        if !(pj_per_one.is_finite() && pj_per_one >= 0.0) {
            return Err(format!("--pj-per-one = {} must be ≥ 0", pj_per_one));
        }
        let toggle_mode = match req.toggles.as_deref().unwrap_or("stream") {
            "stream" => ones::ToggleMode::Stream,
            "idle" => ones::ToggleMode::Idle,
            t => return Err(format!("--toggles `{}`: expected `stream` or `idle`", t)),
        };
        let mut schemes = ones::paper_schemes();
        let mine = cfg.base_xor.model();
        if mine.bx.t_bytes != 32 {
            return Err(
                "eval --engine base-xor compares 32 B sectors: set base_xor.t_bytes: 32".into(),
            );
        }
        if !schemes.contains(&mine) {
            schemes.push(mine);
        }
        let (classes, _) = req.classes(
            || SectorClass::ALL.to_vec(),
            &[],
            SectorClass::from_name,
            (32, "sectors"),
        )?;
        let mut out = Vec::new();
        for t in &req.traces {
            let words = words_le(&load_blocks(t, 32)?);
            let name = t.display().to_string();
            out.push(
                ones::compare(&name, &words, &schemes, pj_per_one, toggle_mode)
                    .map_err(|e| e.to_string())?,
            );
        }
        for c in classes {
            let words = c.generate(req.count, req.seed);
            out.push(
                ones::compare(c.name(), &words, &schemes, pj_per_one, toggle_mode)
                    .map_err(|e| e.to_string())?,
            );
        }
        let mut md: String = out.iter().map(|c| c.to_markdown() + "\n").collect();
        if out.len() > 1 {
            md.push_str("## Summary\n\n");
            md.push_str(&ones::summary_markdown(&out));
        }
        EvalOutput::new(&out, md)
    }

    fn has_core_table(&self) -> bool {
        true
    }

    /// Synthesizes the cores of the paper's Table II (encoders and decoders of every
    /// mechanism, combinational) on `libs`, writes `table2.md` / `table2.json` into `out`.
    fn core_table(
        &self,
        cfg: &Config,
        libs: &[Liberty],
        out: &Path,
        log: &mut dyn FnMut(&str),
    ) -> Result<PaperTable, String> {
        let specs = core_specs()?;
        let labelled: Vec<(String, Liberty)> =
            libs.iter().map(|l| (l.label(), l.clone())).collect();
        let clock = |label: &str| cfg.synth.clock_for(label);
        let results = cores::synthesize_cores(
            &specs,
            &labelled,
            &clock,
            &out.join("table2"),
            Duration::from_secs(cfg.synth.budget_s),
            cfg.synth.cache,
            log,
        )
        .map_err(|e| e.to_string())?;
        let md = cores::to_markdown(&results, &paper_node(), ("2-byte XOR", "enc"));
        std::fs::create_dir_all(out)
            .map_err(|e| format!("cannot create {}: {}", out.display(), e))?;
        let js = serde_json::to_string_pretty(&results).map_err(|e| e.to_string())?;
        let path = out.join("table2.json");
        crate::files::write(&path, js)?;
        Ok(PaperTable {
            engine: self.name().into(),
            title: "Base+XOR: Table II cores (combinational)".into(),
            file: "table2".into(),
            markdown: md,
        })
    }

    fn compress(&self, _cfg: &Config, _data: &[u8]) -> Result<super::Packed, String> {
        Err(not_a_compressor(self.name()))
    }

    fn decompress(&self, _data: &[u8]) -> Result<super::Packed, String> {
        Err(not_a_compressor(self.name()))
    }
}

fn not_a_compressor(name: &str) -> String {
    format!(
        "{} is a fixed-size link encoding (no size reduction, no container); \
         use `hwzip eval --engine {} --trace F` for its ones/energy accounting",
        name, name
    )
}
