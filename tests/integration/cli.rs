//! The `hwzip` binary: happy paths and clear errors (exit status 2, no panic) on bad input.

use crate::common::output_text as text;
use std::path::Path;
use std::process::{Command, Output};

/// Runs hwzip with `-O0` models (`HWZIP_CXX_OPT=0`): the models the library's tests built
/// are reused from the cache. One test builds at the users' default level (`-O1`).
fn hwzip(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_hwzip"))
        .args(args)
        .env("HWZIP_CXX_OPT", "0")
        .output()
        .expect("hwzip runs")
}

fn assert_clean_error(o: &Output, needle: &str) {
    let t = text(o);
    assert_eq!(o.status.code(), Some(2), "expected exit 2: {}", t);
    assert!(t.contains(needle), "expected `{}` in: {}", needle, t);
    assert!(!t.contains("panicked"), "panic: {}", t);
}

#[test]
fn bad_configs_are_clear_errors() {
    let d = tempfile::tempdir().unwrap();
    let c = d.path().join("c.yaml");
    for (yaml, needle) in [
        ("zvc:\n  lanes: 7\n", "lanes = 7"),
        ("zvc:\n  colour: red\n", "colour"),
        ("cosim:\n  in_gap: 2\n", "cosim.in_gap"),
        ("synth: 3\n", "config"),
        ("buddy: {bpc: {entry_bytes: 48}}\n", "bpc.entry_bytes = 48"),
        ("buddy: {mc: {mcs: 3}}\n", "mc.mcs = 3"),
        (
            "buddy: {meta: {size_bytes: 1000}}\n",
            "meta.size_bytes = 1000",
        ),
    ] {
        std::fs::write(&c, yaml).unwrap();
        assert_clean_error(
            &hwzip(&[
                "gen",
                "--config",
                c.to_str().unwrap(),
                "--out",
                d.path().to_str().unwrap(),
            ]),
            needle,
        );
    }
    assert_clean_error(
        &hwzip(&["gen", "--config", "/nonexistent.yaml"]),
        "cannot read config",
    );
    assert_clean_error(
        &hwzip(&["gen", "--engine", "lz4"]),
        "invalid value 'lz4' for '--engine",
    );
    assert_clean_error(
        &hwzip(&["cosim", "--unit", "shifter", "--lines", "1"]),
        "unknown unit `shifter`",
    );
}

#[test]
fn bad_traces_and_containers_are_clear_errors() {
    let d = tempfile::tempdir().unwrap();
    let odd = d.path().join("odd.bin");
    std::fs::write(&odd, [1u8, 2, 3, 4, 5]).unwrap();
    assert_clean_error(
        &hwzip(&["eval", "--trace", odd.to_str().unwrap()]),
        "odd.bin",
    );
    assert_clean_error(
        &hwzip(&["eval", "--trace", "/nonexistent.bin"]),
        "nonexistent.bin",
    );
    let junk = d.path().join("junk.hwz");
    std::fs::write(&junk, b"HWZP\x01garbage").unwrap();
    assert_clean_error(
        &hwzip(&[
            "decompress",
            junk.to_str().unwrap(),
            d.path().join("o").to_str().unwrap(),
        ]),
        "junk.hwz",
    );
}

#[test]
fn eval_compress_decompress_round_trip() {
    let d = tempfile::tempdir().unwrap();
    let elems =
        hwzip::trace::synthetic::relu_tensor([2, 8, 16, 16], 0.6, hwzip::trace::Layout::Nchw, 5);
    let bin = d.path().join("act.bin");
    hwzip::trace::file::write_raw(&bin, &elems, 32).unwrap();
    let o = hwzip(&["eval", "--trace", bin.to_str().unwrap()]);
    let t = text(&o);
    assert!(o.status.success(), "{}", t);
    for scheme in ["ZVC", "RLE-A", "zlib"] {
        assert!(t.contains(scheme), "{} missing in {}", scheme, t);
    }
    let hwz = d.path().join("act.hwz");
    let back = d.path().join("act.out");
    assert!(
        hwzip(&["compress", bin.to_str().unwrap(), hwz.to_str().unwrap()])
            .status
            .success()
    );
    assert!(
        hwzip(&["decompress", hwz.to_str().unwrap(), back.to_str().unwrap()])
            .status
            .success()
    );
    assert_eq!(std::fs::read(&bin).unwrap(), std::fs::read(&back).unwrap());
    assert!(std::fs::metadata(&hwz).unwrap().len() < std::fs::metadata(&bin).unwrap().len());
}

