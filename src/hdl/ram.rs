//! The memory primitive: a RAM with one write port and one synchronous read port, emitted as
//! its own module (`ram_<words>x<width>[_be<lane>]`) with a behavioural body.
//!
//! A generator that stores an array in a RAM instantiates this module instead of declaring a
//! register array, so the array is one named block: simulation runs the behavioural body, and
//! a user who has a foundry or OpenRAM macro of that size replaces the module's file by a
//! wrapper of the same name and ports (`docs/MEMORIES.md`). Synthesis reports the unit's
//! logic with the RAMs as black boxes and the RAMs beside it, as flops and as macros
//! (`crate::synth::memories`).
//!
//! Port contract (every RAM):
//! * `we_i`, `waddr_i`, `wdata_i` (and `wmask_i`, one enable per `lane` bits): the word is
//!   written at the rising edge;
//! * `re_i`, `raddr_i`: the word is read at the rising edge into `rdata_o`, which holds its
//!   value until the next read (a read and a write of the same word in one cycle read the
//!   old word);
//! * no reset: the contents and `rdata_o` are undefined until written and read.

use super::module::{clog2, HdlError, Module, ModuleBuilder};
use super::Expr;
use std::sync::Arc;

/// Geometry of a RAM: words, word width and the width of a lane a write enable covers.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct RamSpec {
    /// Number of words (at least 2).
    pub words: u32,
    /// Word width in bits.
    pub width: u32,
    /// Bits per write enable; `width` for whole-word writes.
    pub lane: u32,
}

impl RamSpec {
    /// The module name: `ram_<words>x<width>`, with `_be<lane>` when writes have lane
    /// enables.
    pub fn module_name(&self) -> String {
        if self.lanes() > 1 {
            format!("ram_{}x{}_be{}", self.words, self.width, self.lane)
        } else {
            format!("ram_{}x{}", self.words, self.width)
        }
    }

    /// Reads a RAM geometry back from a module name made by [`RamSpec::module_name`].
    pub fn from_module_name(name: &str) -> Option<RamSpec> {
        let rest = name.strip_prefix("ram_")?;
        let (dims, lane) = match rest.split_once("_be") {
            Some((d, l)) => (d, Some(l.parse().ok()?)),
            None => (rest, None),
        };
        let (words, width) = dims.split_once('x')?;
        let (words, width): (u32, u32) = (words.parse().ok()?, width.parse().ok()?);
        let spec = RamSpec {
            words,
            width,
            lane: lane.unwrap_or(width),
        };
        (spec.validate().is_ok() && spec.module_name() == name).then_some(spec)
    }

    /// Number of write enables.
    pub fn lanes(&self) -> u32 {
        self.width / self.lane.max(1)
    }

    /// Address width.
    pub fn addr_bits(&self) -> u32 {
        clog2(self.words as u64).max(1)
    }

    /// Storage in bits.
    pub fn bits(&self) -> u64 {
        self.words as u64 * self.width as u64
    }

    /// Checks the geometry.
    pub fn validate(&self) -> Result<(), String> {
        if self.words < 2
            || self.width == 0
            || self.lane == 0
            || !self.width.is_multiple_of(self.lane)
        {
            return Err(format!(
                "RAM of {} words x {} bits with {}-bit lanes (needs at least 2 words and lanes \
                 that divide the word)",
                self.words, self.width, self.lane
            ));
        }
        Ok(())
    }
}

/// The RAM module of `spec`.
pub fn ram(spec: &RamSpec) -> Result<Arc<Module>, HdlError> {
    spec.validate().map_err(|e| HdlError {
        module: "ram".into(),
        problems: vec![e],
    })?;
    let mut m = ModuleBuilder::new(spec.module_name());
    m.header("Generator: hwzip::hdl::ram");
    m.header(format!(
        "Parameters: words={} width={} lane={}",
        spec.words, spec.width, spec.lane
    ));
    m.header(
        "Spec: docs/FORMATS.md (metadata cache data array), docs/MEMORIES.md \
         (one write port, one synchronous read port, no reset)",
    );
    m.header("Behavioural model: replace this file by a macro wrapper with the same ports.");
    let aw = spec.addr_bits();
    let we = m.input("we_i", 1);
    let waddr = m.input("waddr_i", aw);
    let wdata = m.input("wdata_i", spec.width);
    let wmask = (spec.lanes() > 1).then(|| m.input("wmask_i", spec.lanes()));
    let re = m.input("re_i", 1);
    let raddr = m.input("raddr_i", aw);
    let mem = m.memory("mem_q", spec.width, spec.words);
    match &wmask {
        Some(mask) => m.mem_write_lanes(&mem, &we, &waddr, &wdata, mask, spec.lane),
        None => m.mem_write(&mem, &we, &waddr, &wdata),
    }
    let word = m.wire("rword", &mem.read(&raddr));
    let rdata = m.reg_next("rdata_q", None, &word, Some(&re));
    m.output_expr("rdata_o", &rdata);
    if spec.lanes() > 1 {
        m.verbatim_body(lane_body(spec));
    }
    m.finish()
}

