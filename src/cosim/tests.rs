//! Co-simulation layer tests on hand-written Verilog fixtures.

use super::build::tool_output;
use super::*;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::fs;
use std::time::{Instant, SystemTime};
use PortDir::{In, Out};

const ADD8_V: &str = r"
module add8 (
  input  wire       clk_i,
  input  wire       rst_ni,
  input  wire [7:0] a_i,
  input  wire [7:0] b_i,
  output reg  [7:0] s_o,
  output reg        c_o
);
  always @(posedge clk_i) begin
    if (!rst_ni) {c_o, s_o} <= 9'd0;
    else         {c_o, s_o} <= {1'b0, a_i} + {1'b0, b_i};
  end
endmodule
";

/// 100-bit and 1024-bit ports: XOR, 100-bit add (carry across words, top partial word),
/// comparison (sensitive to garbage above bit 99), rotate of a 1024-bit bus, a 40-bit port
/// (two-word path) and a combinational 100-bit output.
const WIDE_V: &str = r"
module wide (
  input  wire          clk_i,
  input  wire          rst_ni,
  input  wire [99:0]   a_i,
  input  wire [99:0]   b_i,
  input  wire [1023:0] x_i,
  input  wire [1023:0] y_i,
  input  wire [39:0]   n_i,
  output reg  [99:0]   xor_o,
  output reg  [99:0]   sum_o,
  output reg           gt_o,
  output reg  [1023:0] rot_o,
  output reg  [39:0]   n_o,
  output wire [99:0]   nota_o
);
  assign nota_o = ~a_i;
  always @(posedge clk_i) begin
    if (!rst_ni) begin
      xor_o <= '0; sum_o <= '0; gt_o <= 1'b0; rot_o <= '0; n_o <= '0;
    end else begin
      xor_o <= a_i ^ b_i;
      sum_o <= a_i + b_i;
      gt_o  <= a_i > b_i;
      rot_o <= {x_i[1018:0], x_i[1023:1019]} ^ y_i;
      n_o   <= n_i + 40'd1;
    end
  end
endmodule
";

const COMB_V: &str = r"
module comb (input wire [7:0] a_i, output wire [7:0] y_o);
  assign y_o = ~a_i;
endmodule
";

