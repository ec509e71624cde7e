//! `rtl_out/` holds the Verilog of the default configuration: it must equal freshly generated
//! output, and every generated file must pass `verilator --lint-only -Wall` and Yosys `synth`
//! without warnings, for the defaults and for other parameter sets.

use hwzip::config::Config;
use hwzip::engines;
use std::path::Path;
use std::process::Command;

use crate::common::have;

#[test]
fn rtl_out_matches_fresh_generation() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("rtl_out");
    let tmp = tempfile::tempdir().unwrap();
    for &e in engines::ALL {
        let files = hwzip::flow::gen(e, &Config::default(), tmp.path()).unwrap();
        let committed: Vec<_> = std::fs::read_dir(root.join(e.name()))
            .unwrap_or_else(|_| {
                panic!(
                    "rtl_out/{} missing: run `hwzip gen --engine {}`",
                    e.name(),
                    e.name()
                )
            })
            .map(|d| d.unwrap().file_name())
            .collect();
        assert_eq!(
            committed.len(),
            files.len(),
            "rtl_out/{} has stale or missing files",
            e.name()
        );
        for f in files {
            let name = f.file_name().unwrap();
            let fresh = std::fs::read_to_string(&f).unwrap();
            let old = std::fs::read_to_string(root.join(e.name()).join(name)).unwrap_or_default();
            assert!(
                fresh == old,
                "rtl_out/{}/{} differs from generated output: run `cargo run --release -- gen --engine {}`",
                e.name(),
                name.to_string_lossy(),
                e.name()
            );
        }
    }
}

/// Every committed file in `rtl_out/` (the units, their sub-modules and Base+XOR's Table II
/// cores) passes `verilator --lint-only -Wall` (one run per engine folder with every file
/// given: each module is checked once; the ones nothing instantiates are tops) and is ASCII
/// within 100 columns; so is each engine's loop-back top at the defaults.
#[test]
fn rtl_out_files_are_lint_clean() {
    assert!(have("verilator"), "verilator missing: run scripts/setup.sh");
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("rtl_out");
    let mut n = 0;
    for e in engines::ALL {
        let dir = root.join(e.name());
        let mut files: Vec<_> = std::fs::read_dir(&dir)
            .expect("rtl_out folder")
            .map(|f| f.expect("dir entry").path())
            .filter(|p| p.extension().is_some_and(|x| x == "v"))
            .collect();
        files.sort();
        n += files.len();
        lint_files(&dir, &files, &format!("rtl_out/{}", e.name()));
        assert_eq!(ascii_within_100_columns(&dir), files.len());
        // The test-only loop-back top at the defaults (not in rtl_out/).
        let cfg = Config::default();
        if let Some(u) = loopback(*e, &cfg) {
            let tmp = tempfile::tempdir().unwrap();
            hwzip::flow::write_rtl(std::slice::from_ref(&u), tmp.path()).unwrap();
            let top = tmp.path().join(format!("{}.v", u.top.name));
            lint_files(tmp.path(), &[top], &u.top.name);
            ascii_within_100_columns(tmp.path());
        }
    }
    assert!(n > 50, "only {} files", n);
}

/// Whether `top` with exactly the files it uses has not been linted yet: a parameter set
/// changes some units of one engine, and every unit whose text (and whose sub-modules' text)
/// did not change is linted once. A file `<m>.v` counts as used when `m` appears as a word in
/// a used file (a superset of the instances, so nothing that changed is skipped).
fn first_time(dir: &Path, top: &str) -> bool {
    use std::collections::{BTreeMap, BTreeSet, HashSet};
    use std::sync::{Mutex, OnceLock};
    static SEEN: OnceLock<Mutex<HashSet<String>>> = OnceLock::new();
    let texts: BTreeMap<String, String> = std::fs::read_dir(dir)
        .expect("generated dir")
        .map(|e| e.expect("dir entry").path())
        .filter(|p| p.extension().is_some_and(|x| x == "v"))
        .map(|p| {
            let stem = p.file_stem().unwrap().to_string_lossy().into_owned();
            (stem, std::fs::read_to_string(&p).expect("generated file"))
        })
        .collect();
    let mut used = BTreeSet::from([top.to_string()]);
    let mut todo = vec![top.to_string()];
    while let Some(m) = todo.pop() {
        let Some(text) = texts.get(&m) else { continue };
        let words: HashSet<&str> = text
            .split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .collect();
        for other in texts.keys() {
            if words.contains(other.as_str()) && used.insert(other.clone()) {
                todo.push(other.clone());
            }
        }
    }
    let mut key = top.to_string();
    for m in &used {
        key.push('\0');
        key.push_str(texts.get(m).map_or("", String::as_str));
    }
    let seen = SEEN.get_or_init(|| Mutex::new(HashSet::new()));
    seen.lock().expect("lint set").insert(key)
}