/// The Verilog of a RAM with lane enables: one array per lane, as a byte-enable RAM is
/// usually modelled (a loop of lane writes into one array is not accepted by every
/// simulator once it has more than 64 lanes).
fn lane_body(spec: &RamSpec) -> String {
    let (lanes, lw, top) = (spec.lanes(), spec.lane, spec.words - 1);
    let r = |w: u32| {
        if w > 1 {
            format!("[{}:0] ", w - 1)
        } else {
            String::new()
        }
    };
    let lr = r(lw);
    format!(
        "\n  // One array per write lane: lane i holds bits [i*{lw} +: {lw}] of every word.\n  \
         genvar i;\n  \
         generate\n    \
         for (i = 0; i < {lanes}; i = i + 1) begin : g_lane\n      \
         reg  {lr}mem_q [0:{top}];\n      \
         reg  {lr}rdata_q;\n      \
         always @(posedge clk_i) begin\n        \
         if (we_i && wmask_i[i]) mem_q[waddr_i] <= wdata_i[i*{lw} +: {lw}];\n        \
         if (re_i) rdata_q <= mem_q[raddr_i];\n      \
         end\n      \
         assign rdata_o[i*{lw} +: {lw}] = rdata_q;\n    \
         end\n  \
         endgenerate\n"
    )
}

/// The ports of one RAM instance, as the parent drives them.
pub struct RamPorts {
    /// Write enable.
    pub we: Expr,
    /// Write address.
    pub waddr: Expr,
    /// Write data.
    pub wdata: Expr,
    /// Lane enables (`None` for a RAM without lanes).
    pub wmask: Option<Expr>,
    /// Read enable.
    pub re: Expr,
    /// Read address.
    pub raddr: Expr,
}

/// Instantiates the RAM of `spec` as `name` in `m` and returns its read data (`rdata_o`).
pub fn place(
    m: &mut ModuleBuilder,
    spec: &RamSpec,
    name: &str,
    p: &RamPorts,
) -> Result<Expr, HdlError> {
    let module = ram(spec)?;
    let mut inputs = vec![
        ("we_i", p.we.clone()),
        ("waddr_i", p.waddr.clone()),
        ("wdata_i", p.wdata.clone()),
        ("re_i", p.re.clone()),
        ("raddr_i", p.raddr.clone()),
    ];
    match (&p.wmask, spec.lanes() > 1) {
        (Some(mask), true) => inputs.push(("wmask_i", mask.clone())),
        (None, false) => {}
        _ => {
            m.problem(format!(
                "RAM `{}`: lane enables given for {} lanes",
                name,
                spec.lanes()
            ));
        }
    }
    Ok(m.instance(&module, name, &inputs).out("rdata_o"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hdl::emit::emit_design;
    use crate::hdl::sim::Sim;

    #[test]
    fn names_round_trip_and_bad_geometry_is_refused() {
        for spec in [
            RamSpec {
                words: 32,
                width: 1024,
                lane: 8,
            },
            RamSpec {
                words: 128,
                width: 256,
                lane: 256,
            },
        ] {
            assert_eq!(RamSpec::from_module_name(&spec.module_name()), Some(spec));
        }
        assert_eq!(
            RamSpec {
                words: 4,
                width: 8,
                lane: 8
            }
            .module_name(),
            "ram_4x8"
        );
        for bad in ["ram_1x8", "ram_4x8_be3", "ram_4x8_be8", "rom_4x8", "ram_4x"] {
            assert_eq!(RamSpec::from_module_name(bad), None, "{bad}");
        }
        assert!(ram(&RamSpec {
            words: 8,
            width: 12,
            lane: 5
        })
        .is_err());
    }

    #[test]
    fn lane_writes_and_registered_reads() {
        let spec = RamSpec {
            words: 4,
            width: 16,
            lane: 4,
        };
        let top = ram(&spec).unwrap();
        let text = &emit_design(&top).unwrap()[0].1;
        assert!(
            text.contains("for (i = 0; i < 4; i = i + 1) begin : g_lane"),
            "{text}"
        );
        assert!(
            text.contains("mem_q[waddr_i] <= wdata_i[i*4 +: 4];"),
            "{text}"
        );
        let mut sim = Sim::new(&top).unwrap();
        let write = |sim: &mut Sim, a: u64, d: u64, mask: u64| {
            sim.set_u64("we_i", 1).unwrap();
            sim.set_u64("waddr_i", a).unwrap();
            sim.set_u64("wdata_i", d).unwrap();
            sim.set_u64("wmask_i", mask).unwrap();
            sim.tick();
            sim.set_u64("we_i", 0).unwrap();
        };
        write(&mut sim, 2, 0xabcd, 0xf);
        write(&mut sim, 2, 0x1234, 0b0101);
        write(&mut sim, 1, 0x5555, 0xf);
        sim.set_u64("re_i", 1).unwrap();
        sim.set_u64("raddr_i", 2).unwrap();
        sim.eval();
        // The read data changes only at the edge.
        assert_ne!(sim.get_u64("rdata_o"), 0xa2c4);
        sim.tick();
        assert_eq!(sim.get_u64("rdata_o"), 0xa2c4);
        // Without a read the data holds; a read of a word written in the same cycle sees
        // the old word.
        sim.set_u64("re_i", 0).unwrap();
        sim.set_u64("raddr_i", 1).unwrap();
        sim.tick();
        assert_eq!(sim.get_u64("rdata_o"), 0xa2c4);
        sim.set_u64("re_i", 1).unwrap();
        write(&mut sim, 1, 0x9999, 0xf);
        assert_eq!(sim.get_u64("rdata_o"), 0x5555);
        sim.tick();
        assert_eq!(sim.get_u64("rdata_o"), 0x9999);
    }
}