const FIN_V: &str = r#"
module fin (input wire clk_i, input wire rst_ni, input wire [7:0] a_i, output reg [7:0] q_o);
  always @(posedge clk_i) begin
    q_o <= a_i;
    if (rst_ni && a_i == 8'd1) $finish;
    if (rst_ni && a_i == 8'd2) $fatal(1, "boom at a_i=2");
  end
endmodule
"#;

fn p(name: &str, dir: PortDir, width: u32) -> PortSpec {
    PortSpec::new(name, dir, width)
}

/// A build of module `top` (the file `<top>.v` holding `src`) with `ports` (name,
/// direction, width) exposed: no trace, no random X.
fn spec(top: &str, src: &str, ports: &[(&str, PortDir, u32)]) -> BuildSpec {
    BuildSpec {
        top: top.into(),
        sources: vec![(format!("{top}.v"), src.into())],
        ports: ports.iter().map(|&(n, d, w)| p(n, d, w)).collect(),
        trace: false,
        x_random: false,
    }
}

/// [`spec`] of a clocked module: `clk_i` and `rst_ni` exposed ahead of `ports`.
fn clocked(top: &str, src: &str, ports: &[(&str, PortDir, u32)]) -> BuildSpec {
    let clock = [("clk_i", In, 1), ("rst_ni", In, 1)];
    spec(top, src, &[&clock[..], ports].concat())
}

fn add8_spec(trace: bool) -> BuildSpec {
    BuildSpec {
        trace,
        ..clocked(
            "add8",
            ADD8_V,
            &[
                ("a_i", In, 8),
                ("b_i", In, 8),
                ("s_o", Out, 8),
                ("c_o", Out, 1),
            ],
        )
    }
}

fn wide_spec() -> BuildSpec {
    clocked(
        "wide",
        WIDE_V,
        &[
            ("a_i", In, 100),
            ("b_i", In, 100),
            ("x_i", In, 1024),
            ("y_i", In, 1024),
            ("n_i", In, 40),
            ("xor_o", Out, 100),
            ("sum_o", Out, 100),
            ("gt_o", Out, 1),
            ("rot_o", Out, 1024),
            ("n_o", Out, 40),
            ("nota_o", Out, 100),
        ],
    )
}

fn report(what: &str, lib: &Library) {
    eprintln!(
        "[cosim] {what}: cached={} build() call {:.3}s, recorded compile {:?}",
        lib.was_cached(),
        lib.build_call_time().as_secs_f64(),
        lib.compile_time().map(|d| d.as_secs_f64())
    );
}

#[test]
fn add8_matches_rust_over_100k_cycles() {
    let lib = build(&add8_spec(false)).unwrap();
    report("add8", &lib);
    let mut m = Model::new(&lib).unwrap();
    let (a, b, s, c) = (
        m.port("a_i").unwrap(),
        m.port("b_i").unwrap(),
        m.port("s_o").unwrap(),
        m.port("c_o").unwrap(),
    );
    // Reset clears the registers even with inputs driven.
    m.set_u64(a, 200);
    m.set_u64(b, 100);
    m.reset(2).unwrap();
    assert_eq!((m.get_u64(s), m.get_u64(c)), (0, 0));
    assert_eq!(m.cycle(), 2);
    let mut rng = ChaCha8Rng::seed_from_u64(1);
    for i in 0..100_000u64 {
        let (x, y): (u8, u8) = (rng.gen(), rng.gen());
        m.set_u64(a, u64::from(x));
        m.set_u64(b, u64::from(y));
        m.tick();
        let sum = u16::from(x) + u16::from(y);
        assert_eq!(m.get_u64(s), u64::from(sum & 0xff), "cycle {i}");
        assert_eq!(m.get_u64(c), u64::from(sum >> 8), "cycle {i}");
    }
    assert_eq!(m.cycle(), 100_002);
    // Bits above the port width are ignored (Verilog truncation).
    m.set_u64(a, 0xF01);
    m.set_u64(b, 0x1);
    m.tick();
    assert_eq!(m.get_u64(s), 2);
    assert!(!m.finished());
}

/// Words of a `width`-bit value with the top partial word masked.
fn rand_words(rng: &mut ChaCha8Rng, width: u32) -> Vec<u32> {
    let n = width.div_ceil(32) as usize;
    let mut v: Vec<u32> = (0..n).map(|_| rng.gen()).collect();
    if !width.is_multiple_of(32) {
        v[n - 1] &= (1u32 << (width % 32)) - 1;
    }
    v
}

fn mask_words(v: &mut [u32], width: u32) {
    if !width.is_multiple_of(32) {
        let n = v.len();
        v[n - 1] &= (1u32 << (width % 32)) - 1;
    }
}

fn add_words(a: &[u32], b: &[u32], width: u32) -> Vec<u32> {
    let mut carry = 0u64;
    let mut out: Vec<u32> = a
        .iter()
        .zip(b)
        .map(|(&x, &y)| {
            let s = u64::from(x) + u64::from(y) + carry;
            carry = s >> 32;
            s as u32
        })
        .collect();
    mask_words(&mut out, width);
    out
}

fn gt_words(a: &[u32], b: &[u32]) -> bool {
    a.iter().rev().cmp(b.iter().rev()) == std::cmp::Ordering::Greater
}

fn bit(v: &[u32], i: usize) -> u32 {
    (v[i / 32] >> (i % 32)) & 1
}

/// `{x[1018:0], x[1023:1019]}`: rotate left by 5.
fn rotl5_1024(x: &[u32]) -> Vec<u32> {
    let mut out = vec![0u32; 32];
    for i in 0..1024 {
        let src = (i + 1024 - 5) % 1024;
        out[i / 32] |= bit(x, src) << (i % 32);
    }
    out
}

#[test]
fn wide_ports_multiword_mapping() {
    let spec = wide_spec();
    let lib = build(&spec).unwrap();
    report("wide", &lib);
    let mut m = Model::new(&lib).unwrap();
    let id = |m: &Model, n: &str| m.port(n).unwrap();
    let (a, b, x, y, n) = (
        id(&m, "a_i"),
        id(&m, "b_i"),
        id(&m, "x_i"),
        id(&m, "y_i"),
        id(&m, "n_i"),
    );
    let (xo, so, gt, ro, no, na) = (
        id(&m, "xor_o"),
        id(&m, "sum_o"),
        id(&m, "gt_o"),
        id(&m, "rot_o"),
        id(&m, "n_o"),
        id(&m, "nota_o"),
    );
    m.reset(1).unwrap();
    assert_eq!(m.get_vec(ro), vec![0u32; 32]);
    let mut rng = ChaCha8Rng::seed_from_u64(7);
    let (mut o100, mut o1024) = ([0u32; 4], [0u32; 32]);
    for cyc in 0..5_000 {
        let (va, mut vb) = (rand_words(&mut rng, 100), rand_words(&mut rng, 100));
        if cyc % 3 == 0 {
            vb[..3].copy_from_slice(&va[..3]); // make the comparison hinge on the top word
        }
        let (vx, vy) = (rand_words(&mut rng, 1024), rand_words(&mut rng, 1024));
        let vn: u64 = rng.gen::<u64>() & ((1 << 40) - 1);
        // Garbage above bit 99 in the top word must be masked off by the shim.
        let (mut ga, mut gb) = (va.clone(), vb.clone());
        ga[3] |= rng.gen::<u32>() & !0xF;
        gb[3] |= rng.gen::<u32>() & !0xF;
        if cyc % 4 == 3 {
            // The C API's index-based path (hz_set / hz_set_u64) must behave the same.
            m.ffi_set(a, &ga);
            m.ffi_set(b, &gb);
            m.ffi_set(x, &vx);
            m.ffi_set(y, &vy);
            m.ffi_set_u64(n, vn | (0xABC << 40));
        } else {
            m.set(a, &ga).unwrap();
            m.set(b, &gb).unwrap();
            m.set(x, &vx).unwrap();
            m.set(y, &vy).unwrap();
            if cyc % 2 == 0 {
                m.set_u64(n, vn | (0xABC << 40));
            } else {
                m.set(n, &[vn as u32, (vn >> 32) as u32]).unwrap();
            }
        }
        // Combinational output settles on eval, before the edge.
        m.eval();
        let mut nota: Vec<u32> = va.iter().map(|w| !w).collect();
        mask_words(&mut nota, 100);
        m.get(na, &mut o100).unwrap();
        assert_eq!(o100.to_vec(), nota, "nota cycle {cyc}");
        m.tick();
        m.get(xo, &mut o100).unwrap();
        let want: Vec<u32> = va.iter().zip(&vb).map(|(p, q)| p ^ q).collect();
        assert_eq!(o100.to_vec(), want, "xor cycle {cyc}");
        m.get(so, &mut o100).unwrap();
        assert_eq!(o100.to_vec(), add_words(&va, &vb, 100), "sum cycle {cyc}");
        assert_eq!(
            m.get_u64(gt),
            u64::from(gt_words(&va, &vb)),
            "gt cycle {cyc}"
        );
        m.get(ro, &mut o1024).unwrap();
        let want: Vec<u32> = rotl5_1024(&vx)
            .iter()
            .zip(&vy)
            .map(|(p, q)| p ^ q)
            .collect();
        assert_eq!(o1024.to_vec(), want, "rot cycle {cyc}");
        assert_eq!(m.get_u64(no), (vn + 1) & ((1 << 40) - 1), "n cycle {cyc}");
        for o in [xo, so, gt, ro, no, na] {
            assert_eq!(m.get_vec(o), m.ffi_get(o), "hz_get vs direct, cycle {cyc}");
        }
        assert_eq!(m.ffi_get_u64(no), m.get_u64(no));
        assert_eq!(m.ffi_get_u64(gt), m.get_u64(gt));
        assert_eq!(
            m.get_vec(no),
            vec![((vn + 1) as u32), (((vn + 1) >> 32) as u32) & 0xFF]
        );
    }
    // Sum wraps at 100 bits: all-ones + 1 = 0.
    let ones = vec![u32::MAX, u32::MAX, u32::MAX, 0xF];
    m.set(a, &ones).unwrap();
    m.set(b, &[1, 0, 0, 0]).unwrap();
    m.tick();
    assert_eq!(m.get_vec(so), vec![0; 4]);
}

#[test]
fn combinational_module_without_clock() {
    let spec = spec("comb", COMB_V, &[("a_i", In, 8), ("y_o", Out, 8)]);
    let lib = build(&spec).unwrap();
    let mut m = Model::new(&lib).unwrap();
    let (a, y) = (m.port("a_i").unwrap(), m.port("y_o").unwrap());
    for v in [0u64, 1, 0x5A, 0xFF] {
        m.set_u64(a, v);
        m.eval();
        assert_eq!(m.get_u64(y), !v & 0xFF);
    }
    m.tick(); // only evaluates and advances time
    assert_eq!(m.cycle(), 1);
    assert!(matches!(m.reset(1), Err(CosimError::UnknownPort(_))));
}

#[test]
fn errors_wrong_words_direction_unknown_port_and_trace_on_fast_build() {
    let lib = build(&wide_spec()).unwrap();
    let mut m = Model::new(&lib).unwrap();
    let a = m.port("a_i").unwrap();
    let e = m.set(a, &[1, 2, 3]).unwrap_err();
    assert!(
        matches!(
            e,
            CosimError::WidthMismatch {
                expected: 4,
                got: 3,
                width: 100,
                ..
            }
        ),
        "{e}"
    );
    assert!(matches!(
        m.get(a, &mut [0; 5]),
        Err(CosimError::WidthMismatch { got: 5, .. })
    ));
    let out = m.port("xor_o").unwrap();
    assert!(matches!(
        m.set(out, &[0; 4]),
        Err(CosimError::NotAnInput(_))
    ));
    assert!(matches!(m.port("nope"), Err(CosimError::UnknownPort(_))));
    assert!(matches!(
        m.trace_open("/tmp/x.vcd"),
        Err(CosimError::Trace(_))
    ));
    assert!(matches!(m.trace_close(), Err(CosimError::Trace(_))));
    let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| m.set_u64(a, 1)));
    assert!(r.is_err(), "set_u64 on a 100-bit port must panic");
}

