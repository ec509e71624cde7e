//! The FuseSoC cores and filelists `hwzip gen` writes beside the Verilog.
//!
//! Always: each core is checked against the CAPI2 structure (the `CAPI=2:` line, a VLNV name,
//! one Verilog fileset naming exactly the generated files, a `lint_<unit>` Verilator target
//! per unit whose `toplevel` is a module of the files) and each filelist is linted with
//! `verilator -F` for one unit. When FuseSoC is installed (`scripts/setup.sh` puts it in
//! `build/venv-fusesoc`; `$HWZIP_FUSESOC` or `fusesoc` on the PATH also count), FuseSoC reads
//! every core and runs one lint target per engine, and a core with a lint error must fail.

use hwzip::config::Config;
use hwzip::engines;
use std::path::{Path, PathBuf};
use std::process::Command;

fn fusesoc() -> Option<PathBuf> {
    let cands = [
        std::env::var_os("HWZIP_FUSESOC").map(PathBuf::from),
        Some(Path::new(env!("CARGO_MANIFEST_DIR")).join("build/venv-fusesoc/bin/fusesoc")),
        Some(PathBuf::from("fusesoc")),
    ];
    cands.into_iter().flatten().find(|p| {
        Command::new(p)
            .arg("--version")
            .output()
            .is_ok_and(|o| o.status.success())
    })
}

/// Runs FuseSoC with `args` on the cores under `root`; true when it succeeds.
fn run_fusesoc(fs: &Path, root: &Path, build: &Path, args: &[&str]) -> (bool, String) {
    let out = Command::new(fs)
        .arg("--cores-root")
        .arg(root)
        .args(
            args.iter()
                .map(|a| a.replace("{build}", &build.to_string_lossy())),
        )
        .output()
        .expect("fusesoc starts");
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    (out.status.success(), text)
}

#[test]
fn generated_cores_and_filelists_are_usable() {
    let tmp = tempfile::tempdir().unwrap();
    let fs = fusesoc();
    if fs.is_none() {
        eprintln!("fusesoc not installed (scripts/setup.sh): checking the cores' structure only");
    }
    for &e in engines::ALL {
        let cfg = Config::default();
        let files = hwzip::flow::gen(e, &cfg, tmp.path()).unwrap();
        let dir = tmp.path().join(e.name());
        let (fl_name, core_name) = hwzip::flow::manifest::names(e.name());
        let verilog: Vec<String> = files
            .iter()
            .filter(|f| f.extension().is_some_and(|x| x == "v"))
            .map(|f| f.file_name().unwrap().to_string_lossy().into_owned())
            .collect();
        assert!(files.contains(&dir.join(&fl_name)) && files.contains(&dir.join(&core_name)));

        // The core's structure (CAPI2).
        let text = std::fs::read_to_string(dir.join(&core_name)).unwrap();
        assert!(text.starts_with("CAPI=2:\n"), "{core_name}: no CAPI=2 line");
        let y: serde_yaml::Value = serde_yaml::from_str(&text).unwrap();
        let name = y["name"].as_str().expect("name");
        assert_eq!(name, hwzip::flow::manifest::vlnv(e.name()));
        assert_eq!(name.split(':').count(), 4, "{name} is not a VLNV");
        let rtl = &y["filesets"]["rtl"];
        assert_eq!(rtl["file_type"].as_str(), Some("verilogSource"));
        let listed: Vec<String> = rtl["files"]
            .as_sequence()
            .unwrap()
            .iter()
            .map(|f| f.as_str().unwrap().to_string())
            .collect();
        let mut want = verilog.clone();
        want.sort();
        assert_eq!(
            listed, want,
            "{core_name} does not list the generated files"
        );
        let sources: String = verilog
            .iter()
            .map(|f| std::fs::read_to_string(dir.join(f)).unwrap())
            .collect();
        let units = e.units(&cfg).unwrap();
        for u in &units {
            let t = &y["targets"][format!("lint_{}", u.unit.replace('-', "_")).as_str()];
            let top = t["toplevel"].as_str().expect("toplevel");
            assert!(
                sources.contains(&format!("module {top} (")),
                "{top} not in the files"
            );
            assert_eq!(t["filesets"][0].as_str(), Some("rtl"));
            assert_eq!(t["default_tool"].as_str(), Some("verilator"));
        }

        // The filelist and the core's lint targets are checked on the smallest unit (their
        // mechanics; `tests/integration/rtl_out.rs` lints every unit).
        let small = units
            .iter()
            .min_by_key(|u| {
                let files = hwzip::hdl::emit::emit_design(&u.top).unwrap();
                files.iter().map(|(_, t)| t.len()).sum::<usize>()
            })
            .unwrap();
        // The filelist: the same files, usable with `verilator -F` from anywhere.
        let fl = std::fs::read_to_string(dir.join(&fl_name)).unwrap();
        let fl_files: Vec<&str> = fl.lines().filter(|l| !l.starts_with("//")).collect();
        assert_eq!(
            fl_files,
            want.iter().map(|s| s.as_str()).collect::<Vec<_>>()
        );
        if crate::common::have("verilator") {
            let out = Command::new("verilator")
                .current_dir(std::env::temp_dir())
                .args(["--lint-only", "-Wall", "-F"])
                .arg(dir.join(&fl_name))
                .args(["--top-module", &small.top.name])
                .output()
                .unwrap();
            assert!(
                out.status.success(),
                "verilator -F {fl_name}: {}",
                String::from_utf8_lossy(&out.stderr)
            );
        }

        // FuseSoC itself: it reads the core, and a lint target passes.
        if let Some(fs) = &fs {
            let build = tmp.path().join(format!("fs-build-{}", e.name()));
            let (ok, log) = run_fusesoc(fs, &dir, &build, &["core-info", name]);
            assert!(ok, "fusesoc core-info {name}:\n{log}");
            let target = format!("lint_{}", small.unit.replace('-', "_"));
            let args = ["run", "--build-root", "{build}", "--target", &target, name];
            let (ok, log) = run_fusesoc(fs, &dir, &build, &args);
            assert!(ok, "fusesoc run --target {target} {name}:\n{log}");
        }
    }

    // The FuseSoC run can fail: an undriven, unused wire in a unit's top fails its lint target.
    if let Some(fs) = &fs {
        let e = engines::by_name("zvc").unwrap();
        let cfg = Config::default();
        let dir = tmp.path().join("zvc");
        let units = e.units(&cfg).unwrap();
        let top = dir.join(format!("{}.v", units[0].top.name));
        let v = std::fs::read_to_string(&top).unwrap();
        let bad = v.replacen("endmodule", "  wire lint_probe_w;\nendmodule", 1);
        assert_ne!(bad, v);
        std::fs::write(&top, bad).unwrap();
        let build = tmp.path().join("fs-build-bad");
        let name = hwzip::flow::manifest::vlnv("zvc");
        let target = format!("lint_{}", units[0].unit);
        let args = ["run", "--build-root", "{build}", "--target", &target, &name];
        let (ok, log) = run_fusesoc(fs, &dir, &build, &args);
        assert!(!ok, "a lint error passed through fusesoc:\n{log}");
        assert!(log.contains("lint_probe_w"), "{log}");
    }
}
