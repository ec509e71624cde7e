//! Line-codec throughput, MB/s of uncompressed data: the size-only path
//! (`LineCodec::size_bits`) and the bit-exact path (`LineCodec::compress`) of BDI, FPC and
//! C-Pack(+Z), and ZVC's size count and compressor, on real files.
//!
//! Data: a shared library (`$HWZIP_BENCH_FILE`, else the first of libc / libstdc++ found,
//! else this binary) and a float32 array (a smooth 2-D field with noise, the kind of
//! activation/simulation data the papers use). Run with `cargo bench --bench codec`.

use hwzip::model::codec::LineCodec;
use hwzip::model::zvc::{self, ZvcParams};
use hwzip::model::{bdi::BdiParams, cpack::CpackParams, fpc::FpcMode, fpc::FpcParams};
use std::hint::black_box;
use std::time::Instant;

const MIB: usize = 8;

fn shared_library() -> (String, Vec<u8>) {
    let mut cands: Vec<String> = std::env::var("HWZIP_BENCH_FILE").into_iter().collect();
    cands.extend(
        [
            "/lib/x86_64-linux-gnu/libc.so.6",
            "/usr/lib/x86_64-linux-gnu/libstdc++.so.6",
        ]
        .map(String::from),
    );
    for c in cands {
        if let Ok(b) = std::fs::read(&c) {
            return (c, b);
        }
    }
    let exe = std::env::current_exe().expect("bench binary");
    (
        exe.display().to_string(),
        std::fs::read(&exe).expect("read bench binary"),
    )
}

fn float_field(bytes: usize) -> Vec<u8> {
    let n = bytes / 4;
    let w = 1024;
    let mut s = 0x2545_f491_4f6c_dd1du64;
    (0..n)
        .flat_map(|i| {
            let (x, y) = ((i % w) as f32 / w as f32, (i / w) as f32 / w as f32);
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            let noise = (s >> 40) as f32 / (1u64 << 24) as f32 * 1e-3;
            let v = (6.0 * x).sin() * (4.0 * y).cos() + noise;
            v.to_le_bytes()
        })
        .collect()
}

/// Repeats `data` up to `MIB` MiB so every codec sees the same bytes.
fn sized(data: &[u8]) -> Vec<u8> {
    data.iter().copied().cycle().take(MIB << 20).collect()
}

/// Best of three wall times of `f`, as MB/s of `bytes`.
fn mbps(bytes: usize, mut f: impl FnMut() -> usize) -> f64 {
    let best = (0..3)
        .map(|_| {
            let t = Instant::now();
            black_box(f());
            t.elapsed().as_secs_f64()
        })
        .fold(f64::INFINITY, f64::min);
    bytes as f64 / best / 1e6
}

fn main() {
    let (lib_name, lib) = shared_library();
    let sets = [
        (format!("shared library ({lib_name})"), sized(&lib)),
        ("float32 field".to_string(), float_field(MIB << 20)),
    ];
    let codecs: Vec<Box<dyn LineCodec>> = vec![
        Box::new(BdiParams::default()),
        Box::new(FpcParams {
            mode: FpcMode::Original,
            ..FpcParams::default()
        }),
        Box::new(CpackParams::default()),
    ];
    println!("Line codecs, 64 B lines, {MIB} MiB per data set, best of 3, one core\n");
    println!("| Data | Codec | Ratio | Size-only MB/s | Bit-exact MB/s |");
    println!("|---|---|---:|---:|---:|");
    for (name, data) in &sets {
        for c in &codecs {
            let lines = || data.chunks_exact(c.line_bytes());
            let bits: usize = lines().map(|l| c.size_bits(l).expect("size")).sum();
            let fast = mbps(data.len(), || {
                lines().map(|l| c.size_bits(l).unwrap_or(0)).sum()
            });
            let exact = mbps(data.len(), || {
                lines().map(|l| c.compress(l).map_or(0, |c| c.nbits)).sum()
            });
            println!(
                "| {name} | {} | {:.2}x | {fast:.0} | {exact:.0} |",
                c.name(),
                (data.len() * 8) as f64 / bits as f64
            );
        }
        let p = ZvcParams::default();
        let elems = hwzip::model::split_le(data, 4).expect("whole words");
        let size = zvc::compressed_size(&p, &elems);
        let fast = mbps(data.len(), || zvc::compressed_size(&p, &elems));
        let exact = mbps(data.len(), || {
            zvc::compress(&p, &elems).map_or(0, |s| s.len())
        });
        println!(
            "| {name} | zvc | {:.2}x | {fast:.0} | {exact:.0} |",
            data.len() as f64 / size as f64
        );
    }
}