#[test]
fn verilog_syntax_error_reports_log() {
    let mut spec = add8_spec(false);
    spec.top = "broken".into();
    spec.sources = vec![(
        "broken.v".into(),
        "module broken(input clk_i, output reg q_o);\n  always @(posedge clk_i) q_o <= ;\nendmodule\n".into(),
    )];
    spec.ports = vec![p("clk_i", In, 1), p("q_o", Out, 1)];
    let e = build(&spec).unwrap_err();
    match &e {
        CosimError::ToolFailed {
            tool,
            code,
            log_tail,
            log_path,
        } => {
            assert_eq!(tool, "verilator");
            assert!(code.is_some_and(|c| c != 0));
            assert!(log_tail.contains("syntax error"), "{log_tail}");
            assert!(log_path.exists(), "{}", log_path.display());
        }
        other => panic!("unexpected error {other}"),
    }
    assert!(e.to_string().contains("broken.v"), "{e}");
}

#[test]
fn port_missing_from_verilog_is_a_compile_error() {
    let mut spec = add8_spec(false);
    spec.ports.push(p("ghost_o", Out, 3));
    let e = build(&spec).unwrap_err();
    match &e {
        CosimError::ToolFailed { tool, log_tail, .. } => {
            assert!(tool.contains("hz_shim.cpp"), "{tool}");
            assert!(log_tail.contains("ghost_o"), "{log_tail}");
        }
        other => panic!("unexpected error {other}"),
    }
}

