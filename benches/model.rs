//! Golden-model throughput: ZVC compression and decompression in GB/s (of uncompressed data)
//! on 64 MiB of ReLU-like data at 60% sparsity and on uniform random data.
//!
//! Run with `cargo bench --bench model` (plain `std::time`, no external harness).
//! Set `HWZIP_BENCH_MIB` to change the data size (default 64).

use hwzip::model::zvc::{self, ZvcParams};
use hwzip::trace::synthetic::{relu_tensor, uniform_density};
use hwzip::trace::Layout;
use std::hint::black_box;
use std::time::{Duration, Instant};

const ITERS: usize = 3;

/// Best-of-`ITERS` wall time of `f`.
fn best<T>(mut f: impl FnMut() -> T) -> Duration {
    (0..ITERS)
        .map(|_| {
            let t = Instant::now();
            black_box(f());
            t.elapsed()
        })
        .min()
        .unwrap_or_default()
}

fn main() {
    let mib: usize = std::env::var("HWZIP_BENCH_MIB")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(64);
    let n = mib * 1024 * 1024 / 4;
    let p = ZvcParams::default();
    // [n, c, h, w] with c·h·w = 64·128·128 = 1 Mi elements per image.
    let images = n.div_ceil(64 * 128 * 128).max(1);
    let t = Instant::now();
    let mut relu = relu_tensor([images, 64, 128, 128], 0.6, Layout::Nchw, 1);
    relu.truncate(n);
    let gen_relu = t.elapsed();
    let datasets: Vec<(&str, Vec<u32>)> = vec![
        ("relu, 60% sparse", relu),
        ("uniform, 50% density", uniform_density(n, 0.5, 32, 2)),
        ("uniform random (dense)", uniform_density(n, 1.0, 32, 3)),
    ];
    println!(
        "ZVC golden model, {mib} MiB per data set, window {} x {}-bit, best of {ITERS} (ReLU generation took {:.1} s)\n",
        p.window,
        p.word_bits,
        gen_relu.as_secs_f64()
    );
    println!("| Data | Sparsity | Ratio | Compress GB/s | Decompress GB/s |");
    println!("|---|---:|---:|---:|---:|");
    for (name, x) in &datasets {
        let bytes = (x.len() * 4) as f64;
        let stream = zvc::compress(&p, x).expect("valid input");
        let tc = best(|| zvc::compress(&p, x).expect("valid input"));
        let td = best(|| zvc::decompress(&p, &stream, x.len()).expect("valid stream"));
        assert_eq!(
            zvc::decompress(&p, &stream, x.len()).expect("valid stream"),
            *x
        );
        let sparsity = x.iter().filter(|&&v| v == 0).count() as f64 / x.len() as f64;
        println!(
            "| {name} | {:.1}% | {:.2}x | {:.2} | {:.2} |",
            100.0 * sparsity,
            bytes / stream.len() as f64,
            bytes / tc.as_secs_f64() / 1e9,
            bytes / td.as_secs_f64() / 1e9
        );
    }
}
