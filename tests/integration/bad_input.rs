//! Bad input, class by class: every case must end with exit status 2 and one short line on
//! stderr that names the problem, without a panic, a partial output or a changed input. The
//! counts per class are printed (`--nocapture`) for the table in docs/RELIABILITY.md.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

struct Case {
    class: &'static str,
    args: Vec<String>,
    needle: &'static str,
}

fn case(class: &'static str, args: &[&str], needle: &'static str) -> Case {
    Case {
        class,
        args: args.iter().map(|s| s.to_string()).collect(),
        needle,
    }
}

fn s(p: &Path) -> String {
    p.to_string_lossy().to_string()
}

fn gz(data: &[u8]) -> Vec<u8> {
    let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
    e.write_all(data).unwrap();
    e.finish().unwrap()
}

fn npy(descr: &str, shape: &str, data: &[u8]) -> Vec<u8> {
    let h = format!("{{'descr': '{descr}', 'fortran_order': False, 'shape': {shape}, }}\n");
    let mut v = b"\x93NUMPY\x01\x00".to_vec();
    v.extend((h.len() as u16).to_le_bytes());
    v.extend(h.as_bytes());
    v.extend(data);
    v
}

#[test]
fn every_bad_input_is_a_one_line_error() {
    let d = tempfile::tempdir().unwrap();
    let p = |n: &str| d.path().join(n);
    let w = |n: &str, data: &[u8]| -> String {
        std::fs::write(p(n), data).unwrap();
        s(&p(n))
    };
    let out = s(&p("out.bin"));
    let dir = s(d.path());
    let mut cases = Vec::new();

    // Configs.
    for (i, yaml) in [
        ("zvc: [".to_string(), "config"),
        (format!("zvc: {}", "[".repeat(100_000)), "deeper than 32"),
        (format!("a:\n{}b: 1\n", " ".repeat(1000)), "indented 1000"),
        (
            format!("zvc:\n  lanes: \"{}\"\n", "x".repeat(10 << 20)),
            "1 MiB limit",
        ),
        (
            format!("zvc:\n  lanes: \"{}\"\n", "x".repeat(500_000)),
            "(500000 bytes)",
        ),
        ("zvc:\n  lanes: 7\n".into(), "lanes = 7"),
        ("adaptive:\n  lambda: 1e300\n".into(), "(303 bytes)"),
        ("zvc:\n  window: 99999999999\n".into(), "window"),
        ("cosim:\n  lines: 0\n".into(), "cosim.lines"),
        ("synth:\n  libraries: []\n".into(), "libraries is empty"),
        ("synth:\n  clock_ns: -1\n".into(), "clock_ns"),
        ("adaptive:\n  sample_len: 100000\n".into(), "sample_len"),
        ("\u{0}\u{1}\u{2}".into(), "config"),
    ]
    .into_iter()
    .enumerate()
    {
        let (yaml, needle) = yaml;
        let c = w(&format!("c{i}.yaml"), yaml.as_bytes());
        let sub = if needle == "libraries is empty" {
            vec!["synth", "--config", &c, "--out", &dir]
        } else {
            vec!["gen", "--config", &c, "--out", &dir]
        };
        cases.push(case("config", &sub, needle));
    }
    cases.push(case("config", &["gen", "--config", &dir], "directory"));
    cases.push(case(
        "config",
        &["gen", "--config", "/dev/zero"],
        "a device",
    ));
    cases.push(case(
        "config",
        &["gen", "--config", "/nonexistent.yaml"],
        "cannot read",
    ));

    // Traces.
    let empty = w("empty.bin", b"");
    let odd = w("odd.bin", &[1, 2, 3]);
    let bomb = {
        let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
        let z = vec![0u8; 1 << 20];
        for _ in 0..100 {
            e.write_all(&z).unwrap();
        }
        w("bomb.bin.gz", &e.finish().unwrap())
    };
    let bad_gz = w("bad.gz", b"\x1f\x8b\x08\x00garbage");
    let empty_gz = w("empty.gz", &gz(b""));
    let data16: Vec<u8> = (0..64).collect();
    let npy_short = w("short.npy", &npy("<f4", "(100,)", &data16));
    let npy_big = w("big.npy", &npy("<f4", "(4611686018427387904, 4)", &data16));
    let npy_be = w("be.npy", &npy(">f4", "(16,)", &data16));
    let npy_obj = w("obj.npy", &npy("|O", "(8,)", &data16));
    let npy_hdr = w("hdr.npy", b"\x93NUMPY\x01\x00\xff\xff{'descr'");
    let st = |h: &str, data: &[u8]| -> Vec<u8> {
        let mut v = (h.len() as u64).to_le_bytes().to_vec();
        v.extend(h.as_bytes());
        v.extend(data);
        v
    };
    let st_past = w("past.safetensors", &st("{}", &[])[..4]);
    let st_huge = w("huge.safetensors", &u64::MAX.to_le_bytes());
    let st_json = w("json.safetensors", &st("{\"a\":", &data16));
    let st_range = w(
        "range.safetensors",
        &st(
            r#"{"a":{"dtype":"F32","shape":[32],"data_offsets":[0,128]}}"#,
            &data16,
        ),
    );
    let st_shape = w(
        "shape.safetensors",
        &st(
            r#"{"a":{"dtype":"F32","shape":[3],"data_offsets":[0,16]}}"#,
            &data16,
        ),
    );
    let st_none = w("none.safetensors", &st(r#"{"__metadata__":{}}"#, &[]));
    let raw16 = w("t16.bin", &data16);
    let y16 = w("t16.yaml", b"file: t16.bin\nword_bits: 16\n");
    let ydeep = w(
        "deep.yaml",
        format!("file: {}", "{".repeat(50_000)).as_bytes(),
    );
    let ymissing = w("missing.yaml", b"file: nowhere.bin\n");
    let ygz = w("gz.yaml", b"file: bad.gz\n");
    let sets = |name: &str, yaml: &[u8]| -> String {
        let dir = p(name);
        std::fs::create_dir(&dir).unwrap();
        std::fs::write(dir.join("a.yaml"), b"zvc:\n  lanes: 8\n").unwrap();
        std::fs::write(dir.join("bad.yaml"), yaml).unwrap();
        s(&dir)
    };
    let bad_sets = sets("bad_sets", b"zvc:\n  lanes: 7\n");
    let good_sets = sets("good_sets", b"zvc:\n  lanes: 16\n");
    let npy_f8 = w("f8.npy", &npy("<f8", "(8,)", &data16));
    for (args, needle) in [
        (vec!["eval", "--trace", &empty], "empty"),
        (
            vec!["eval", "--engine", "base-xor", "--trace", &empty],
            "empty",
        ),
        (
            vec!["eval", "--engine", "adaptive", "--trace", &empty_gz],
            "empty",
        ),
        (vec!["cosim", "--lines", "1", "--trace", &empty], "empty"),
        (vec!["eval", "--trace", &odd], "not a multiple"),
        (
            vec!["eval", "--engine", "base-xor", "--trace", &bomb],
            "gzip bomb",
        ),
        (
            vec!["eval", "--engine", "base-xor", "--trace", &bad_gz],
            "gzip",
        ),
        (
            vec!["eval", "--engine", "base-xor", "--trace", &npy_short],
            "400 bytes",
        ),
        (
            vec!["eval", "--engine", "base-xor", "--trace", &npy_big],
            "overflows",
        ),
        (
            vec!["eval", "--engine", "base-xor", "--trace", &npy_be],
            "little-endian",
        ),
        (
            vec!["eval", "--engine", "base-xor", "--trace", &npy_obj],
            "not supported",
        ),
        (
            vec!["eval", "--engine", "base-xor", "--trace", &npy_hdr],
            "header",
        ),
        (
            vec!["eval", "--trace", &y16],
            "16-bit elements but zvc.word_bits is 32",
        ),
        (
            vec!["cosim", "--lines", "1", "--trace", &y16],
            "16-bit elements",
        ),
        (
            vec!["eval", "--engine", "buddy", "--trace", &st_past],
            "shorter than",
        ),
        (
            vec!["eval", "--engine", "buddy", "--trace", &st_huge],
            "limit",
        ),
        (
            vec!["eval", "--engine", "buddy", "--trace", &st_json],
            "not valid JSON",
        ),
        (
            vec!["eval", "--engine", "buddy", "--trace", &st_range],
            "outside",
        ),
        (
            vec!["eval", "--engine", "base-xor", "--trace", &st_shape],
            "needs 12 bytes",
        ),
        (
            vec!["eval", "--engine", "buddy", "--trace", &st_none],
            "empty",
        ),
        // Every engine reads traces alike: headers and gzip are checked, never elements.
        (vec!["eval", "--trace", &npy_short], "400 bytes"),
        (vec!["eval", "--trace", &bad_gz], "gzip"),
        (vec!["cosim", "--lines", "1", "--trace", &npy_hdr], "header"),
        (vec!["eval", "--trace", &npy_f8], "64-bit"),
        (vec!["eval", "--trace", &ygz], "gzip"),
        (
            vec!["eval", "--engine", "base-xor", "--trace", &ygz],
            "gzip",
        ),
        (vec!["eval", "--trace", &ydeep], "deeper than 32"),
        (vec!["eval", "--trace", &ymissing], "nowhere.bin"),
        (vec!["eval", "--trace", &dir], "directory"),
        (vec!["eval", "--trace", "/dev/zero"], "a device"),
        (
            vec!["--max-input", "16", "eval", "--trace", &raw16],
            "16 bytes limit for traces",
        ),
    ] {
        cases.push(case("trace", &args, needle));
    }

    // Containers.
    let good_in = w("in.bin", &[0u8; 1000]);
    let long_grid = format!("{}=1,2", "k".repeat(100_000));
    let hz = s(&p("good.hz"));
    let st = Command::new(env!("CARGO_BIN_EXE_hwzip"))
        .args(["compress", &good_in, &hz])
        .output()
        .unwrap();
    assert!(st.status.success());
    let good = std::fs::read(&hz).unwrap();
    let mut flipped = good.clone();
    flipped[20] ^= 4;
    let flipped = w("flip.hz", &flipped);
    let truncated = w("trunc.hz", &good[..good.len() - 3]);
    let mut v9 = good.clone();
    v9[4] = 9;
    let v9 = w("v9.hz", &v9);
    let notc = w("random.hz", b"PK\x03\x04 definitely a zip");
    for (args, needle) in [
        (vec!["decompress", &flipped, &out], "CRC"),
        (vec!["decompress", &truncated, &out], "container"),
        (vec!["decompress", &v9, &out], "version 9"),
        (vec!["decompress", &notc, &out], "not an hwzip container"),
        (vec!["decompress", &empty, &out], "not an hwzip container"),
        (vec!["decompress", "/dev/zero", &out], "a device"),
        (vec!["decompress", &dir, &out], "directory"),
        (
            vec!["--max-input", "64", "compress", &good_in, &out],
            "64 bytes limit",
        ),
        (
            vec!["decompress", "--engine", "base-xor", &hz, &out],
            "base-xor",
        ),
    ] {
        cases.push(case("container", &args, needle));
    }

    // Output paths.
    let link = p("link.bin");
    std::os::unix::fs::symlink(p("in.bin"), &link).unwrap();
    let hard = p("hard.bin");
    std::fs::hard_link(p("in.bin"), &hard).unwrap();
    let missing_dir = s(&p("no/such/dir/out.hz"));
    for (args, needle) in [
        (
            vec!["compress".to_string(), good_in.clone(), good_in.clone()],
            "is the input",
        ),
        (
            vec!["compress".into(), good_in.clone(), s(&link)],
            "is the input",
        ),
        (
            vec!["compress".into(), good_in.clone(), s(&hard)],
            "is the input",
        ),
        (
            vec!["decompress".into(), hz.clone(), hz.clone()],
            "is the input",
        ),
        (
            vec!["compress".into(), good_in.clone(), missing_dir.clone()],
            "cannot write",
        ),
        (
            vec!["compress".into(), good_in.clone(), dir.clone()],
            "cannot write",
        ),
        (vec!["trace".into(), missing_dir.clone()], "cannot write"),
    ] {
        let a: Vec<&str> = args.iter().map(|s| s.as_str()).collect();
        cases.push(case("output", &a, needle));
    }

    // CLI values and option combinations.
    let long = "z".repeat(100_000);
    for (args, needle) in [
        (
            vec!["trace", "--shape", "1000000,1000000,1000000,1000000", &out],
            "elements",
        ),
        (vec!["trace", "--elems", "0", &out], "--elems 0"),
        (vec!["trace", "--elems", "99999999999999", &out], "--elems"),
        (
            vec![
                "trace",
                "--class",
                "uniform_random",
                "--shape",
                "1,2,3,4",
                &out,
            ],
            "relu only",
        ),
        (vec!["trace", "--sparsity", "0.5", &out], "--shape"),
        (
            vec!["trace", "--elems", "5", "--shape", "1,1,1,5", &out],
            "--shape",
        ),
        (
            vec![
                "eval",
                "--engine",
                "base-xor",
                "--class",
                "all",
                "--lines",
                "8589934592",
            ],
            "1 GiB",
        ),
        (vec!["eval", "--trace", &good_in, "--lines", "5"], "--class"),
        (vec!["eval", "--engine", "zvc"], "needs --trace FILE"),
        (
            vec![
                "eval", "--engine", "zvc", "--trace", &good_in, "--lambda", "3",
            ],
            "--lambda",
        ),
        (
            vec![
                "eval", "--engine", "base-xor", "--class", "all", "--lambda", "3",
            ],
            "--lambda",
        ),
        (vec!["cosim", "--lines", "0"], "--lines"),
        (vec!["flow", "--lines", "0"], "--lines"),
        (vec!["flow", "-j", "0"], "--jobs"),
        (
            vec!["flow", "--engine", "zvc", "--unit", "nope"],
            "no unit `nope`",
        ),
        (
            vec!["synth", "--unit", "nope", "--out", &dir],
            "no synthesizable unit `nope`",
        ),
        (
            vec!["synth", "--liberty", "nangate45x", "--out", &dir],
            "nangate45x",
        ),
        (
            vec!["synth", "--verilog", &good_in, "--top", "t", "--unit", "x"],
            "--unit",
        ),
        (
            vec![
                "synth",
                "--verilog",
                &good_in,
                "--top",
                "t",
                "--engine",
                "zvc",
            ],
            "--engine",
        ),
        (vec!["regress", "--shard", "3/2"], "shard"),
        // A long command checks every input before its first step.
        (
            vec!["regress", "--configs", "/nonexistent"],
            "/nonexistent does not exist",
        ),
        (vec!["regress", "--configs", &good_in], "is not a folder"),
        (vec!["regress", "--configs", &bad_sets], "bad.yaml"),
        (
            vec!["regress", "--configs", &good_sets, "--out", &good_in],
            "is not a folder",
        ),
        (
            vec!["regress", "--merge", &dir, "--out", &dir],
            "is not a regress directory (regress.json",
        ),
        (
            vec!["regress", "--merge", &dir, "--shard", "1/2"],
            "cannot be used with '--shard",
        ),
        (
            vec!["results", "--from", &dir, "--snapshot", &good_in],
            "is not a regress directory (regress.json",
        ),
        (
            vec!["results", "--snapshot", &good_in, "--out", &dir],
            "not a results snapshot",
        ),
        (
            vec!["sweep", "--grid", "nope=1,2", "--out", &dir],
            "grid point 0 (nope=1) is invalid",
        ),
        (
            vec!["sweep", "--grid", &long_grid, "--out", &dir],
            "at most 64 bytes",
        ),
        (
            vec!["sweep", "--grid", "lanes=8,8", "--out", &dir],
            "`8` is given twice",
        ),
        (
            vec!["sweep", "--grid", "lanes=3,,5", "--out", &dir],
            "value 2 is empty",
        ),
        (
            vec!["sweep", "--grid", "lanes=8", "--trace", "", "--out", &dir],
            "a value is required for '--trace",
        ),
        (
            vec![
                "sweep", "--grid", "lanes=8", "--trace", &npy_hdr, "--out", &dir,
            ],
            "header",
        ),
        (
            vec!["synth", "--clock-ns", "1e-30", "--out", &dir],
            "synth.clock_ns = 0.0000000000000000000000000000",
        ),
        (
            vec!["synth", "--clock-ns", "5000", "--out", &dir],
            "must be in [0.01, 1000] ns",
        ),
        (
            vec!["synth", "--liberty", &dir, "--out", &dir],
            "is a folder: give a .lib or .lib.gz file",
        ),
        (
            vec!["synth", "--liberty", "/dev/zero", "--out", &dir],
            "is a device: give a .lib or .lib.gz file",
        ),
        (
            vec!["cosim", "--lines", "18446744073709551615"],
            "--lines 18446744073709551615 must be in 1..=100000000",
        ),
        (
            vec!["flow", "--lines", "100000001", "--out", &dir],
            "must be in 1..=100000000",
        ),
        (
            vec!["cosim", "--resets", "1000000", "--lines", "10"],
            "--resets 1000000 is more than the 10 lines",
        ),
        (
            vec![
                "synth",
                "--gate-cosim",
                "18446744073709551615",
                "--out",
                &dir,
            ],
            "--gate-cosim",
        ),
        (
            vec!["synth", "--energy", "18446744073709551615", "--out", &dir],
            "--energy",
        ),
        (vec!["gen", "--engine", &long], "(100000 bytes)"),
        (
            vec!["cosim", "--unit", &long, "--lines", "1"],
            "(100000 bytes)",
        ),
        (vec!["--max-input", "0", "gen"], "--max-input"),
        (vec!["--max-input", "2T", "gen"], "--max-input"),
        (vec!["gen", "--bogus"], "--bogus"),
    ] {
        cases.push(case("cli", &args, needle));
    }

    let mut counts: std::collections::BTreeMap<&str, (usize, u128)> = Default::default();
    let before = std::fs::read(&good_in).unwrap();
    let mut failures = Vec::new();
    for c in &cases {
        let t0 = Instant::now();
        let o = Command::new(env!("CARGO_BIN_EXE_hwzip"))
            .args(&c.args)
            .current_dir(d.path())
            .output()
            .unwrap();
        let ms = t0.elapsed().as_millis();
        let err = String::from_utf8_lossy(&o.stderr);
        let shown: Vec<String> = c
            .args
            .iter()
            .map(|a| a.chars().take(60).collect())
            .collect();
        let problem = if o.status.code() != Some(2) {
            Some(format!("exit {:?}", o.status))
        } else if err.contains("panicked") {
            Some("panic".into())
        } else if err.trim_end().lines().count() != 1 {
            Some("not one line".into())
        } else if err.len() > 400 {
            Some(format!("{} bytes", err.len()))
        } else if !err.contains(c.needle) {
            Some(format!("`{}` missing", c.needle))
        } else if ms > 20_000 {
            Some(format!("{ms} ms"))
        } else if Path::new(&out).exists() {
            Some("left an output".into())
        } else {
            None
        };
        if let Some(pr) = problem {
            let e: String = err.chars().take(300).collect();
            failures.push(format!("{shown:?}: {pr}: {e}"));
            let _ = std::fs::remove_file(&out);
        }
        let e = counts.entry(c.class).or_default();
        e.0 += 1;
        e.1 = e.1.max(ms);
        assert!(!Path::new(&out).exists(), "{shown:?} left an output");
    }
    assert!(
        failures.is_empty(),
        "{} of {} cases failed:\n{}",
        failures.len(),
        cases.len(),
        failures.join("\n")
    );
    assert_eq!(std::fs::read(&good_in).unwrap(), before, "an input changed");
    let leftovers: Vec<PathBuf> = std::fs::read_dir(d.path())
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.to_string_lossy().contains("hwzip-tmp"))
        .collect();
    assert!(leftovers.is_empty(), "{leftovers:?}");
    eprintln!("| class | cases | outcome | slowest |\n|---|---:|---|---:|");
    for (k, (n, ms)) in &counts {
        eprintln!("| {k} | {n} | exit 2, one line, 0 panics | {ms} ms |");
    }
}