#[test]
fn bad_specs_are_rejected_before_building() {
    let mut s = add8_spec(false);
    s.ports.push(p("a_i", In, 8));
    assert!(matches!(build(&s), Err(CosimError::Spec(_))));
    let mut s = add8_spec(false);
    s.sources[0].0 = "../x.v".into();
    assert!(matches!(build(&s), Err(CosimError::Spec(_))));
    let mut s = add8_spec(false);
    s.ports[0].width = 2;
    assert!(matches!(build(&s), Err(CosimError::Spec(_))));
}

#[test]
fn missing_tool_points_at_setup_script() {
    let e = tool_output("hwzip-no-such-tool-4711", &["--version"]).unwrap_err();
    assert!(matches!(e, CosimError::ToolMissing { .. }));
    assert!(e.to_string().contains("scripts/setup.sh"), "{e}");
}

fn nonce() -> String {
    format!(
        "{:?}-{}",
        SystemTime::now()
            .duration_since(SystemTime::UNIX_EPOCH)
            .unwrap(),
        std::process::id()
    )
}

#[test]
fn cache_reuses_and_rebuilds_on_change() {
    // A nonce comment makes a cache entry no earlier run has produced.
    let mut spec = add8_spec(false);
    spec.sources[0].1 = format!("// nonce {}\n{ADD8_V}", nonce());
    let t = Instant::now();
    let first = build(&spec).unwrap();
    let t_first = t.elapsed();
    assert!(!first.was_cached());
    let info = first.dir().join("build-info.txt");
    let stamp = fs::metadata(&info).unwrap().modified().unwrap();
    let so_stamp = fs::metadata(first.dir().join("libmodel.so"))
        .unwrap()
        .modified()
        .unwrap();

    let t = Instant::now();
    let second = build(&spec).unwrap();
    let t_second = t.elapsed();
    assert!(second.was_cached());
    assert_eq!(second.dir(), first.dir());
    assert_eq!(fs::metadata(&info).unwrap().modified().unwrap(), stamp);
    assert_eq!(
        fs::metadata(second.dir().join("libmodel.so"))
            .unwrap()
            .modified()
            .unwrap(),
        so_stamp
    );
    eprintln!(
        "[cosim] cache: fresh build {:.3}s, cached build {:.4}s",
        t_first.as_secs_f64(),
        t_second.as_secs_f64()
    );
    // Both handles work (same .so loaded twice).
    let mut m = Model::new(&second).unwrap();
    m.reset(1).unwrap();

    // A changed source gives a new entry that is compiled.
    let mut changed = spec.clone();
    changed.sources[0].1 = changed.sources[0]
        .1
        .replace("a_i} + {1'b0, b_i}", "a_i} - {1'b0, b_i}");
    let third = build(&changed).unwrap();
    assert!(!third.was_cached());
    assert_ne!(third.dir(), first.dir());
    let mut m3 = Model::new(&third).unwrap();
    let (a, b, s) = (
        m3.port("a_i").unwrap(),
        m3.port("b_i").unwrap(),
        m3.port("s_o").unwrap(),
    );
    m3.reset(1).unwrap();
    m3.set_u64(a, 5);
    m3.set_u64(b, 7);
    m3.tick();
    assert_eq!(m3.get_u64(s), 0xFE);
    // The trace flag is part of the key too.
    let mut traced = spec.clone();
    traced.trace = true;
    assert_ne!(
        super::build::entry_dir(&traced, super::build::tools().unwrap()),
        super::build::entry_dir(&spec, super::build::tools().unwrap())
    );
    drop((m, m3));
    for d in [first.dir(), third.dir()] {
        let _ = fs::remove_dir_all(d);
    }
}