/// Lints the tops of `dir` not linted before ([`first_time`]) in one Verilator run: each
/// module is checked once, where one run per top would check a composite top's children
/// again.
fn lint_dir(dir: &Path, tops: &[String]) {
    let new: Vec<&String> = tops.iter().filter(|t| first_time(dir, t)).collect();
    if new.is_empty() {
        return;
    }
    let files: Vec<_> = new.iter().map(|t| dir.join(format!("{}.v", t))).collect();
    lint_files(dir, &files, &format!("{:?}", new));
}

/// `verilator --lint-only -Wall` on `files` (modules resolved in `dir`) in one run: no
/// warning, no error (`what` names them in the failure).
fn lint_files(dir: &Path, files: &[std::path::PathBuf], what: &str) {
    let out = Command::new("verilator")
        .args(["--lint-only", "-Wall", "-Wno-MULTITOP", "-y"])
        .arg(dir)
        .args(files)
        .output()
        .expect("verilator runs");
    let text = crate::common::output_text(&out);
    assert!(
        out.status.success() && text.trim().is_empty(),
        "lint of {what}:\n{text}"
    );
}

/// Every line of every `.v` file in `dir` is ASCII and at most 100 columns; returns the
/// number of files.
fn ascii_within_100_columns(dir: &Path) -> usize {
    let mut n = 0;
    for f in std::fs::read_dir(dir).expect("generated dir") {
        let f = f.expect("dir entry").path();
        if f.extension().is_none_or(|x| x != "v") {
            continue;
        }
        let t = std::fs::read_to_string(&f).unwrap();
        for (i, l) in t.lines().enumerate() {
            assert!(
                l.is_ascii(),
                "{}:{} is not ASCII: {}",
                f.display(),
                i + 1,
                l
            );
            assert!(
                l.len() <= 100,
                "{}:{} has {} columns: {}",
                f.display(),
                i + 1,
                l.len(),
                l
            );
        }
        n += 1;
    }
    n
}

