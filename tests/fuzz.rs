//! Fuzzing on stable Rust: a mutational fuzzer (bit flips, interesting bytes, inserts,
//! deletes, duplications, splices, truncations) over a seed corpus, with a crude feedback
//! (an input whose error message is new joins the pool), for every parser and decoder that
//! takes bytes from a user: the config parser, each trace reader (YAML description, raw,
//! `.npy`, gzip), the container reader, and each model's decoder.
//!
//! Why not cargo-fuzz: it needs a nightly toolchain and libFuzzer on the CI machine, which
//! installs stable Rust only; this harness runs in the ordinary test suite there.
//!
//! Each target first replays `tests/fuzz_corpus/<target>/*` (inputs that once found a bug,
//! kept as regression tests) and then mutates for `HWZIP_FUZZ_SECS` seconds (default 1.5;
//! `HWZIP_FUZZ_SEED` seeds the mutations). A panic saves the input to
//! `<target dir>/fuzz-crashes/` and fails. A counting global allocator checks that no single
//! allocation exceeds 256 MiB for inputs of at most 64 KiB (no unbounded allocation).

use hwzip::model;
use rand::{Rng, SeedableRng};
use std::alloc::{GlobalAlloc, Layout, System};
use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

struct Counting;
static MAX_ALLOC: AtomicUsize = AtomicUsize::new(0);

// SAFETY: forwards to the system allocator; only records the largest request size.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, l: Layout) -> *mut u8 {
        MAX_ALLOC.fetch_max(l.size(), Ordering::Relaxed);
        unsafe { System.alloc(l) }
    }
    unsafe fn dealloc(&self, p: *mut u8, l: Layout) {
        unsafe { System.dealloc(p, l) }
    }
    unsafe fn realloc(&self, p: *mut u8, l: Layout, n: usize) -> *mut u8 {
        MAX_ALLOC.fetch_max(n, Ordering::Relaxed);
        unsafe { System.realloc(p, l, n) }
    }
}

#[global_allocator]
static A: Counting = Counting;

const MAX_INPUT: usize = 64 << 10;
const MAX_ALLOC_OK: usize = 256 << 20;

/// Runs one input; returns a short description of the outcome (the feedback).
trait RunFn: Fn(&[u8]) -> String + std::panic::RefUnwindSafe {}
impl<F: Fn(&[u8]) -> String + std::panic::RefUnwindSafe> RunFn for F {}

fn outcome<T, E: std::fmt::Display>(r: Result<T, E>) -> String {
    match r {
        Ok(_) => "ok".into(),
        // Digits vary with the input; without them a message names a code path.
        Err(e) => e
            .to_string()
            .chars()
            .filter(|c| !c.is_ascii_digit())
            .take(60)
            .collect(),
    }
}

fn mutate(rng: &mut impl Rng, pool: &[Vec<u8>], base: &[u8]) -> Vec<u8> {
    let mut v = base.to_vec();
    for _ in 0..rng.gen_range(1..=8) {
        let len = v.len();
        match rng.gen_range(0..9) {
            0 if len > 0 => {
                let i = rng.gen_range(0..len);
                v[i] ^= 1 << rng.gen_range(0..8);
            }
            1 if len > 0 => {
                let i = rng.gen_range(0..len);
                v[i] =
                    [0, 1, 0x7f, 0x80, 0xff, b'[', b'{', b':', b'\n', b'-'][rng.gen_range(0..10)];
            }
            2 => {
                let i = rng.gen_range(0..=len);
                let n = rng.gen_range(1..=16);
                let ins: Vec<u8> = (0..n).map(|_| rng.gen()).collect();
                v.splice(i..i, ins);
            }
            3 if len > 1 => {
                let i = rng.gen_range(0..len);
                let j = rng.gen_range(i..=len.min(i + 64));
                v.drain(i..j);
            }
            4 if len > 1 => {
                let i = rng.gen_range(0..len);
                let j = rng.gen_range(i..=len.min(i + 256));
                let dup = v[i..j].to_vec();
                let k = rng.gen_range(0..=v.len());
                v.splice(k..k, dup);
            }
            5 if !pool.is_empty() => {
                let o = &pool[rng.gen_range(0..pool.len())];
                let cut = rng.gen_range(0..=v.len());
                let from = rng.gen_range(0..=o.len());
                v.truncate(cut);
                v.extend_from_slice(&o[from..]);
            }
            6 if len > 0 => v.truncate(rng.gen_range(0..len)),
            7 if len >= 4 => {
                // A little-endian length field set to an extreme.
                let i = rng.gen_range(0..len - 3);
                let x: u32 = [0, 1, u32::MAX, 0x8000_0000, 0xffff][rng.gen_range(0..5)];
                v[i..i + 4].copy_from_slice(&x.to_le_bytes());
            }
            _ => {
                let n = rng.gen_range(0..64);
                v = (0..n).map(|_| rng.gen()).collect();
            }
        }
    }
    v.truncate(MAX_INPUT);
    v
}

