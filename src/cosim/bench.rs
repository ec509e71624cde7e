//! "Rust-driven harness vs plain C++ Verilator loop" benchmark.
//!
//! Both loops do the same work per cycle: every input port except `clk_i`/`rst_ni` gets
//! xorshift64 random words (one 64-bit draw per port ≤ 64 bits, one draw per 32-bit word
//! otherwise), one clock cycle, and every output port is folded into a checksum.

use std::fs;
use std::path::Path;
use std::process::Command;
use std::time::Instant;

use super::build::{
    build, cache_root, clk_lines, compile_parallel, cpp_drive_random, cpp_sample, cxx_flags,
    entry_objects, hash_fields, run_logged, runtime_dir, runtime_objects, tools, unique_suffix,
    CompileJob, LINK_LIBS,
};
use super::{BuildSpec, CosimError, Model, PortDir};

const BENCH_TMPL: &str = include_str!("../../verif/bench_main.cpp.tmpl");

fn is_ctrl(name: &str) -> bool {
    name == "clk_i" || name == "rst_ni"
}

fn gen_bench_main(spec: &BuildSpec) -> String {
    let (lo, hi) = clk_lines(spec);
    let mut drive = Vec::new();
    let mut sample = Vec::new();
    for p in &spec.ports {
        match p.dir {
            PortDir::In if !is_ctrl(&p.name) => drive.push(cpp_drive_random(p)),
            PortDir::In => {}
            PortDir::Out => sample.push(cpp_sample(p)),
        }
    }
    let reset = if spec.ports.iter().any(|p| p.name == "rst_ni") && !lo.is_empty() {
        "    top->rst_ni = 0;\n    for (int i = 0; i < 2; ++i) { top->clk_i = 0; top->eval(); ctx->timeInc(5); top->clk_i = 1; top->eval(); ctx->timeInc(5); }\n    top->rst_ni = 1;\n"
    } else {
        ""
    };
    BENCH_TMPL
        .replace("{{TOP}}", &spec.top)
        .replace("{{RESET}}", reset)
        .replace("{{CLK_LOW}}", &lo.replacen("    ", "", 1))
        .replace("{{CLK_HIGH}}", &hi.replacen("    ", "", 1))
        .replace("{{DRIVE}}", &drive.join("\n"))
        .replace("{{SAMPLE}}", &sample.join("\n"))
}

/// Cycles per second of a plain C++ Verilator loop over `spec` (the reference for
/// [`rust_loop_bench`]). Builds `spec` (cached), then compiles and caches a benchmark binary
/// from `verif/bench_main.cpp.tmpl` next to the model objects and runs it for `cycles` cycles.
/// Only the loop is timed (not start-up or reset).
pub fn cpp_loop_bench(spec: &BuildSpec, cycles: u64) -> Result<f64, CosimError> {
    let lib = build(spec)?;
    let tools = tools()?;
    let dir = lib.dir();
    let main = gen_bench_main(spec);
    let key = hash_fields([main.as_bytes()]);
    let exe = dir.join(format!("bench-{}", &key[..12]));
    if !exe.exists() {
        let work = dir.join(format!("bench-{}.tmp-{}", &key[..12], unique_suffix()));
        fs::create_dir_all(&work).map_err(|e| CosimError::io("creating bench dir", e))?;
        let src = work.join("bench_main.cpp");
        fs::write(&src, &main).map_err(|e| CosimError::io("writing bench main", e))?;
        let obj_dir = dir.join("obj");
        let includes = vec![obj_dir, tools.include.clone(), tools.include.join("vltstd")];
        let flags = cxx_flags(spec.trace);
        compile_parallel(
            tools,
            &flags,
            &[CompileJob {
                src,
                obj: work.join("bench_main.o"),
                includes,
                extra: Vec::new(),
            }],
        )?;
        let out = work.join("bench");
        let mut cmd = Command::new(&tools.cxx);
        cmd.arg("-o").arg(&out).arg(work.join("bench_main.o"));
        cmd.args(entry_objects(dir)?);
        cmd.args(runtime_objects(
            &runtime_dir(&cache_root(), tools, spec.trace),
            spec.trace,
        ));
        cmd.args(LINK_LIBS);
        run_logged(cmd, "g++ (bench link)", &work.join("link.log"))?;
        // Atomic publish; a concurrent builder of the same binary may have won, which is fine.
        let _ = fs::rename(&out, &exe);
        let _ = fs::remove_dir_all(&work);
    }
    run_bench(&exe, cycles)
}

fn run_bench(exe: &Path, cycles: u64) -> Result<f64, CosimError> {
    let log = exe.with_extension("log");
    let mut cmd = Command::new(exe);
    cmd.arg(cycles.to_string());
    run_logged(cmd, "bench", &log)?;
    let out = fs::read_to_string(&log).map_err(|e| CosimError::io("reading bench output", e))?;
    let secs: f64 = out
        .split_whitespace()
        .find_map(|t| t.strip_prefix("seconds="))
        .and_then(|s| s.parse().ok())
        .ok_or_else(|| CosimError::Sim(format!("bench printed no timing: {out}")))?;
    Ok(cycles as f64 / secs.max(1e-9))
}

#[inline]
fn xorshift(s: &mut u64) -> u64 {
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    *s
}

/// Cycles per second of the same loop as [`cpp_loop_bench`] driven from Rust through the FFI
/// (`set_u64`/`set` per input, `tick`, `get_u64`/`get` per output). Resets the model first when
/// it has `rst_ni`; only the loop is timed.
pub fn rust_loop_bench(model: &mut Model, cycles: u64) -> f64 {
    let ports = model.library().ports().to_vec();
    let mut narrow_in = Vec::new();
    let mut wide_in = Vec::new();
    let mut narrow_out = Vec::new();
    let mut wide_out = Vec::new();
    for (i, p) in ports.iter().enumerate() {
        let id = model.port(&p.name).expect("port from the library");
        debug_assert_eq!(id.index(), i);
        match (p.dir, p.width <= 64) {
            (PortDir::In, _) if is_ctrl(&p.name) => {}
            (PortDir::In, true) => narrow_in.push(id),
            (PortDir::In, false) => wide_in.push((id, vec![0u32; p.words()])),
            (PortDir::Out, true) => narrow_out.push(id),
            (PortDir::Out, false) => wide_out.push((id, vec![0u32; p.words()])),
        }
    }
    if ports.iter().any(|p| p.name == "rst_ni") && ports.iter().any(|p| p.name == "clk_i") {
        model.reset(2).expect("reset");
    }
    let mut s: u64 = 0x9E37_79B9_7F4A_7C15;
    let mut acc: u64 = 0;
    let t0 = Instant::now();
    for _ in 0..cycles {
        for &id in &narrow_in {
            let v = xorshift(&mut s);
            model.set_u64(id, v);
        }
        for (id, buf) in &mut wide_in {
            for w in buf.iter_mut() {
                *w = xorshift(&mut s) as u32;
            }
            model.set(*id, buf).expect("width checked");
        }
        model.tick();
        for &id in &narrow_out {
            acc = (acc ^ model.get_u64(id)).wrapping_mul(0x100_0000_01B3);
        }
        for (id, buf) in &mut wide_out {
            model.get(*id, buf).expect("width checked");
            for &w in buf.iter() {
                acc = (acc ^ u64::from(w)).wrapping_mul(0x100_0000_01B3);
            }
        }
    }
    let secs = t0.elapsed().as_secs_f64();
    std::hint::black_box(acc);
    cycles as f64 / secs.max(1e-9)
}
