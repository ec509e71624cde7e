//! Sharded runs, as the batch recipes in `scripts/batch/` run them: every shard of a small
//! regression and of a small sweep, merged, gives the report of the unsharded run.

use crate::common::output_text as text;
use serde_json::Value;
use std::path::Path;
use std::process::Command;

fn hwzip(args: &[&str]) -> String {
    // Short runs: models at -O0 compile in half the time.
    let o = Command::new(env!("CARGO_BIN_EXE_hwzip"))
        .env("HWZIP_CXX_OPT", "0")
        .args(args)
        .output()
        .expect("hwzip runs");
    assert!(o.status.success(), "hwzip {:?}: {}", args, text(&o));
    text(&o)
}

/// `v` without what differs from run to run: wall and tool times, worker counts, paths of
/// work files, and whether a cache answered.
fn stable(mut v: Value) -> Value {
    const VOLATILE: [&str; 9] = [
        "seconds",
        "yosys_seconds",
        "sta_seconds",
        "netlist",
        "child_netlists",
        "steps",
        "jobs",
        "cached",
        "vcd",
    ];
    match &mut v {
        Value::Object(m) => {
            for k in VOLATILE {
                m.remove(k);
            }
            for x in m.values_mut() {
                *x = stable(x.take());
            }
        }
        Value::Array(a) => {
            for x in a.iter_mut() {
                *x = stable(x.take());
            }
        }
        _ => {}
    }
    v
}

fn json(path: &Path) -> Value {
    let t = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {}", path.display(), e));
    stable(serde_json::from_str(&t).unwrap())
}

/// A stand-in for Slurm's `sbatch` that runs each job at once: every task of an array with
/// its `$SLURM_ARRAY_TASK_ID`, then prints a job id as `--parsable` does.
const FAKE_SBATCH: &str = r#"#!/usr/bin/env bash
array= wrap=
while [ $# -gt 0 ]; do
  case "$1" in
    --array=*) array=${1#--array=} ;;
    --wrap) wrap=$2; shift ;;
  esac
  shift
done
if [ -n "$array" ]; then
  for i in $(seq "${array%-*}" "${array#*-}"); do
    SLURM_ARRAY_TASK_ID=$i bash -c "$wrap" >&2 || exit 1
  done
  echo 101
else
  bash -c "$wrap" >&2 || exit 1
  echo 102
fi
"#;

/// Runs a script of `scripts/batch/` with the test's `hwzip` and `path` first on `PATH`.
fn batch(script: &str, args: &[&str], path: &Path) -> std::process::Output {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let old = std::env::var("PATH").unwrap_or_default();
    Command::new("bash")
        .arg(root.join("scripts/batch").join(script))
        .args(args)
        .env("HWZIP", env!("CARGO_BIN_EXE_hwzip"))
        .env("HWZIP_CXX_OPT", "0")
        .env("PATH", format!("{}:{}", path.display(), old))
        .output()
        .expect("bash runs")
}

/// The Slurm recipe (`scripts/batch/slurm-regress.sh`: a job array of shards, then a merge
/// job) on a small regression, with `sbatch` standing in: the merged report equals the
/// unsharded run's.
#[test]
fn merged_regress_shards_equal_the_unsharded_run() {
    let d = tempfile::tempdir().unwrap();
    let configs = d.path().join("configs");
    std::fs::create_dir(&configs).unwrap();
    // The default parameters again: a set whose models the default run has built.
    std::fs::write(configs.join("zvc_lanes8.yaml"), "zvc: { lanes: 8 }\n").unwrap();
    let bin = d.path().join("bin");
    std::fs::create_dir(&bin).unwrap();
    let sbatch = bin.join("sbatch");
    std::fs::write(&sbatch, FAKE_SBATCH).unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&sbatch, std::fs::Permissions::from_mode(0o755)).unwrap();
    let c = configs.to_str().unwrap();
    let small = [
        "--profile",
        "quick",
        "--engine",
        "zvc",
        "--lines",
        "2000",
        "--gate-cosim",
        "0",
        "--configs",
        c,
    ];
    let whole = d.path().join("whole");
    let mut args = vec!["regress", "--out", whole.to_str().unwrap(), "-j", "2"];
    args.extend_from_slice(&small);
    hwzip(&args);
    // A regression stopped after its default run goes on with --resume: the default run's
    // report is kept as it is, the parameter set runs again.
    let default_report = std::fs::read(whole.join("default/report.json")).unwrap();
    std::fs::remove_dir_all(whole.join("zvc_lanes8")).unwrap();
    let resumed = hwzip(&[&args[..], &["--resume"]].concat());
    assert!(
        resumed.contains("== regress: default: kept from"),
        "{resumed}"
    );
    assert!(!resumed.contains("zvc_lanes8: kept"), "{resumed}");
    assert!(whole.join("zvc_lanes8/report.json").exists());
    assert_eq!(
        std::fs::read(whole.join("default/report.json")).unwrap(),
        default_report
    );
    // Resuming into the folder of another regression is refused.
    let mut other = vec!["regress", "--out", whole.to_str().unwrap(), "--resume"];
    other.extend_from_slice(&small);
    let i = other.iter().position(|a| *a == "2000").unwrap();
    other[i] = "1000";
    let refused = Command::new(env!("CARGO_BIN_EXE_hwzip"))
        .args(&other)
        .output()
        .unwrap();
    assert_eq!(refused.status.code(), Some(2), "{}", text(&refused));
    assert!(
        text(&refused).contains("holds another regression"),
        "{}",
        text(&refused)
    );
    let out = d.path().join("sharded");
    let o = out.to_str().unwrap();
    // One shard alone is not the regression.
    let lone = batch(
        "shard.sh",
        &[&["regress", "1", "2", o][..], &small].concat(),
        &bin,
    );
    assert!(lone.status.success(), "{}", text(&lone));
    let m = batch("merge.sh", &["regress", o], &bin);
    assert_eq!(m.status.code(), Some(2), "{}", text(&m));
    assert!(text(&m).contains("shard 2/2 is missing"), "{}", text(&m));
    assert!(!out.join("merged").exists());
    std::fs::remove_dir_all(&out).unwrap();

    let r = batch("slurm-regress.sh", &[&["2", o][..], &small].concat(), &bin);
    assert!(r.status.success(), "{}", text(&r));
    assert!(text(&r).contains("submitted: shards 101"), "{}", text(&r));
    let merged = out.join("merged");
    let meta = json(&whole.join("regress.json"));
    assert_eq!(meta, json(&merged.join("regress.json")));
    assert_eq!(meta["runs"], serde_json::json!(["default", "zvc_lanes8"]));
    for run in ["default", "zvc_lanes8"] {
        let a = json(&whole.join(run).join("report.json"));
        let b = json(&merged.join(run).join("report.json"));
        assert!(!a["cosim"].as_array().unwrap().is_empty(), "{}", run);
        assert_eq!(a, b, "{}: merged shards differ from the whole run", run);
        // Each shard did part of the work.
        for k in ["shard-1", "shard-2"] {
            let p = json(&out.join(k).join(run).join("report.json"));
            assert!(p["cosim"].as_array().unwrap().len() < a["cosim"].as_array().unwrap().len());
        }
    }
    // The golden models' evaluation, done once (by the first shard).
    let eval = |d: &Path| std::fs::read_to_string(d.join("eval/zvc/report.json")).unwrap();
    assert_eq!(eval(&whole), eval(&merged));
    assert!(!out.join("shard-2/eval").exists());
    let rows = json(&whole.join("default/report.json"))["synth"].clone();
    assert_eq!(
        rows.as_array().unwrap().len(),
        2,
        "both ZVC units synthesized"
    );
    // A shard given twice is refused.
    let s1 = out.join("shard-1");
    let twice = Command::new(env!("CARGO_BIN_EXE_hwzip"))
        .args(["regress", "--merge"])
        .args([&s1, &s1])
        .arg("--out")
        .arg(d.path().join("twice"))
        .output()
        .unwrap();
    assert_eq!(twice.status.code(), Some(2), "{}", text(&twice));
    assert!(
        text(&twice).contains("shard 1/2 is given twice"),
        "{}",
        text(&twice)
    );
}