/// Parameter sets whose generated Verilog is checked (lint, style) besides the defaults
/// (`rtl_out/`, checked by `rtl_out_files_are_lint_clean`).
const PARAM_SETS: &[&str] = &[
    "zvc: {word_bits: 16, lanes: 32}",
    "zvc: {word_bits: 8, lanes: 4, prefix: kogge-stone}",
    "zvc: {lanes: 16, window: 64, prefix: sklansky}",
    "zvc: {lanes: 32, prefix: ripple}",
    "base_xor: {scheme: nbyte, n_bytes: 2, dbi_group: 0, pipe: false}",
    "base_xor: {scheme: nbyte, n_bytes: 8, fixed_base: true, zdr: false, dbi_group: 16}",
    "base_xor: {zdr: false, dbi_group: 32}",
    "base_xor: {dec_style: serial, t_bytes: 16, zdr_skip_zero_base: true, half_order: address}",
    "base_xor: {t_bytes: 64, stages: 2, zdr_bits: 64}",
    "base_xor: {t_bytes: 64, stages: 4, zdr_skip_zero_base: true}",
    "base_xor: {scheme: none, dbi_group: 8}",
    "adaptive: {line_bytes: 32}",
    "adaptive: {bdi_base_rule: first-non-immediate}",
    "adaptive: {bdi_decomp_stages: 2, fpc_comp_stages: 3, fpc_decomp_stages: 8}",
    "adaptive: {line_bytes: 128, fpc_comp_stages: 4, fpc_decomp_stages: 16}",
    "adaptive: {line_bytes: 32, fpc_comp_stages: 4, link_fast_egress: true}",
    "adaptive: {line_bytes: 128, bdi_base_rule: first-non-immediate}",
    "adaptive: {lambda: 0, no_quorum: plurality, vote_tie: lower-latency, sample_send: current}",
    "adaptive: {lambda: 32, no_quorum: keep-previous, use_fpc: false, run_len: 0}",
    "cpack_lossy: {codec: {layout: shifted}}",
    "cpack_lossy: {comp_in_stage: true}",
    "cpack_lossy: {words_per_cycle: 1, codec: {raw_if_n_eq_raw: true, md_bits: 4}}",
    "cpack_lossy: {codec: {block_bytes: 64, push: all-non-zero}}",
    "cpack_lossy: {codec: {block_bytes: 32, dict_entries: 8, push: new-only, t_table: [0, 8, 16, 16]}}",
    "buddy: {bpc: {sym_bits: 64, prefixes: alternate, dec_tokens: 3}, addr: {page: 64k, boff_bits: 21}, addr_stages: 3}",
    "buddy: {bpc: {entry_bytes: 32, dec_tokens: 2}, meta: {size_bytes: 1024, mshrs: 2, mshr_slots: 2}, addr_stages: 2}",
    "buddy: {addr_stages: 1}",
    "buddy: {bpc: {dec_tokens: 1, dec_lanes: 4, dec_sum_stages: 4}}",
    "buddy: {bpc: {sym_bits: 64, prefixes: alternate, dec_tokens: 1, dec_lanes: 2, dec_sum_stages: 3}}",
    "buddy: {bpc: {entry_bytes: 32, dec_tokens: 1, dec_sum_stages: 2}}",
    "buddy: {bpc: {entry_bytes: 32, sym_bits: 8, dec_tokens: 2}}",
    "buddy: {bpc: {entry_bytes: 64, sym_bits: 16, dec_tokens: 1, dec_lanes: 2}}",
];

/// Every parameter set above: each generated file (the loop-back tops included) is linted
/// with `-Wall` without a warning, and every line is ASCII and at most 100 columns.
#[test]
fn generated_verilog_is_lint_clean_ascii_within_100_columns() {
    assert!(have("verilator"), "verilator missing: run scripts/setup.sh");
    // Two lint processes at a time (the parameter sets are independent).
    let next = std::sync::atomic::AtomicUsize::new(0);
    let files = std::sync::atomic::AtomicUsize::new(0);
    std::thread::scope(|s| {
        for _ in 0..2 {
            s.spawn(|| loop {
                let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                match PARAM_SETS.get(i) {
                    Some(yaml) => {
                        let n = check_parameter_set(yaml);
                        files.fetch_add(n, std::sync::atomic::Ordering::Relaxed);
                    }
                    None => break,
                }
            });
        }
    });
    let n = files.into_inner();
    assert!(n > 50, "only {} files checked", n);
}

/// The engine's loop-back test top as a unit to write, if it has one.
fn loopback(e: engines::EngineRef, cfg: &Config) -> Option<engines::UnitDesign> {
    if e.test_units().is_empty() {
        return None;
    }
    Some(engines::UnitDesign {
        engine: e.name(),
        unit: "loopback",
        top: e.cosim_top(cfg, "loopback").unwrap(),
        params: String::new(),
        beat_bytes: 0,
    })
}

/// Generates the units (and loop-back top) of the engine `yaml` configures, lints them and
/// checks the text; returns the number of files.
fn check_parameter_set(yaml: &str) -> usize {
    let cfg = Config::from_yaml(yaml).unwrap();
    let mut n = 0;
    // The engines the set configures (the others are at their defaults: `rtl_out/`).
    for &e in engines::ALL
        .iter()
        .filter(|e| yaml.starts_with(&format!("{}:", e.name().replace('-', "_"))))
    {
        let tmp = tempfile::tempdir().unwrap();
        let mut units = e.units(&cfg).unwrap();
        units.extend(loopback(e, &cfg));
        hwzip::flow::write_rtl(&units, tmp.path()).unwrap();
        let tops: Vec<String> = units.iter().map(|u| u.top.name.clone()).collect();
        lint_dir(tmp.path(), &tops);
        n += ascii_within_100_columns(tmp.path());
    }
    n
}