#[test]
fn concurrent_builds_of_the_same_spec() {
    let mut spec = add8_spec(false);
    spec.sources[0].1 = format!("// nonce {}\n{ADD8_V}", nonce());
    let libs: Vec<_> = std::thread::scope(|s| {
        let hs: Vec<_> = (0..2).map(|_| s.spawn(|| build(&spec).unwrap())).collect();
        hs.into_iter().map(|h| h.join().unwrap()).collect()
    });
    assert_eq!(libs.iter().filter(|l| !l.was_cached()).count(), 1);
    // Models from both handles run on their own threads at the same time.
    std::thread::scope(|s| {
        for (k, lib) in libs.iter().enumerate() {
            s.spawn(move || {
                let mut m = Model::new(lib).unwrap();
                let (a, b, o) = (
                    m.port("a_i").unwrap(),
                    m.port("b_i").unwrap(),
                    m.port("s_o").unwrap(),
                );
                m.reset(1).unwrap();
                for i in 0..10_000u64 {
                    m.set_u64(a, (i + k as u64) & 0xFF);
                    m.set_u64(b, 3);
                    m.tick();
                    assert_eq!(m.get_u64(o), (i + k as u64 + 3) & 0xFF);
                }
            });
        }
    });
    let _ = fs::remove_dir_all(libs[0].dir());
}

