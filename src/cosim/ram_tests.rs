//! The RAM primitive: its emitted Verilog (per-lane arrays) and its netlist (one array with
//! lane enables, run by the interpreter) agree cycle for cycle under random writes and reads.

use super::dut::{Dut, SimDut};
use super::vdut::VerilatorDut;
use crate::hdl::ram::{ram, RamSpec};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

fn words(rng: &mut ChaCha8Rng, width: u32) -> Vec<u32> {
    let mut v: Vec<u32> = (0..width.div_ceil(32)).map(|_| rng.gen()).collect();
    if !width.is_multiple_of(32) {
        let last = v.len() - 1;
        v[last] &= (1u32 << (width % 32)) - 1;
    }
    v
}

fn ones(width: u32) -> Vec<u32> {
    let mut v = vec![u32::MAX; width.div_ceil(32) as usize];
    if !width.is_multiple_of(32) {
        let last = v.len() - 1;
        v[last] = (1u32 << (width % 32)) - 1;
    }
    v
}

#[test]
fn verilator_and_interpreter_agree_on_random_lane_writes() {
    for (i, spec) in [
        RamSpec {
            words: 4,
            width: 16,
            lane: 4,
        },
        RamSpec {
            words: 32,
            width: 1024,
            lane: 8,
        },
        RamSpec {
            words: 8,
            width: 12,
            lane: 12,
        },
    ]
    .into_iter()
    .enumerate()
    {
        let top = ram(&spec).unwrap();
        let mut v = VerilatorDut::new(&top, false).unwrap();
        let mut s = SimDut::new(&top).unwrap();
        let mut rng = ChaCha8Rng::seed_from_u64(5 + i as u64);
        let duts: [&mut dyn Dut; 2] = [&mut v, &mut s];
        let port = |d: &dyn Dut, n: &str| d.port(n).unwrap();
        let [v, s] = duts;
        let (aw, lanes) = (spec.addr_bits(), spec.lanes());
        let mut differ = 0;
        for cycle in 0..3_000u32 {
            // The first cycles write every word whole (the contents start undefined).
            let init = cycle < spec.words;
            let we = init || rng.gen_bool(0.5);
            let waddr = if init {
                cycle as u64
            } else {
                rng.gen_range(0..spec.words) as u64
            };
            let wdata = words(&mut rng, spec.width);
            let wmask = if init {
                ones(lanes)
            } else {
                words(&mut rng, lanes)
            };
            let re = !init && rng.gen_bool(0.7);
            let raddr = rng.gen_range(0..spec.words) as u64;
            for d in [&mut *v, &mut *s] {
                d.set_u64(port(d, "we_i"), we as u64);
                d.set_u64(port(d, "waddr_i"), waddr & ((1 << aw) - 1));
                d.set(port(d, "wdata_i"), &wdata);
                if lanes > 1 {
                    d.set(port(d, "wmask_i"), &wmask);
                }
                d.set_u64(port(d, "re_i"), re as u64);
                d.set_u64(port(d, "raddr_i"), raddr);
                d.eval();
                d.tick();
                d.eval();
            }
            if cycle > spec.words {
                let n = spec.width.div_ceil(32) as usize;
                let (mut a, mut b) = (vec![0u32; n], vec![0u32; n]);
                v.get(port(v, "rdata_o"), &mut a);
                s.get(port(s, "rdata_o"), &mut b);
                differ += (a != b) as u32;
            }
        }
        assert_eq!(
            differ,
            0,
            "{}: cycles where the two disagree",
            spec.module_name()
        );
    }
}