#[test]
fn yosys_synthesizes_without_latches_or_warnings() {
    assert!(have("yosys"), "yosys missing: run scripts/setup.sh");
    let tmp = tempfile::tempdir().unwrap();
    let cfg = Config::default();
    for &e in engines::ALL {
        let units = e.units(&cfg).unwrap();
        let dir = tmp.path().join(e.name());
        let files = hwzip::flow::write_rtl(&units, &dir).unwrap();
        // Elaboration and processes are where Yosys reports latches, multiple drivers and
        // width problems; technology mapping is exercised by the osu018 synthesis test. One
        // run per engine checks every module once, each in its own context: a composite
        // top's children are resolved (port directions known), so a net that a child's
        // output and the parent both drive is still a multiple driver, without flattening.
        let script = format!(
            "read_verilog {}; hierarchy -check; proc; opt_clean; check -assert; \
             select -assert-none t:$dlatch t:$_DLATCH_*",
            files
                .iter()
                .filter(|f| f.extension().is_some_and(|x| x == "v"))
                .map(|f| f.display().to_string())
                .collect::<Vec<_>>()
                .join(" "),
        );
        let out = Command::new("yosys")
            .args(["-q", "-p", &script])
            .output()
            .unwrap();
        let text = format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(out.status.success(), "yosys on {}:\n{}", e.name(), text);
        assert!(
            !text.contains("Warning"),
            "yosys warnings on {}:\n{}",
            e.name(),
            text
        );
        let names: Vec<&str> = units.iter().map(|u| u.top.name.as_str()).collect();
        assert!(!names.is_empty(), "{} has units", e.name());
    }
}

#[test]
fn no_dollar_and_spec_citation_in_every_file() {
    let tmp = tempfile::tempdir().unwrap();
    for &e in engines::ALL {
        for f in hwzip::flow::gen(e, &Config::default(), tmp.path()).unwrap() {
            if f.extension().is_none_or(|x| x != "v") {
                continue; // the filelist and the FuseSoC core
            }
            let t = std::fs::read_to_string(&f).unwrap();
            assert!(!t.contains('$'), "{} contains `$`", f.display());
            assert!(
                t.contains("// Spec: docs/FORMATS.md"),
                "{} does not cite the spec",
                f.display()
            );
        }
    }
}

#[test]
fn shared_blocks_are_lint_clean() {
    use hwzip::hdl::blocks::{
        popcount, prefix_count, rotate_lanes, shift_lanes, skid_buffer, PrefixTopology,
    };
    use hwzip::hdl::{Expr, ModuleBuilder};
    let mut m = ModuleBuilder::new("blocks_lint_w16");
    m.header("Spec: docs/FORMATS.md (shared blocks)");
    let v = m.input("v_i", 1);
    let d = m.input("d_i", 16);
    let r = m.input("r_i", 1);
    let sh = m.input("sh_i", 2);
    let s = skid_buffer(&mut m, "sb", &v, &d, &r);
    m.output_expr("v_o", &s.valid);
    m.output_expr("d_o", &s.data);
    m.output_expr("r_o", &s.ready);
    let flags: Vec<Expr> = (0..8).map(|i| d.bit(i)).collect();
    let (excl, total) = prefix_count(&mut m, "pc", &flags, PrefixTopology::KoggeStone);
    m.output_expr("excl_o", &Expr::cat_lsb(&excl));
    m.output_expr("total_o", &total);
    let pop = popcount(&mut m, "pop", &d);
    m.output_expr("pop_o", &pop);
    let lanes = d.lanes(4);
    let shl = shift_lanes(&mut m, "shl", &lanes, &sh, true);
    m.output_expr("shl_o", &Expr::cat_lsb(&shl));
    let rot = rotate_lanes(&mut m, "rot", &lanes, &sh, true);
    m.output_expr("rot_o", &Expr::cat_lsb(&rot));
    let top = m.finish().unwrap();
    let tmp = tempfile::tempdir().unwrap();
    for (name, text) in hwzip::hdl::emit::emit_design(&top).unwrap() {
        std::fs::write(tmp.path().join(name), text).unwrap();
    }
    lint_dir(tmp.path(), std::slice::from_ref(&top.name));
}