#[test]
fn models_are_independent_and_send() {
    let lib = build(&add8_spec(false)).unwrap();
    let mut m1 = Model::new(&lib).unwrap();
    let mut m2 = Model::new(&lib).unwrap();
    let (a, b, s) = (
        m1.port("a_i").unwrap(),
        m1.port("b_i").unwrap(),
        m1.port("s_o").unwrap(),
    );
    m1.reset(1).unwrap();
    m2.reset(3).unwrap();
    m1.set_u64(a, 1);
    m1.set_u64(b, 1);
    m2.set_u64(a, 10);
    m2.set_u64(b, 20);
    m1.tick();
    m2.tick();
    assert_eq!((m1.get_u64(s), m2.get_u64(s)), (2, 30));
    assert_eq!((m1.cycle(), m2.cycle()), (2, 4));
    // Move a model to another thread and keep driving it there.
    let h = std::thread::spawn(move || {
        m2.set_u64(a, 100);
        m2.tick();
        m2.get_u64(s)
    });
    assert_eq!(h.join().unwrap(), 120);
    drop(m1);
}

#[test]
fn vcd_trace_open_pause_close() {
    let lib = build(&add8_spec(true)).unwrap();
    report("add8 trace", &lib);
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("add8.vcd");
    let mut m = Model::new(&lib).unwrap();
    assert!(matches!(m.set_tracing(false), Err(CosimError::Trace(_))));
    let (a, b) = (m.port("a_i").unwrap(), m.port("b_i").unwrap());
    m.reset(1).unwrap(); // cycle 0, untraced
    m.trace_open(&path).unwrap();
    for i in 0..4 {
        m.set_u64(a, i);
        m.set_u64(b, 1);
        m.tick(); // cycles 1..4: times 10..45
    }
    m.set_tracing(false).unwrap();
    for _ in 0..10 {
        m.tick(); // cycles 5..14: times 50..145, not dumped
    }
    m.set_tracing(true).unwrap();
    m.set_u64(a, 0x77);
    m.tick(); // cycle 15: times 150, 155
    m.trace_close().unwrap();
    m.tick(); // after close: no effect on the file
    let vcd = fs::read_to_string(&path).unwrap();
    for sig in ["clk_i", "rst_ni", "a_i", "b_i", "s_o", "c_o"] {
        assert!(vcd.contains(sig), "VCD lacks {sig}");
    }
    let times: Vec<u64> = vcd
        .lines()
        .filter_map(|l| l.strip_prefix('#').and_then(|t| t.parse().ok()))
        .collect();
    assert!(
        times.contains(&10) && times.contains(&45) && times.contains(&155),
        "{times:?}"
    );
    assert!(!times.iter().any(|t| (50..150).contains(t)), "{times:?}");
    assert!(!times.iter().any(|&t| t > 155), "{times:?}");
    // Reopen on the same model.
    let path2 = dir.path().join("again.vcd");
    m.trace_open(&path2).unwrap();
    m.tick();
    drop(m); // drop closes the file
    assert!(fs::read_to_string(&path2).unwrap().contains("s_o"));
}

