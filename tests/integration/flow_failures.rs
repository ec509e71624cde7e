//! The main job keeps going when a step fails: a planted failure (one unit's synthesis spins
//! until its CPU-time budget kills it) is reported in every report format with its log, every
//! other step still runs, and `hwzip flow` exits with status 1. `--fail-fast` stops starting
//! steps after the failure and lists the rest as skipped.

use crate::common::output_text as text;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::{Command, Output};

/// A stand-in for `yosys` that spins (using CPU, as a slow synthesis does) on any script
/// that reads the ZVC decompressor and runs the real Yosys otherwise.
fn planted_yosys(dir: &Path) -> std::path::PathBuf {
    let p = dir.join("yosys-planted");
    std::fs::write(
        &p,
        "#!/bin/sh\n\
         if grep -qs zvc_decomp flow.ys; then\n\
           echo 'planted: spinning until the budget runs out'\n\
           while :; do :; done\n\
         fi\n\
         exec yosys \"$@\"\n",
    )
    .unwrap();
    std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
    p
}

fn flow(dir: &Path, extra: &[&str]) -> Output {
    let cfg = dir.join("small.yaml");
    std::fs::write(
        &cfg,
        "zvc: {word_bits: 8, lanes: 4, window: 8}\n\
         cosim: {lines: 300}\n\
         synth: {clock_ns: 5.0, clock_ns_by_library: {}, budget_s: 2, cache: false}\n",
    )
    .unwrap();
    let out = dir.join("out");
    let mut args = vec![
        "flow",
        "--engine",
        "zvc",
        "--config",
        cfg.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
        "-j",
        "1",
    ];
    args.extend_from_slice(extra);
    Command::new(env!("CARGO_BIN_EXE_hwzip"))
        .args(&args)
        .env("HWZIP_YOSYS", planted_yosys(dir))
        .env("HWZIP_CXX_OPT", "0") // the library's tests built these models at -O0
        .output()
        .expect("hwzip runs")
}

#[test]
fn a_failed_step_is_reported_and_every_other_step_runs() {
    let d = tempfile::tempdir().unwrap();
    let o = flow(d.path(), &[]);
    let t = text(&o);
    assert_eq!(o.status.code(), Some(1), "{}", t);
    assert!(!t.contains("panicked"), "{}", t);
    assert!(t.contains("## Failed steps"), "{}", t);
    let out = d.path().join("out");

    // report.json: every step, the failed one with its error and kept log.
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("report.json")).unwrap()).unwrap();
    assert_eq!(json["ok"], false);
    let steps = json["steps"].as_array().unwrap();
    let status = |kind: &str, what: &str| {
        steps
            .iter()
            .find(|s| s["kind"] == kind && s["what"] == what)
            .map(|s| s["status"].as_str().unwrap().to_string())
            .unwrap_or_else(|| panic!("no step {} {}: {:#?}", kind, what, steps))
    };
    assert_eq!(status("gen", "zvc"), "ok");
    for u in ["compressor", "decompressor", "loopback"] {
        assert_eq!(status("cosim", &format!("zvc {}", u)), "ok", "{}", u);
    }
    assert_eq!(status("synth", "zvc compressor osu018"), "ok");
    assert_eq!(status("synth", "zvc decompressor osu018"), "failed");
    let failed = steps.iter().find(|s| s["status"] == "failed").unwrap();
    let error = failed["error"].as_str().unwrap();
    assert!(error.contains("CPU-time budget of 2.0 s"), "{}", error);
    let log = Path::new(failed["log"].as_str().unwrap());
    assert!(
        log.starts_with(&out),
        "log kept in the report folder: {}",
        log.display()
    );
    let log_text = std::fs::read_to_string(log).unwrap();
    assert!(log_text.contains("planted: spinning"), "{}", log_text);
    assert_eq!(json["synth"].as_array().unwrap().len(), 1);
    assert_eq!(json["cosim"].as_array().unwrap().len(), 3);

    // report.md, report.csv and report.html mark it.
    let md = std::fs::read_to_string(out.join("report.md")).unwrap();
    assert!(md.contains("## Failed steps"), "{}", md);
    assert!(
        md.contains("| FAILED | synth | zvc decompressor osu018 |"),
        "{}",
        md
    );
    assert!(md.contains("1 step(s) FAILED"), "{}", md);
    let csv = std::fs::read_to_string(out.join("report.csv")).unwrap();
    assert!(csv.lines().next().unwrap().ends_with(",status"), "{}", csv);
    assert!(
        csv.lines()
            .any(|l| l.starts_with("zvc,decompressor,,osu018,") && l.contains("FAILED: yosys")),
        "{}",
        csv
    );
    assert!(csv
        .lines()
        .any(|l| l.starts_with("zvc,compressor,") && l.ends_with(",ok")));
    let html = std::fs::read_to_string(out.join("report.html")).unwrap();
    assert!(html.contains("<div class=\"alert\">"), "no failure box");
    assert!(html.contains("CPU-time budget"));
    let shots = std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("report-screenshots");
    std::fs::create_dir_all(&shots).unwrap();
    let n = html.matches("<figure class=\"plot\"").count();
    let state =
        crate::common::render_in_chromium(&out.join("report.html"), &shots.join("flow-failed.png"));
    assert_eq!(state, format!("ok {}", n));
}

#[test]
fn fail_fast_skips_the_steps_after_the_failure() {
    let d = tempfile::tempdir().unwrap();
    let o = flow(d.path(), &["--fail-fast"]);
    let t = text(&o);
    assert_eq!(o.status.code(), Some(1), "{}", t);
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(d.path().join("out/report.json")).unwrap())
            .unwrap();
    let steps = json["steps"].as_array().unwrap();
    let count = |s: &str| steps.iter().filter(|x| x["status"] == s).count();
    assert_eq!(count("failed"), 1, "{:#?}", steps);
    // Synthesis steps are scheduled first (longest first, one worker): the three
    // co-simulations come after the failed one and are skipped.
    assert!(count("skipped") >= 3, "{:#?}", steps);
    assert!(t.contains("skipped (--fail-fast)"), "{}", t);
}
