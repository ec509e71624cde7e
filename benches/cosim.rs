//! Co-simulation throughput on the ZVC RTL (`cargo bench --bench cosim`):
//! * plain C++ Verilator loop (random inputs, clock, outputs folded) — the reference;
//! * the same loop driven from Rust through the FFI (goal ≥ 0.8× the C++ loop);
//! * the full scoreboard: Rust stimulus + golden model + compare + random stalls (the
//!   N-channel harness with one driver and one monitor; goal >= 0.5x the C++ loop).
//!
//! Every figure is the best of three runs.
//!
//! `HWZIP_BENCH_CYCLES` sets the loop length (default 3,000,000).

use hwzip::cosim::run::RunConfig;
use hwzip::cosim::vdut::{build_spec, VerilatorDut};
use hwzip::cosim::zvc::{run, StimConfig, Unit};
use hwzip::cosim::{build, cpp_loop_bench, rust_loop_bench, Model};
use hwzip::rtl::zvc::{compressor, decompressor, ZvcRtlParams};

fn main() {
    // Benchmarks measure the models as the long runs build them (`-O2`); `HWZIP_CXX_OPT`
    // chooses another level.
    if std::env::var_os("HWZIP_CXX_OPT").is_none() {
        hwzip::cosim::set_opt_level(2);
    }
    let cycles: u64 = std::env::var("HWZIP_BENCH_CYCLES")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(3_000_000);
    let p = ZvcRtlParams::default();
    println!(
        "| unit | C++ loop Mc/s | Rust loop Mc/s | Rust/C++ | scoreboard Mc/s | scoreboard/C++ |"
    );
    println!("|---|---:|---:|---:|---:|---:|");
    for (name, unit, top) in [
        (
            "compressor",
            Unit::Compressor,
            compressor(&p).expect("generator"),
        ),
        (
            "decompressor",
            Unit::Decompressor,
            decompressor(&p).expect("generator"),
        ),
    ] {
        let spec = build_spec(&top, false).expect("spec");
        let lib = build(&spec).expect("verilator build");
        // Warm-up runs, then best of three for each loop.
        let _ = cpp_loop_bench(&spec, cycles / 10);
        let cpp = (0..3)
            .map(|_| cpp_loop_bench(&spec, cycles).expect("c++ bench"))
            .fold(0.0, f64::max);
        let mut model = Model::new(&lib).expect("model");
        let _ = rust_loop_bench(&mut model, cycles / 10);
        let rust = (0..3)
            .map(|_| rust_loop_bench(&mut model, cycles))
            .fold(0.0, f64::max);
        let mut dut = VerilatorDut::from_model(Model::new(&lib).expect("model")).expect("dut");
        let board = (0..3)
            .map(|_| {
                let st = run(
                    &mut dut,
                    &p,
                    unit,
                    &StimConfig {
                        run: RunConfig {
                            lines: cycles / 5,
                            ..RunConfig::default()
                        },
                        ..StimConfig::default()
                    },
                )
                .expect("scoreboard");
                assert!(st.first_mismatch.is_none());
                st.cycles_per_second()
            })
            .fold(0.0, f64::max);
        println!(
            "| {} | {:.2} | {:.2} | {:.2} | {:.2} | {:.2} |",
            name,
            cpp / 1e6,
            rust / 1e6,
            rust / cpp,
            board / 1e6,
            board / cpp
        );
    }
}