#[test]
fn finish_and_fatal_do_not_kill_the_process() {
    let spec = clocked("fin", FIN_V, &[("a_i", In, 8), ("q_o", Out, 8)]);
    let lib = build(&spec).unwrap();
    let mut m = Model::new(&lib).unwrap();
    let a = m.port("a_i").unwrap();
    m.reset(1).unwrap();
    m.set_u64(a, 1);
    m.tick();
    assert!(m.finished());
    let mut m = Model::new(&lib).unwrap();
    m.reset(1).unwrap();
    m.set_u64(a, 2);
    let e = m.try_ticks(1).unwrap_err();
    assert!(
        matches!(&e, CosimError::Sim(msg) if msg.contains("src/fin.v:6")),
        "{e}"
    );
    assert!(m.finished());
    assert!(
        m.try_ticks(1).is_err(),
        "a model stays failed after a fatal error"
    );
}

/// A register without reset and an explicit X in a case default: what an X-randomized build
/// must expose.
const XSRC_V: &str = r"
module xsrc (
  input  wire        clk_i,
  input  wire        rst_ni,
  input  wire [1:0]  s_i,
  output reg  [31:0] q_o,
  output reg  [31:0] y_o,
  output reg  [31:0] r_o
);
  always @(posedge clk_i) q_o <= {30'd0, s_i};
  always @(posedge clk_i) begin
    if (!rst_ni) r_o <= 32'd0;
    else         r_o <= r_o + 32'd1;
  end
  always @(*) begin
    case (s_i)
      2'd0:    y_o = 32'd7;
      default: y_o = 32'bx;
    endcase
  end
endmodule
";

fn xsrc_spec(x_random: bool) -> BuildSpec {
    BuildSpec {
        x_random,
        ..clocked(
            "xsrc",
            XSRC_V,
            &[
                ("s_i", In, 2),
                ("q_o", Out, 32),
                ("y_o", Out, 32),
                ("r_o", Out, 32),
            ],
        )
    }
}

/// The X check can fail: in the `x_random` build, a register without reset and an X
/// assignment take different values for different seeds (and the same value for the same
/// seed), while reset registers do not depend on the seed; the plain build starts at 0.
#[test]
fn x_random_build_randomizes_unreset_state_and_x_assignments() {
    let sample = |lib: &std::sync::Arc<Library>, seed: Option<u32>| -> (u64, u64, u64) {
        let mut m = match seed {
            Some(s) => Model::new_random(lib, s).unwrap(),
            None => Model::new(lib).unwrap(),
        };
        let (s, q, y, r) = (
            m.port("s_i").unwrap(),
            m.port("q_o").unwrap(),
            m.port("y_o").unwrap(),
            m.port("r_o").unwrap(),
        );
        m.set_u64(s, 3);
        m.eval();
        let q0 = m.get_u64(q);
        let y3 = m.get_u64(y);
        m.reset(1).unwrap();
        m.tick();
        (q0, y3, m.get_u64(r))
    };
    let plain = build(&xsrc_spec(false)).unwrap();
    assert_eq!(sample(&plain, None), (0, 0, 1));
    let xr = build(&xsrc_spec(true)).unwrap();
    assert_ne!(
        plain.dir(),
        xr.dir(),
        "the x_random build is a separate cache entry"
    );
    let runs: Vec<(u64, u64, u64)> = (1..=8).map(|s| sample(&xr, Some(s))).collect();
    assert_eq!(sample(&xr, Some(3)), runs[2], "same seed, same state");
    let distinct = |f: fn(&(u64, u64, u64)) -> u64| {
        let mut v: Vec<u64> = runs.iter().map(f).collect();
        v.sort();
        v.dedup();
        v.len()
    };
    assert!(
        distinct(|t| t.0) >= 7,
        "unreset register not randomized: {runs:?}"
    );
    assert!(
        distinct(|t| t.1) >= 7,
        "X assignment not randomized: {runs:?}"
    );
    assert!(
        runs.iter().all(|t| t.2 == 1),
        "reset register depends on the seed"
    );
    // Without a seed the x_random library starts at 0 like the plain one.
    assert_eq!(sample(&xr, None).0, 0);
}
