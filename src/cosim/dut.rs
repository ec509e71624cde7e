//! The device-under-test interface every scoreboard drives: the Verilator model and the native
//! netlist interpreter both implement it, so one scoreboard checks both.

use crate::hdl::sim::Sim;
use crate::hdl::{Bits, Module};
use std::sync::Arc;

/// A clocked design with ports addressed by index (resolved once by name).
///
/// Protocol per cycle: `set` inputs → `eval` (combinational outputs settle) → `get` outputs →
/// `tick` (one rising clock edge).
pub trait Dut {
    /// Port names, in index order.
    fn port_names(&self) -> &[String];
    /// Index of port `name`, or an error naming the port.
    fn port(&self, name: &str) -> Result<usize, String> {
        self.port_names()
            .iter()
            .position(|n| n == name)
            .ok_or_else(|| format!("no port `{}`", name))
    }
    /// Width in bits of port `port`.
    fn port_width(&self, port: usize) -> u32;
    /// Drives an input from 32-bit words (word 0 = bits 31:0).
    fn set(&mut self, port: usize, words: &[u32]);
    /// Reads a port into 32-bit words.
    fn get(&mut self, port: usize, out: &mut [u32]);
    /// Drives an input of at most 64 bits.
    fn set_u64(&mut self, port: usize, v: u64);
    /// Reads a port of at most 64 bits.
    fn get_u64(&mut self, port: usize) -> u64;
    /// Settles combinational logic.
    fn eval(&mut self);
    /// One rising clock edge.
    fn tick(&mut self);
    /// Holds `rst_ni` low for `cycles` edges.
    fn reset(&mut self, cycles: u32);
    /// Rising edges since creation.
    fn cycle(&self) -> u64;
    /// Starts dumping a waveform to `path` (if the implementation supports it).
    fn trace_start(&mut self, _path: &std::path::Path) -> Result<(), String> {
        Err("this simulator cannot write waveforms".into())
    }
    /// Stops dumping the waveform.
    fn trace_stop(&mut self) {}
}

/// [`Dut`] over the native interpreter.
pub struct SimDut {
    sim: Sim,
    names: Vec<String>,
    widths: Vec<u32>,
}

impl SimDut {
    /// Builds an interpreter for `top`.
    pub fn new(top: &Arc<Module>) -> Result<SimDut, String> {
        let sim = Sim::new(top).map_err(|e| e.to_string())?;
        let ports = top.ports();
        Ok(SimDut {
            sim,
            names: ports.iter().map(|p| p.name.clone()).collect(),
            widths: ports.iter().map(|p| p.width).collect(),
        })
    }
}

impl Dut for SimDut {
    fn port_names(&self) -> &[String] {
        &self.names
    }
    fn port_width(&self, port: usize) -> u32 {
        self.widths[port]
    }
    fn set(&mut self, port: usize, words: &[u32]) {
        let b = Bits::from_u32_words(self.widths[port], words);
        let _ = self.sim.set(&self.names[port], &b);
    }
    fn get(&mut self, port: usize, out: &mut [u32]) {
        if let Some(b) = self.sim.get(&self.names[port]) {
            for (o, w) in out.iter_mut().zip(b.to_u32_words()) {
                *o = w;
            }
        }
    }
    fn set_u64(&mut self, port: usize, v: u64) {
        let _ = self
            .sim
            .set(&self.names[port], &Bits::from_u64(self.widths[port], v));
    }
    fn get_u64(&mut self, port: usize) -> u64 {
        self.sim.get_u64(&self.names[port])
    }
    fn eval(&mut self) {
        self.sim.eval();
    }
    fn tick(&mut self) {
        self.sim.tick();
    }
    fn reset(&mut self, cycles: u32) {
        self.sim.reset(cycles);
    }
    fn cycle(&self) -> u64 {
        self.sim.cycle()
    }
}
