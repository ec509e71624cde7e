//! Arrays of signals and instance families: emitted as arrays and generate loops, simulated
//! like scalars, accepted by Verilator, Yosys and Icarus when they are installed.

use super::emit::emit_design;
use super::sim::Sim;
use super::{Expr, Module, ModuleBuilder};
use std::sync::Arc;

/// `y_o = a_i ^ {8{b_i}}`.
fn lane() -> Arc<Module> {
    let mut m = ModuleBuilder::new("lane_w8");
    let a = m.input("a_i", 8);
    let b = m.input("b_i", 1);
    m.output_expr("y_o", &(&a ^ &b.repeat(8)));
    m.finish().unwrap()
}

/// Four lanes on `x_i` (lane 3's bit is a constant 0, so it is not in the loop), the lane
/// outputs registered in a register array and XOR-folded through a wire array, and a decode
/// whose constants follow the index (`x_i[3:0] == 3*k + 1`).
fn lanes() -> Arc<Module> {
    let l = lane();
    let mut m = ModuleBuilder::new("lanes");
    let x = m.input("x_i", 32);
    let s = m.input("s_i", 4);
    let u = m.instance_array(&l, "u_lane", 4, |k| {
        let b = if k < 3 { s.bit(k) } else { Expr::zero(1) };
        vec![("a_i", x.slice(8 * k, 8)), ("b_i", b)]
    });
    let y: Vec<Expr> = u.iter().map(|i| i.out("y_o")).collect();
    let r = m.reg_array("acc_q", 8, 4, Some(0));
    for (k, reg) in r.iter().enumerate() {
        m.next(reg, &(&reg.q() ^ &y[k]), None);
    }
    let rq: Vec<Expr> = r.iter().map(|reg| reg.q()).collect();
    let fold = m.wire_array("fold", &[rq[0].clone(), &rq[1] ^ &rq[2], rq[3].clone()]);
    m.output_expr("y_o", &(&(&fold[0] ^ &fold[1]) ^ &fold[2]));
    m.output_expr("z_o", &Expr::cat_lsb(&y));
    let hits: Vec<Expr> = (0..4).map(|k| x.slice(0, 4).eq_lit(3 * k + 1)).collect();
    let hit = m.wire_array("hit", &hits);
    m.output_expr("hit_o", &Expr::cat_lsb(&hit));
    m.unused(&s.bit(3));
    m.finish().unwrap()
}

#[test]
fn arrays_and_families_emit_as_arrays_and_loops() {
    let files = emit_design(&lanes()).unwrap();
    let text = &files[1].1;
    for want in [
        "  wire [7:0] u_lane_y_o [0:3];",
        "  genvar i;",
        "    for (i = 0; i < 3; i = i + 1) begin : g_lane",
        "      lane_w8 u_lane (",
        "        .a_i(x_i[8*i +: 8]),",
        "        .b_i(s_i[i]),",
        "        .y_o(u_lane_y_o[i])",
        "  lane_w8 u_lane3 (",
        "  (* mem2reg *) reg  [7:0] acc_q [0:3];",
        "  wire [7:0] acc_d [0:3];",
        "    for (i = 0; i < 4; i = i + 1) begin : g_acc_d",
        "      assign acc_d[i] = (acc_q[i] ^ u_lane_y_o[i]);",
        "  integer k;",
        "      for (k = 0; k < 4; k = k + 1) acc_q[k] <= 8'd0;",
        "      for (k = 0; k < 4; k = k + 1) acc_q[k] <= acc_d[k];",
        "  wire [7:0] fold [0:2];",
        "  assign fold[1] = (acc_q[1] ^ acc_q[2]);",
        "    for (i = 0; i < 4; i = i + 1) begin : g_hit",
        "      localparam [3:0] K0 = 3*i + 1;",
        "      assign hit[i] = (x_i[3:0] == K0);",
    ] {
        assert!(text.contains(want), "missing `{}` in\n{}", want, text);
    }
}

#[test]
fn arrays_and_families_simulate_like_scalars() {
    let top = lanes();
    let mut sim = Sim::new(&top).unwrap();
    sim.reset(2);
    sim.set_u64("x_i", 0x1122_3344).unwrap();
    sim.set_u64("s_i", 0b0101).unwrap();
    sim.eval();
    // Lanes 0 and 2 invert (their bit is 1); lane 3's bit is the constant 0.
    assert_eq!(sim.get_u64("z_o"), 0x11dd_33bb);
    // x_i[3:0] = 4 = 3*1 + 1.
    assert_eq!(sim.get_u64("hit_o"), 0b0010);
    sim.tick();
    sim.eval();
    assert_eq!(sim.get_u64("y_o"), 0xbb ^ 0x33 ^ 0xdd ^ 0x11);
}

#[test]
fn arrays_and_families_pass_the_tools() {
    let files = emit_design(&lanes()).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let mut paths = Vec::new();
    for (name, text) in &files {
        let p = dir.path().join(name);
        std::fs::write(&p, text).unwrap();
        paths.push(p.display().to_string());
    }
    let run = |tool: &str, args: &[&str]| -> Option<std::process::Output> {
        std::process::Command::new(tool).args(args).output().ok()
    };
    let mut lint = vec!["--lint-only", "-Wall", "--top-module", "lanes"];
    lint.extend(paths.iter().map(String::as_str));
    if let Some(out) = run("verilator", &lint) {
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(
            out.stderr.is_empty(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let script = format!("read_verilog -sv {}; synth -top lanes", paths.join(" "));
    if let Some(out) = run("yosys", &["-p", &script]) {
        let log = String::from_utf8_lossy(&out.stdout);
        assert!(out.status.success(), "{}", log);
        assert!(!log.contains("Warning"), "{}", log);
    }
    let mut iv = vec!["-g2005", "-o", "/dev/null"];
    iv.extend(paths.iter().map(String::as_str));
    if let Some(out) = run("iverilog", &iv) {
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
}
