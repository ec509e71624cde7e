//! `hwzip eval`: the golden models on traces and synthetic classes, or every line codec
//! alone on a file (`--codecs`).

use super::args::{load_config, EngineArgs};
use hwzip::config::Config;
use hwzip::engines::{self, EvalRequest};
use hwzip::flow;
use std::path::PathBuf;

/// The arguments of `hwzip eval`.
#[derive(clap::Args)]
pub struct Args {
    #[command(flatten)]
    pub target: EngineArgs,
    /// Trace file: raw bytes, `.gz` gunzipped, `.npy` and `.safetensors` headers checked
    /// and skipped (buddy: one row per tensor group), or a YAML description whose `file:`
    /// is any of these; zvc takes elements of its word width. Repeatable except for zvc.
    #[arg(long)]
    pub trace: Vec<PathBuf>,
    /// base-xor: synthetic sector classes (FORMATS §5); adaptive: line profiles (`zero-heavy`,
    /// `small-delta`, `narrow`, `repeated`, `floats`, `random`, `mixed`, `bench-sc`, …);
    /// cpack-lossy: block classes; buddy: entry classes (`relu-50`, `index-i32`, …),
    /// `meta-cache`, `profiler`; or `all`. Repeatable.
    #[arg(long)]
    pub class: Vec<String>,
    /// Lines per synthetic class: sectors (base-xor), lines (adaptive), blocks
    /// (cpack-lossy) or entries (buddy) [default: 20000].
    #[arg(long, alias = "sectors")]
    pub lines: Option<usize>,
    /// Seed of the synthetic classes [default: 1].
    #[arg(long)]
    pub seed: Option<u64>,
    /// adaptive: λ of the penalty P = N + λ(L_C + L_D) [default: adaptive.lambda of the
    /// config, 6].
    #[arg(long)]
    pub lambda: Option<u32>,
    /// base-xor: extra I/O energy per transmitted 1, pJ [default: 0.0344].
    #[arg(long)]
    pub pj_per_one: Option<f64>,
    /// base-xor: toggles between transactions: `stream` (back to back, the default) or
    /// `idle` (the bus returns to 0 between transactions).
    #[arg(long)]
    pub toggles: Option<String>,
    /// Print JSON instead of a table.
    #[arg(long)]
    pub json: bool,
    /// Every line codec alone on each --trace file, beside zlib and zstd, instead of the
    /// engine's evaluation: `all` or a comma-separated list of bdi, fpc, cpack, cpack128,
    /// bpc, zvc (each file round-tripped).
    #[arg(long, value_delimiter = ',', conflicts_with_all = ["class", "lambda", "pj_per_one", "toggles", "out"])]
    pub codecs: Vec<String>,
    /// Also write report.md, report.json and report.html (tables and charts) here.
    #[arg(long)]
    pub out: Option<PathBuf>,
}

/// Runs `hwzip eval`: `Ok(false)` when it ran but something failed or mismatched.
pub fn run(args: Args) -> Result<bool, String> {
    let Args {
        target: EngineArgs { engine, config },
        trace,
        class,
        lines,
        seed,
        lambda,
        pj_per_one,
        toggles,
        json,
        codecs,
        out: out_dir,
    } = args;
    let engine = engines::by_name(&engine)?;
    let cfg = load_config(&config)?;
    if !codecs.is_empty() {
        return eval_codecs(&cfg, &codecs, &trace, json);
    }
    let mut class = class;
    if trace.is_empty() && class.is_empty() {
        if !engine.has_synthetic_classes() {
            return Err(format!(
                "eval --engine {} needs --trace FILE (e.g. \
                 verif/traces/relu_pool1_like.yaml, or one written by `hwzip trace`)",
                engine.name()
            ));
        }
        // No data given: every synthetic class, as `--class all` would.
        class.push("all".into());
    }
    if class.is_empty() && (lines.is_some() || seed.is_some()) {
        return Err(
            "--lines and --seed size and seed the synthetic --class data; \
             add --class all (or a class name) or leave them out"
                .into(),
        );
    }
    let req = EvalRequest {
        traces: trace,
        classes: class,
        count: lines.unwrap_or(20_000),
        seed: seed.unwrap_or(1),
        lambda,
        pj_per_one,
        toggles,
    };
    let out = engine.eval(&cfg, &req)?;
    if let Some(dir) = &out_dir {
        flow::write_eval(engine, &out, dir)?;
    }
    if json {
        outln!("{}", out.json);
    } else {
        out!("{}", out.markdown);
    }
    if let Some(dir) = &out_dir {
        eprintln!("reports: {}/report.{{md,json,html}}", dir.display());
    }
    Ok(true)
}

/// `hwzip eval --codecs`: every chosen line codec alone on each trace file, beside zlib and
/// zstd, as one table per file (or JSON).
fn eval_codecs(
    cfg: &Config,
    codecs: &[String],
    traces: &[PathBuf],
    json: bool,
) -> Result<bool, String> {
    use engines::codecs;
    let names: Vec<&str> = if codecs.iter().any(|c| c == "all") {
        codecs::NAMES.to_vec()
    } else {
        let mut v = Vec::new();
        for c in codecs {
            let n = codecs::NAMES
                .iter()
                .copied()
                .find(|n| n == c)
                .ok_or_else(|| {
                    format!(
                        "unknown codec `{}` (all, {})",
                        hwzip::files::quote(c),
                        codecs::NAMES.join(", ")
                    )
                })?;
            if !v.contains(&n) {
                v.push(n);
            }
        }
        v
    };
    if traces.is_empty() {
        return Err("--codecs compares codecs on your files: give --trace FILE".into());
    }
    let mut all = Vec::new();
    for t in traces {
        let data = hwzip::trace::file::load_bytes(t).map_err(|e| e.to_string())?;
        let rows = codecs::side_by_side(cfg, &data, &names)?;
        if !json {
            outln!(
                "## {}\n\n{}",
                t.display(),
                codecs::markdown(&rows, data.len())
            );
        }
        all.push(serde_json::json!({"trace": t.display().to_string(), "bytes": data.len(), "rows": rows}));
    }
    if json {
        outln!(
            "{}",
            serde_json::to_string_pretty(&all).map_err(|e| e.to_string())?
        );
    }
    Ok(true)
}