#[test]
fn cosim_dump_out_is_the_golden_stream() {
    let d = tempfile::tempdir().unwrap();
    let elems = hwzip::trace::synthetic::uniform_density(32 * 40 + 5, 0.3, 32, 9);
    let bin = d.path().join("t.bin");
    hwzip::trace::file::write_raw(&bin, &elems, 32).unwrap();
    let dump = d.path().join("rtl_stream.bin");
    let cfg = d.path().join("c.yaml");
    // One transfer carrying the whole trace.
    std::fs::write(&cfg, "cosim:\n  max_windows: 1000\n").unwrap();
    let o = hwzip(&[
        "cosim",
        "--unit",
        "compressor",
        "--config",
        cfg.to_str().unwrap(),
        "--trace",
        bin.to_str().unwrap(),
        "--dump-out",
        dump.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", text(&o));
    assert!(text(&o).contains(" 0 mismatches"), "{}", text(&o));
    let golden = hwzip::model::zvc::compress(&Default::default(), &elems).unwrap();
    assert_eq!(std::fs::read(&dump).unwrap(), golden);
    assert!(Path::new(&dump).exists());
}

/// Also the one model of the fast tier built at the users' default optimisation level.
#[test]
fn cosim_json_reports_every_unit() {
    let o = Command::new(env!("CARGO_BIN_EXE_hwzip"))
        .args([
            "cosim",
            "--engine",
            "buddy",
            "--unit",
            "size-mapper",
            "--lines",
            "40",
            "--json",
        ])
        .env_remove("HWZIP_CXX_OPT")
        .output()
        .expect("hwzip runs");
    assert!(o.status.success(), "{}", text(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).expect("stdout is JSON");
    let a = v.as_array().expect("an array of reports");
    assert_eq!(a.len(), 1);
    assert_eq!(a[0]["engine"], "buddy");
    assert_eq!(a[0]["unit"], "size-mapper");
    assert_eq!(a[0]["stats"]["lines"], 40);
    assert_eq!(a[0]["stats"]["mismatches"], 0);
    assert!(a[0]["stats"]["cycles"].as_u64().unwrap() >= 40);
}

/// The line-codec engines compress files and pipes, print their encoding histogram, and
/// decompress with the engine the container names.
#[test]
fn line_engines_compress_files_and_pipes() {
    use std::io::Write;
    let d = tempfile::tempdir().unwrap();
    // Zero pages, small integers and noise: every codec and the raw tag get lines.
    let mut data = vec![0u8; 4096];
    data.extend((0..2048u32).flat_map(|i| (i % 300).to_le_bytes()));
    data.extend((0..4096u32).map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8));
    data.truncate(data.len() - 3);
    let bin = d.path().join("d.bin");
    std::fs::write(&bin, &data).unwrap();
    for (engine, codec) in [("adaptive", "| cpack |"), ("buddy", "| bpc |")] {
        let hwz = d.path().join(format!("d.{engine}.hwz"));
        let back = d.path().join(format!("d.{engine}.out"));
        let o = hwzip(&[
            "compress",
            "--engine",
            engine,
            "--stats",
            bin.to_str().unwrap(),
            hwz.to_str().unwrap(),
        ]);
        assert!(o.status.success(), "{}", text(&o));
        let t = text(&o);
        assert!(t.contains(codec) && t.contains("| raw |"), "{t}");
        assert!(std::fs::metadata(&hwz).unwrap().len() < data.len() as u64);
        let o = hwzip(&["decompress", hwz.to_str().unwrap(), back.to_str().unwrap()]);
        assert!(o.status.success(), "{}", text(&o));
        assert_eq!(std::fs::read(&back).unwrap(), data);
        // Pipes: compress from stdin to stdout, the summary on stderr.
        let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_hwzip"))
            .args(["compress", "--engine", engine, "-", "-"])
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let mut stdin = child.stdin.take().unwrap();
        let feed = data.clone();
        let w = std::thread::spawn(move || stdin.write_all(&feed));
        let o = child.wait_with_output().unwrap();
        w.join().unwrap().unwrap();
        assert!(o.status.success(), "{}", text(&o));
        assert_eq!(o.stdout, std::fs::read(&hwz).unwrap());
        assert!(String::from_utf8_lossy(&o.stderr).contains("ratio"));
        // The wrong engine is a clear error.
        let other = if engine == "buddy" {
            "adaptive"
        } else {
            "buddy"
        };
        assert_clean_error(
            &hwzip(&[
                "decompress",
                "--engine",
                other,
                hwz.to_str().unwrap(),
                back.to_str().unwrap(),
            ]),
            "written by engine",
        );
    }
}

#[test]
fn trace_command_writes_loadable_stimulus_and_rejects_bad_arguments() {
    let d = tempfile::tempdir().unwrap();
    let out = d.path().join("act.bin");
    let o = hwzip(&[
        "trace",
        "--class",
        "relu",
        "--shape",
        "1,8,9,9",
        "--sparsity",
        "0.7",
        out.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", text(&o));
    let t = hwzip::trace::file::load_trace(&out.with_extension("yaml"), 32).unwrap();
    assert_eq!(t.elems.len(), 8 * 81);
    let sparsity = t.elems.iter().filter(|x| **x == 0).count() as f64 / t.elems.len() as f64;
    assert!((sparsity - 0.7).abs() < 0.02, "{}", sparsity);
    let o = hwzip(&[
        "trace",
        "--class",
        "clustered",
        "--elems",
        "100",
        "--word-bits",
        "16",
        out.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", text(&o));
    assert_eq!(std::fs::metadata(&out).unwrap().len(), 200);
    assert_clean_error(
        &hwzip(&["trace", "--class", "gauss", out.to_str().unwrap()]),
        "unknown class `gauss`",
    );
    assert_clean_error(
        &hwzip(&["trace", "--shape", "1,2,3", out.to_str().unwrap()]),
        "--shape",
    );
    assert_clean_error(
        &hwzip(&["trace", "--word-bits", "12", out.to_str().unwrap()]),
        "--word-bits 12",
    );
}

#[test]
fn base_xor_eval_tables_and_errors() {
    // Three synthetic classes: one table each plus the summary with the mean row.
    let o = hwzip(&[
        "eval",
        "--engine",
        "base-xor",
        "--class",
        "fp32-soa",
        "--class",
        "zero-mixed",
        "--class",
        "random",
        "--lines",
        "500",
    ]);
    let t = text(&o);
    assert!(o.status.success(), "{}", t);
    for needle in [
        "trace: fp32-soa (500 sectors",
        "| raw |",
        "universal s3 zdr32 + dbi8",
        "## Summary",
        "**mean**",
    ] {
        assert!(t.contains(needle), "missing `{}` in {}", needle, t);
    }
    // A file trace: an .npy array (header skipped), padded to whole sectors.
    let d = tempfile::tempdir().unwrap();
    let p = d.path().join("x.npy");
    let mut npy = b"\x93NUMPY\x01\x00".to_vec();
    let h = b"{'descr': '<f4', 'fortran_order': False, 'shape': (100,), }         \n";
    npy.extend((h.len() as u16).to_le_bytes());
    npy.extend(h);
    for i in 0..100 {
        npy.extend((1.0f32 + i as f32 * 1e-3).to_le_bytes());
    }
    std::fs::write(&p, npy).unwrap();
    let o = hwzip(&[
        "eval",
        "--engine",
        "base-xor",
        "--trace",
        p.to_str().unwrap(),
        "--json",
    ]);
    let t = text(&o);
    assert!(o.status.success(), "{}", t);
    let v: serde_json::Value = serde_json::from_str(&String::from_utf8_lossy(&o.stdout)).unwrap();
    assert_eq!(v[0]["sectors"], 13);
    // Errors: nothing to evaluate, unknown class, bad gzip, compress on a non-compressor.
    // No data: every synthetic class, as `--class all`.
    let o = hwzip(&["eval", "--engine", "base-xor", "--lines", "200"]);
    assert!(o.status.success(), "{}", text(&o));
    let o = hwzip(&[
        "eval",
        "--engine",
        "base-xor",
        "--class",
        "pixels",
        "--lines",
        "50",
        "--toggles",
        "idle",
    ]);
    assert!(
        text(&o).contains("bus idle at 0 between transactions"),
        "{}",
        text(&o)
    );
    assert_clean_error(
        &hwzip(&[
            "eval",
            "--engine",
            "base-xor",
            "--class",
            "pixels",
            "--toggles",
            "x",
        ]),
        "--toggles `x`",
    );
    assert_clean_error(
        &hwzip(&["eval", "--engine", "base-xor", "--class", "fp128"]),
        "unknown sector class `fp128`",
    );
    let g = d.path().join("bad.gz");
    std::fs::write(&g, b"nope").unwrap();
    assert_clean_error(
        &hwzip(&[
            "eval",
            "--engine",
            "base-xor",
            "--trace",
            g.to_str().unwrap(),
        ]),
        "gzip",
    );
    assert_clean_error(
        &hwzip(&[
            "compress",
            "--engine",
            "base-xor",
            p.to_str().unwrap(),
            "/dev/null",
        ]),
        "fixed-size link encoding",
    );
}

#[test]
fn adaptive_eval_prints_ratios_and_decisions() {
    let o = hwzip(&[
        "eval",
        "--engine",
        "adaptive",
        "--lambda",
        "6",
        "--class",
        "zero-heavy",
        "--class",
        "random",
        "--lines",
        "2000",
    ]);
    let t = text(&o);
    assert!(o.status.success(), "{}", t);
    for needle in [
        "trace: zero-heavy (2000 lines), λ = 6",
        "| **adaptive** |",
        "running-phase decisions (7 phases)",
        "none×7",
    ] {
        assert!(t.contains(needle), "missing `{}` in {}", needle, t);
    }
    // No data: every line profile, as `--class all`.
    let o = hwzip(&["eval", "--engine", "adaptive", "--lines", "200"]);
    assert!(o.status.success(), "{}", text(&o));
    assert_clean_error(
        &hwzip(&["eval", "--engine", "adaptive", "--class", "bench-xyz"]),
        "unknown line profile `bench-xyz`",
    );
}

#[test]
fn flow_and_regress_reject_bad_options() {
    let o = hwzip(&["flow", "--profile", "fast"]);
    assert_clean_error(&o, "unknown profile `fast`");
    let o = hwzip(&["flow", "--engine", "nope"]);
    assert_clean_error(&o, "nope");
    let o = hwzip(&["flow", "--lines", "0"]);
    assert_clean_error(&o, "--lines");
    let o = hwzip(&["flow", "-j", "0"]);
    assert_clean_error(&o, "--jobs");
    let o = hwzip(&["flow", "--engine", "zvc", "--unit", "encoder"]);
    assert_clean_error(&o, "zvc has no unit `encoder`");
    let o = hwzip(&["regress", "--shard", "3/2"]);
    assert_clean_error(&o, "--shard");
    let o = hwzip(&["regress", "--shard", "x"]);
    assert_clean_error(&o, "--shard");
}

/// A device node or FIFO given as an output is written in place and stays what it was (never
/// replaced by a regular file), and `trace` writes no description beside it; a `trace` output
/// that its own description would overwrite is refused.
#[test]
fn special_outputs_stay_special_and_trace_refuses_a_clash() {
    use std::os::unix::fs::FileTypeExt;
    let d = tempfile::tempdir().unwrap();
    let f = d.path().join("data.bin");
    std::fs::write(&f, [1u8, 0, 0, 0, 0, 0, 0, 0, 7, 7, 7, 7]).unwrap();
    let fs = f.to_str().unwrap();
    // The null and full devices' numbers, made in our own folder where mknod is permitted.
    let null = d.path().join("null");
    let full = d.path().join("full");
    let c = |p: &Path| std::ffi::CString::new(p.to_str().unwrap()).unwrap();
    // SAFETY: mknod(2) on paths in our own temporary folder.
    let made = unsafe {
        libc::mknod(
            c(&null).as_ptr(),
            libc::S_IFCHR | 0o666,
            libc::makedev(1, 3),
        ) == 0
            && libc::mknod(
                c(&full).as_ptr(),
                libc::S_IFCHR | 0o666,
                libc::makedev(1, 7),
            ) == 0
    };
    if made {
        let (n, fl) = (null.to_str().unwrap(), full.to_str().unwrap());
        assert!(hwzip(&["compress", fs, n]).status.success());
        assert_clean_error(&hwzip(&["compress", fs, fl]), "No space left");
        assert!(hwzip(&["trace", "--elems", "64", n]).status.success());
        assert_clean_error(&hwzip(&["trace", "--elems", "64", fl]), "No space left");
        for p in [&null, &full] {
            let t = std::fs::metadata(p).unwrap().file_type();
            assert!(t.is_char_device(), "{} is no longer a device", p.display());
        }
    } else {
        eprintln!("mknod not permitted here; the FIFO case still runs");
    }
    // A FIFO with a reader: the trace's data goes through it, the FIFO stays.
    let fifo = d.path().join("fifo");
    // SAFETY: mkfifo(3) on a path in our own temporary folder.
    assert_eq!(unsafe { libc::mkfifo(c(&fifo).as_ptr(), 0o600) }, 0);
    let reader = {
        let fifo = fifo.clone();
        std::thread::spawn(move || std::fs::read(&fifo).unwrap().len())
    };
    let o = hwzip(&["trace", "--elems", "64", fifo.to_str().unwrap()]);
    if !o.status.success() {
        // Unblock the reader (it waits for a writer) before failing.
        drop(std::fs::OpenOptions::new().write(true).open(&fifo));
    }
    assert!(o.status.success(), "{}", text(&o));
    assert_eq!(reader.join().unwrap(), 256);
    assert!(std::fs::metadata(&fifo).unwrap().file_type().is_fifo());
    let names: Vec<String> = std::fs::read_dir(d.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().to_string())
        .collect();
    assert!(
        names
            .iter()
            .all(|n| !n.ends_with(".yaml") && !n.contains("hwzip-tmp")),
        "{names:?}"
    );
    // The data file and its description would share a name.
    let clash = d.path().join("clash.yaml");
    let o = hwzip(&[
        "trace",
        "--class",
        "relu",
        "--elems",
        "64",
        clash.to_str().unwrap(),
    ]);
    assert_clean_error(&o, "overwritten by its own description");
    assert!(!clash.exists());
}

/// `compress` / `decompress` never overwrite their input (directly or through a symlink), and
/// a failed write leaves no partial output behind.
#[test]
fn outputs_never_replace_the_input_or_stay_partial() {
    let d = tempfile::tempdir().unwrap();
    let f = d.path().join("data.bin");
    std::fs::write(&f, [1u8, 0, 0, 0, 0, 0, 0, 0, 7, 7, 7, 7]).unwrap();
    let before = std::fs::read(&f).unwrap();
    let fs = f.to_str().unwrap();
    assert_clean_error(&hwzip(&["compress", fs, fs]), "is the input file");
    let link = d.path().join("link.bin");
    std::os::unix::fs::symlink(&f, &link).unwrap();
    assert_clean_error(
        &hwzip(&["compress", fs, link.to_str().unwrap()]),
        "is the input file",
    );
    assert_clean_error(&hwzip(&["decompress", fs, fs]), "is the input file");
    assert_eq!(std::fs::read(&f).unwrap(), before);
    // Standard input that is the output file, for both directions.
    let hz = d.path().join("data.hz");
    assert!(hwzip(&["compress", fs, hz.to_str().unwrap()])
        .status
        .success());
    let hz_before = std::fs::read(&hz).unwrap();
    for (cmd, file) in [("compress", &f), ("decompress", &hz)] {
        let o = Command::new(env!("CARGO_BIN_EXE_hwzip"))
            .args([cmd, "-", file.to_str().unwrap()])
            .stdin(std::fs::File::open(file).unwrap())
            .output()
            .unwrap();
        assert_clean_error(&o, "is the file on standard input");
    }
    assert_eq!(std::fs::read(&f).unwrap(), before);
    assert_eq!(std::fs::read(&hz).unwrap(), hz_before);
    // An output folder that does not exist: an error, and nothing is created.
    let missing = d.path().join("no").join("out.hwz");
    assert_clean_error(
        &hwzip(&["compress", fs, missing.to_str().unwrap()]),
        "cannot write",
    );
    let names: Vec<String> = std::fs::read_dir(d.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().to_string())
        .collect();
    assert!(
        names.iter().all(|n| !n.contains("hwzip-tmp")),
        "temporary file left: {:?}",
        names
    );
}

/// Sizes from the command line are checked before anything is allocated.
#[test]
fn huge_sizes_are_errors_not_aborts() {
    let d = tempfile::tempdir().unwrap();
    let out = d.path().join("t.bin");
    let o = out.to_str().unwrap();
    assert_clean_error(
        &hwzip(&["trace", "--shape", "1000000,1000000,1000000,1000000", o]),
        "--shape",
    );
    assert_clean_error(
        &hwzip(&["trace", "--shape", "1024,1024,1024,1", o]),
        "elements",
    );
    assert_clean_error(
        &hwzip(&["trace", "--class", "uniform_random", "--elems", "0", o]),
        "--elems 0",
    );
    assert_clean_error(
        &hwzip(&[
            "trace",
            "--class",
            "uniform_random",
            "--elems",
            "18446744073709551615",
            o,
        ]),
        "--elems",
    );
    assert!(!out.exists());
    for engine in ["base-xor", "adaptive"] {
        assert_clean_error(
            &hwzip(&[
                "eval",
                "--engine",
                engine,
                "--class",
                "all",
                "--lines",
                "8589934592",
            ]),
            "--lines 8589934592",
        );
    }
}

/// A container read from standard input is refused on its first bytes, not after the input
/// limit (an endless stream of zeros).
#[test]
fn stdin_that_is_no_container_fails_on_its_first_bytes() {
    let d = tempfile::tempdir().unwrap();
    let out = d.path().join("out.bin");
    let o = Command::new(env!("CARGO_BIN_EXE_hwzip"))
        .args(["decompress", "-", out.to_str().unwrap()])
        .stdin(std::fs::File::open("/dev/zero").unwrap())
        .output()
        .unwrap();
    assert_clean_error(&o, "standard input: not an hwzip container");
    assert!(!out.exists());
}

/// A report set is written whole or not at all: with the file size limited so that
/// `report.html` cannot be written (as on a full disk), `eval --out` fails naming the file,
/// leaves no `report.md`/`report.json` of the run and no temporary, and an earlier complete
/// set stays as it was.
#[test]
fn report_sets_are_written_whole_or_not_at_all() {
    use std::os::unix::process::CommandExt;
    let d = tempfile::tempdir().unwrap();
    let trace = d.path().join("t.bin");
    let data: Vec<u8> = (0..65536u32)
        .map(|i| (i.wrapping_mul(2654435761) >> 13) as u8)
        .collect();
    std::fs::write(&trace, data).unwrap();
    let run = |out: &Path, fsize: Option<u64>| {
        let mut c = Command::new(env!("CARGO_BIN_EXE_hwzip"));
        c.args(["eval", "--engine", "base-xor", "--trace"])
            .arg(&trace)
            .arg("--out")
            .arg(out);
        if let Some(limit) = fsize {
            // SAFETY: setrlimit and signal are async-signal-safe; SIGXFSZ ignored makes an
            // oversized write fail with EFBIG instead of killing the process.
            unsafe {
                c.pre_exec(move || {
                    let r = libc::rlimit {
                        rlim_cur: limit,
                        rlim_max: limit,
                    };
                    libc::signal(libc::SIGXFSZ, libc::SIG_IGN);
                    if libc::setrlimit(libc::RLIMIT_FSIZE, &r) != 0 {
                        return Err(std::io::Error::last_os_error());
                    }
                    Ok(())
                });
            }
        }
        c.output().unwrap()
    };
    let names = |dir: &Path| -> Vec<String> {
        let mut v: Vec<String> = std::fs::read_dir(dir)
            .map(|r| {
                r.map(|e| e.unwrap().file_name().to_string_lossy().into())
                    .collect()
            })
            .unwrap_or_default();
        v.sort();
        v
    };
    let fresh = d.path().join("fresh");
    let o = run(&fresh, Some(10_000));
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("report.html") && err.contains("no file of its report set was written"),
        "{err}"
    );
    assert!(names(&fresh).is_empty(), "left {:?}", names(&fresh));
    // An earlier complete set is kept whole.
    let kept = d.path().join("kept");
    let o = run(&kept, None);
    assert!(o.status.success(), "{}", text(&o));
    let before: Vec<Vec<u8>> = ["report.html", "report.json", "report.md"]
        .iter()
        .map(|n| std::fs::read(kept.join(n)).unwrap())
        .collect();
    std::fs::write(&trace, vec![0u8; 4096]).unwrap();
    let o = run(&kept, Some(10_000));
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert_eq!(names(&kept), ["report.html", "report.json", "report.md"]);
    for (n, b) in ["report.html", "report.json", "report.md"]
        .iter()
        .zip(before)
    {
        assert_eq!(std::fs::read(kept.join(n)).unwrap(), b, "{n} changed");
    }
}

/// `compress --codec C` round-trips a file through every line codec alone (decompressed
/// without naming the codec), and `eval --codecs all` sets them beside zlib and zstd.
#[test]
fn every_codec_alone_round_trips_and_compares() {
    let d = tempfile::tempdir().unwrap();
    let input = d.path().join("in.bin");
    let data: Vec<u8> = (0..30_000u32)
        .flat_map(|i| match (i / 256) % 3 {
            0 => 0u32.to_le_bytes(),
            1 => (i / 7).to_le_bytes(),
            _ => ((i as f32) * 0.01).cos().to_bits().to_le_bytes(),
        })
        .collect();
    std::fs::write(&input, &data).unwrap();
    let s = |p: &Path| p.to_str().unwrap().to_string();
    for codec in ["bdi", "fpc", "cpack", "cpack128", "bpc", "zvc"] {
        let c = d.path().join(format!("{codec}.hz"));
        let back = d.path().join(format!("{codec}.out"));
        let o = hwzip(&["compress", "--codec", codec, "--stats", &s(&input), &s(&c)]);
        assert!(o.status.success(), "{codec}: {}", text(&o));
        assert!(text(&o).contains(&format!("{codec}: ")), "{}", text(&o));
        assert!(
            std::fs::metadata(&c).unwrap().len() < data.len() as u64,
            "{codec}"
        );
        let o = hwzip(&["decompress", &s(&c), &s(&back)]);
        assert!(o.status.success(), "{codec}: {}", text(&o));
        assert_eq!(std::fs::read(&back).unwrap(), data, "{codec}");
        let o = hwzip(&["decompress", "--engine", "buddy", &s(&c), &s(&back)]);
        assert_clean_error(&o, "decompress it without --engine");
    }
    assert_clean_error(
        &hwzip(&[
            "compress",
            "--codec",
            "lz4",
            &s(&input),
            &s(&d.path().join("x")),
        ]),
        "unknown codec `lz4`",
    );
    let o = hwzip(&["eval", "--codecs", "all", "--trace", &s(&input)]);
    assert!(o.status.success(), "{}", text(&o));
    let out = String::from_utf8_lossy(&o.stdout);
    for row in [
        "| bdi |",
        "| cpack128 |",
        "| zvc |",
        "| zlib-6 |",
        "| zstd-3 |",
    ] {
        assert!(out.contains(row), "{row} missing:\n{out}");
    }
    assert_clean_error(&hwzip(&["eval", "--codecs", "all"]), "give --trace FILE");
}

/// In a log (standard error not a terminal), a running step prints a heartbeat with its
/// time so far whether or not it reports progress (`HWZIP_HEARTBEAT_S` shortens the minute).
#[test]
fn long_steps_print_a_heartbeat_in_logs() {
    let o = Command::new(env!("CARGO_BIN_EXE_hwzip"))
        .args([
            "cosim",
            "--engine",
            "zvc",
            "--unit",
            "compressor",
            "--lines",
            "100000",
        ])
        .env("HWZIP_HEARTBEAT_S", "1")
        .env("HWZIP_CXX_OPT", "0")
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", text(&o));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.lines()
            .any(|l| l.contains("cosim zvc compressor (") && l.contains(" s): ")),
        "no heartbeat in:\n{err}"
    );
}

/// A reader that went away (`hwzip ... | head -1` after its line, here a pipe whose read end
/// is closed before hwzip starts) stops a command quietly with 128 + SIGPIPE, as it stops
/// other Unix tools: no panic, no message, no output file left half-written.
#[test]
fn a_closed_standard_output_stops_commands_quietly() {
    let d = tempfile::tempdir().unwrap();
    let trace = d.path().join("t.bin");
    let runs: [Vec<String>; 3] = [
        ["gen", "--engine", "zvc", "--out"]
            .iter()
            .map(|s| s.to_string())
            .chain([d.path().join("rtl").display().to_string()])
            .collect(),
        [
            "eval", "--engine", "base-xor", "--class", "all", "--lines", "64",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect(),
        ["trace", "--class", "relu", "--elems", "256"]
            .iter()
            .map(|s| s.to_string())
            .chain([trace.display().to_string()])
            .collect(),
    ];
    for args in &runs {
        let (reader, writer) = std::io::pipe().unwrap();
        drop(reader);
        let o = Command::new(env!("CARGO_BIN_EXE_hwzip"))
            .args(args)
            .stdout(writer)
            .output()
            .expect("hwzip runs");
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(141), "{args:?}: {err}");
        assert!(!err.contains("panicked"), "{args:?}: {err}");
    }
}