/// Every stream block and an FSM in one module: lint-clean, ASCII, within 100 columns.
#[test]
fn stream_blocks_and_fsm_are_lint_clean() {
    use hwzip::hdl::stream::{self, Layout};
    use hwzip::hdl::{Expr, ModuleBuilder};
    let mut m = ModuleBuilder::new("streams_lint_w8");
    m.header("Spec: docs/FORMATS.md (shared blocks)");
    let l = Layout::new(&[("data", 8), ("dst", 1)]);
    let a = stream::input(&mut m, "a", &l);
    let b = stream::input(&mut m, "b", &l);
    let a = stream::reg_slice(&mut m, "rs", a);
    let a = stream::skid(&mut m, "sk", a);
    let b = stream::fifo(&mut m, "q", 4, b);
    let arb = stream::arbiter_rr(&mut m, "arb", vec![a, b]);
    let dst = arb.field("dst");
    let mut outs = stream::demux(&mut m, "dm", arb, &dst, 2).into_iter();
    let (o0, o1) = (outs.next().unwrap(), outs.next().unwrap());
    let mut f = stream::fork_eager(&mut m, "fe", o0, 2).into_iter();
    let (f0, f1) = (f.next().unwrap(), f.next().unwrap());
    let mut g = stream::fork_lazy(&mut m, "fl", o1, 2).into_iter();
    let (g0, g1) = (g.next().unwrap(), g.next().unwrap());
    let j = stream::join(&mut m, "j", vec![("x", f0), ("y", g0)]);
    stream::output(&mut m, "m", j);
    stream::output(&mut m, "n", f1);
    let sum = g1.field("data") + Expr::lit(8, 1);
    let l2 = Layout::data(8);
    let p = l2.pack(&[("data", sum)]);
    let g1 = g1.map(&mut m, "inc", &p, &l2);
    stream::output(&mut m, "p", g1);
    let go = m.input("go_i", 1);
    let st = m.fsm("state_q", &["idle", "busy", "flush"]);
    let cnt = m.reg("cnt_q", 3, Some(0));
    let busy = st.is("busy");
    m.when(&st.is("idle"), |m| {
        m.when(&go, |m| st.go(m, "busy"));
    })
    .elsewhen(&mut m, &busy, |m| {
        m.set(&cnt, &(cnt.q() + Expr::lit(3, 1)));
        m.when(&cnt.q().eq_lit(7), |m| st.go(m, "flush"));
    })
    .otherwise(&mut m, |m| st.go(m, "idle"));
    m.output_expr("busy_o", &busy);
    let top = m.finish().unwrap();
    let tmp = tempfile::tempdir().unwrap();
    for (name, text) in hwzip::hdl::emit::emit_design(&top).unwrap() {
        assert!(text.is_ascii());
        assert!(text.lines().all(|l| l.len() <= 100), "{}", text);
        std::fs::write(tmp.path().join(name), text).unwrap();
    }
    if std::env::var_os("HWZIP_PRINT_STREAMS").is_some() {
        print!("{}", hwzip::hdl::emit::emit_design(&top).unwrap()[0].1);
    }
    lint_dir(tmp.path(), std::slice::from_ref(&top.name));
}

/// The cache + MSHR controller at both default configurations: lint-clean, ASCII, 100 columns.
#[test]
fn cache_controller_is_lint_clean() {
    use hwzip::rtl::cache::{cache, CacheRtlParams};
    for p in [CacheRtlParams::pact12_md(), CacheRtlParams::buddy_slice()] {
        let top = cache(&p).unwrap();
        let tmp = tempfile::tempdir().unwrap();
        for (name, text) in hwzip::hdl::emit::emit_design(&top).unwrap() {
            assert!(text.is_ascii());
            assert!(text.lines().all(|l| l.len() <= 100), "{}", name);
            std::fs::write(tmp.path().join(name), text).unwrap();
        }
        lint_dir(tmp.path(), std::slice::from_ref(&top.name));
        // `HWZIP_DUMP_CACHE=dir` keeps the files (for `hwzip synth --verilog`).
        if let Some(d) = std::env::var_os("HWZIP_DUMP_CACHE") {
            for (name, text) in hwzip::hdl::emit::emit_design(&top).unwrap() {
                std::fs::create_dir_all(&d).unwrap();
                std::fs::write(std::path::Path::new(&d).join(name), text).unwrap();
            }
        }
    }
}