/// The GitHub Actions recipe runs the same scripts: one matrix job per shard, then a merge.
#[test]
fn the_actions_workflow_runs_every_shard_then_the_merge() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let w = std::fs::read_to_string(root.join(".github/workflows/regress.yml")).unwrap();
    let shards: usize = w
        .lines()
        .find_map(|l| l.trim().strip_prefix("SHARDS:"))
        .and_then(|v| v.trim().parse().ok())
        .expect("SHARDS in env");
    let matrix: Vec<String> = (1..=shards).map(|k| k.to_string()).collect();
    assert!(
        w.contains(&format!("shard: [{}]", matrix.join(", "))),
        "the matrix lists shards 1..{}",
        shards
    );
    assert!(w.contains("scripts/batch/shard.sh regress ${{ matrix.shard }} \"$SHARDS\""));
    assert!(w.contains("needs: shard"));
    assert!(w.contains("scripts/batch/merge.sh regress build/regress"));
}

/// The batch scripts on a small sweep: the merged report equals the unsharded run's.
#[test]
fn merged_sweep_shards_equal_the_unsharded_run() {
    let d = tempfile::tempdir().unwrap();
    // The quick profile's synthesis effort: the lanes=8 point is then the regression test's
    // compressor run, answered by the synthesis cache.
    let cfg = d.path().join("fast.yaml");
    std::fs::write(&cfg, "synth: { effort: fast }\n").unwrap();
    let small = [
        "--config",
        cfg.to_str().unwrap(),
        "--engine",
        "zvc",
        "--grid",
        "lanes=4,8",
        "--unit",
        "compressor",
        "--liberty",
        "osu018",
        "--lines",
        "300",
        "-j",
        "1",
    ];
    let whole = d.path().join("whole");
    let mut args = vec!["sweep", "--out", whole.to_str().unwrap()];
    args.extend_from_slice(&small);
    hwzip(&args);
    let out = d.path().join("sharded");
    let o = out.to_str().unwrap();
    for k in ["1", "2"] {
        let r = batch(
            "shard.sh",
            &[&["sweep", k, "2", o][..], &small].concat(),
            d.path(),
        );
        assert!(r.status.success(), "{}", text(&r));
    }
    let m = batch("merge.sh", &["sweep", o], d.path());
    assert!(m.status.success(), "{}", text(&m));
    let a = json(&whole.join("sweep.json"));
    assert_eq!(a["points"].as_array().unwrap().len(), 2);
    assert_eq!(a, json(&out.join("merged/sweep.json")));
    for k in ["shard-1", "shard-2"] {
        let p = json(&out.join(k).join("sweep.json"));
        assert_eq!(p["points"].as_array().unwrap().len(), 1);
    }
    // The merged sweep's page in a browser: every chart drawn, each with all its data.
    let html = out.join("merged/report.html");
    let shots = Path::new(env!("CARGO_TARGET_TMPDIR")).join("report-screenshots");
    std::fs::create_dir_all(&shots).unwrap();
    let state = crate::common::render_in_chromium(&html, &shots.join("sweep.png"));
    let page = std::fs::read_to_string(&html).unwrap();
    let n = page.matches("<figure class=\"plot\"").count();
    assert!(n > 0, "the sweep page has charts");
    assert_eq!(state, format!("ok {}", n));
}