fn crash_dir() -> PathBuf {
    let t =
        std::env::var_os("CARGO_TARGET_DIR").map_or_else(|| PathBuf::from("target"), PathBuf::from);
    t.join("fuzz-crashes")
}

fn try_one(name: &str, run: &impl RunFn, input: &[u8]) -> String {
    match std::panic::catch_unwind(|| run(input)) {
        Ok(o) => o,
        Err(_) => {
            let d = crash_dir();
            let _ = std::fs::create_dir_all(&d);
            let h = input.iter().fold(0xcbf29ce484222325u64, |h, &b| {
                (h ^ b as u64).wrapping_mul(0x100000001b3)
            });
            let p = d.join(format!("{name}-{h:016x}.bin"));
            let _ = std::fs::write(&p, input);
            if name == "planted" {
                let _ = std::fs::remove_file(&p);
            }
            panic!("fuzz target {name} panicked; input saved to {} (add it to tests/fuzz_corpus/{name}/)", p.display());
        }
    }
}

fn fuzz(name: &str, seeds: Vec<Vec<u8>>, run: impl RunFn) {
    let corpus_dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fuzz_corpus")
        .join(name);
    let mut pool = seeds;
    let mut replayed = 0;
    if let Ok(rd) = std::fs::read_dir(&corpus_dir) {
        let mut files: Vec<PathBuf> = rd.flatten().map(|e| e.path()).collect();
        files.sort();
        for f in files {
            let data = std::fs::read(&f).unwrap();
            try_one(name, &run, &data);
            replayed += 1;
            pool.push(data);
        }
    }
    for s in pool.clone() {
        try_one(name, &run, &s);
    }
    let secs: f64 = std::env::var("HWZIP_FUZZ_SECS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(1.5);
    let seed: u64 = std::env::var("HWZIP_FUZZ_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(1);
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(
        seed ^ name.len() as u64 ^ (name.as_bytes()[0] as u64) << 8,
    );
    let mut seen: HashSet<String> = HashSet::new();
    let base_len = pool.len();
    let t0 = Instant::now();
    let mut execs = 0u64;
    while t0.elapsed() < Duration::from_secs_f64(secs) {
        for _ in 0..64 {
            let base = &pool[rng.gen_range(0..pool.len())];
            let input = mutate(&mut rng, &pool, base);
            let o = try_one(name, &run, &input);
            execs += 1;
            if seen.insert(o) && pool.len() < 4096 {
                pool.push(input);
            }
        }
    }
    if std::env::var_os("HWZIP_FUZZ_SAVE").is_some() {
        // Keep up to 32 inputs with new outcomes (small ones first) as the replayed corpus.
        let mut found: Vec<&Vec<u8>> = pool[base_len..]
            .iter()
            .filter(|v| v.len() <= 4096)
            .collect();
        found.sort_by_key(|v| v.len());
        std::fs::create_dir_all(&corpus_dir).unwrap();
        for (i, v) in found
            .iter()
            .step_by((found.len() / 32).max(1))
            .take(32)
            .enumerate()
        {
            std::fs::write(corpus_dir.join(format!("found-{seed}-{i:02}")), v).unwrap();
        }
    }
    let max = MAX_ALLOC.load(Ordering::Relaxed);
    eprintln!(
        "fuzz {name}: {execs} executions in {:.1} s ({:.0}/s), {replayed} corpus files replayed, \
         {} outcomes, pool {}, 0 panics, largest allocation so far {} KiB",
        t0.elapsed().as_secs_f64(),
        execs as f64 / t0.elapsed().as_secs_f64(),
        seen.len(),
        pool.len(),
        max >> 10
    );
    assert!(
        max <= MAX_ALLOC_OK,
        "an allocation of {max} bytes (> 256 MiB)"
    );
}

fn lines() -> Vec<Vec<u8>> {
    let mut v = vec![vec![0u8; 64], (0..64).collect(), vec![0xff; 64]];
    v.push(
        (0..16u32)
            .flat_map(|i| (1000 + i * 3).to_le_bytes())
            .collect(),
    );
    v.push(
        (0..16u32)
            .flat_map(|i| (i as f32 * 0.5).to_le_bytes())
            .collect(),
    );
    v
}

#[test]
#[should_panic(expected = "panicked; input saved")]
fn the_harness_finds_a_planted_bug() {
    // Only a mutation reaches two 0xff bytes in a row; the harness must find and report it.
    fuzz("planted", vec![vec![0xff, 0x00, 0x01]], |b| {
        assert!(!b.windows(2).any(|w| w == [0xff, 0xff]), "planted bug");
        "ok".into()
    });
}

// ---- config and traces ------------------------------------------------------------------

#[test]
fn fuzz_config() {
    let mut seeds: Vec<Vec<u8>> = vec![
        b"zvc:\n  lanes: 8\n".to_vec(),
        b"synth: {clock_ns: 2.5, libraries: [osu018]}\n".to_vec(),
    ];
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("verif/configs");
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        seeds.push(std::fs::read(e.path()).unwrap());
    }
    fuzz("config", seeds, |b| {
        outcome(hwzip::config::Config::from_yaml(&String::from_utf8_lossy(
            b,
        )))
    });
}

thread_local! {
    static DIR: tempfile::TempDir = tempfile::tempdir().unwrap();
}

fn with_file(name: &str, data: &[u8], f: impl FnOnce(&Path) -> String) -> String {
    DIR.with(|d| {
        let p = d.path().join(name);
        std::fs::write(&p, data).unwrap();
        f(&p)
    })
}

#[test]
fn fuzz_trace_description() {
    let seeds = vec![
        b"file: data.bin\nword_bits: 16\nlayout: nchw\nshape: [1, 2, 2, 2]\n".to_vec(),
        b"file: data.bin\n".to_vec(),
        b"{file: data.bin, layout: flat, shape: [4, 4]}".to_vec(),
    ];
    fuzz("trace_description", seeds, |b| {
        DIR.with(|d| std::fs::write(d.path().join("data.bin"), [7u8; 32]).unwrap());
        with_file("t.yaml", b, |p| {
            outcome(hwzip::trace::file::load_trace(p, 32))
        })
    });
}

#[test]
fn fuzz_trace_raw_and_bytes() {
    // The first byte picks the reader: raw at 8/16/32 bits, or bytes as .bin/.npy/.gz.
    let gz = {
        use std::io::Write;
        let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        e.write_all(&[1, 2, 3, 4, 0, 0, 0, 0]).unwrap();
        e.finish().unwrap()
    };
    let mut g = vec![5u8];
    g.extend(&gz);
    let mut n = vec![4u8];
    n.extend(hwzip::trace::npy::encode(
        "<f4",
        &[2],
        &[0, 0, 128, 63, 0, 0, 0, 64],
    ));
    fuzz(
        "trace_raw_and_bytes",
        vec![vec![0, 1, 2, 3, 4], g, n],
        |b| {
            let Some((&sel, data)) = b.split_first() else {
                return "empty".into();
            };
            match sel % 6 {
                0..=2 => with_file("t.bin", data, |p| {
                    outcome(hwzip::trace::file::load_trace(
                        p,
                        [8, 16, 32][sel as usize % 3],
                    ))
                }),
                3 => with_file("t.bin", data, |p| {
                    outcome(hwzip::trace::file::load_bytes(p))
                }),
                4 => with_file("t.npy", data, |p| {
                    outcome(hwzip::trace::file::load_bytes(p))
                }),
                _ => with_file("t.gz", data, |p| outcome(hwzip::trace::file::load_bytes(p))),
            }
        },
    );
}

#[test]
fn fuzz_npy_header() {
    let seeds = vec![
        hwzip::trace::npy::encode("<f4", &[2, 3], &[0; 24]),
        hwzip::trace::npy::encode("|u1", &[5], &[1; 5]),
        hwzip::trace::npy::encode("<i8", &[], &[0; 8]),
    ];
    fuzz("npy", seeds, |b| outcome(hwzip::trace::npy::parse(b)));
}

#[test]
fn fuzz_gzip() {
    use std::io::Write;
    let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
    e.write_all(&vec![0u8; 100_000]).unwrap();
    let z = e.finish().unwrap();
    let mut two = z.clone();
    two.extend(&z);
    fuzz("gzip", vec![z, two], |b| {
        outcome(hwzip::files::input::gunzip(
            b,
            hwzip::files::input::Purpose::Trace,
        ))
    });
}

// ---- container and decoders -------------------------------------------------------------

#[test]
fn fuzz_container() {
    let p = model::zvc::ZvcParams::default();
    let seeds = vec![
        model::container::compress_file(&p, &[0u8; 300]).unwrap(),
        model::container::compress_file(&p, &(0..=255).collect::<Vec<u8>>()).unwrap(),
        model::container::compress_file(
            &model::zvc::ZvcParams {
                word_bits: 8,
                window: 64,
            },
            b"hello, world",
        )
        .unwrap(),
    ];
    fuzz("container", seeds, |b| {
        outcome(model::container::decompress_file(b))
    });
}

#[test]
fn fuzz_zvc_decompress() {
    // Bytes 0-1: element count; byte 2: parameters; the rest: the stream.
    let p = model::zvc::ZvcParams::default();
    let elems: Vec<u32> = (0..100)
        .map(|i| if i % 3 == 0 { 0 } else { i * 77 })
        .collect();
    let mut s = vec![100u8, 0, 0];
    s.extend(model::zvc::compress(&p, &elems).unwrap());
    fuzz("zvc", vec![s], |b| {
        if b.len() < 3 {
            return "short".into();
        }
        let n = u16::from_le_bytes([b[0], b[1]]) as usize;
        let p = model::zvc::ZvcParams {
            word_bits: [32, 16, 8, 32][b[2] as usize % 4],
            window: [32, 64, 256, 8][(b[2] as usize >> 2) % 4],
        };
        outcome(model::zvc::decompress(&p, &b[3..], n))
    });
}

fn codec_seeds(p: &model::adaptive::AdaptiveParams, alg: model::adaptive::Alg) -> Vec<Vec<u8>> {
    let c = p.codec(alg).unwrap();
    lines()
        .iter()
        .map(|l| c.compress(l).unwrap().bits)
        .collect()
}

fn fuzz_codec(name: &str, alg: model::adaptive::Alg) {
    let p = model::adaptive::AdaptiveParams::default();
    fuzz(name, codec_seeds(&p, alg), move |b| codec_run(alg, b));
}

fn codec_run(alg: model::adaptive::Alg, b: &[u8]) -> String {
    let p = model::adaptive::AdaptiveParams::default();
    let c = p.codec(alg).unwrap();
    // Both entry points: a bounded bit string and a self-delimiting prefix.
    let whole = outcome(c.decompress(b, b.len() * 8));
    let prefix = outcome(c.decompress_prefix(b));
    if let Some(&last) = b.last() {
        let _ = c.decompress(b, (b.len() * 8).saturating_sub(last as usize % 8));
    }
    format!("{whole}|{prefix}")
}

#[test]
fn fuzz_bdi() {
    fuzz_codec("bdi", model::adaptive::Alg::Bdi);
}

#[test]
fn fuzz_fpc() {
    fuzz_codec("fpc", model::adaptive::Alg::Fpc);
}

#[test]
fn fuzz_cpack() {
    fuzz_codec("cpack", model::adaptive::Alg::Cpack);
}

/// BPC at the symbol widths a 128 B block takes (self-delimiting and bounded entry points).
#[test]
fn fuzz_bpc() {
    use model::codec::LineCodec;
    let codecs = [16, 32, 64].map(model::bpc::BpcParams::with_sym_bits);
    let mut seeds = Vec::new();
    for l in lines() {
        let block = [l.clone(), l].concat(); // 128 B
        for c in &codecs {
            seeds.push(c.compress(&block).unwrap().bits);
        }
    }
    fuzz("bpc", seeds, move |b| {
        let mut out = String::new();
        for c in &codecs {
            out += &outcome(c.decompress(b, b.len() * 8));
            out += &outcome(c.decompress_prefix(b));
        }
        out
    });
}

#[test]
fn fuzz_link_messages() {
    let p = model::adaptive::AdaptiveParams::default();
    let mut seeds = Vec::new();
    for (i, l) in lines().iter().enumerate() {
        let alg = model::adaptive::Alg::ALL[1 + i % 3];
        let payload = p.codec(alg).unwrap().compress(l).unwrap().bits;
        let h = model::adaptive::Header {
            kind: Some(model::adaptive::MsgKind::WriteReq),
            id: i as u16,
            addr: 0x1000 * i as u64,
            length: 64,
            comp_alg: Some(alg),
        };
        seeds.push(model::adaptive::encode_message(&h, &payload).unwrap());
    }
    fuzz("link", seeds, |b| {
        let p = model::adaptive::AdaptiveParams::default();
        outcome(model::adaptive::decode_message(&p, b))
    });
}

#[test]
fn fuzz_base_xor_decode() {
    // Byte 0 picks the parameter set; the rest is one transaction.
    let seeds = vec![[0u8].iter().chain([3u8; 32].iter()).copied().collect()];
    fuzz("base_xor", seeds, |b| {
        let Some((&sel, data)) = b.split_first() else {
            return "empty".into();
        };
        let p = model::base_xor::BaseXorParams {
            t_bytes: [16, 32, 64][sel as usize % 3],
            ..Default::default()
        };
        outcome(model::base_xor::decode(&p, data))
    });
}
