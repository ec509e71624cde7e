//! The Verilator model behind the [`Dut`] interface, built straight from a builder module.

use super::dut::Dut;
use super::{build, BuildSpec, CosimError, Model, PortDir, PortId, PortSpec};
use crate::hdl::{emit, Dir, Module};
use std::path::Path;
use std::sync::Arc;

/// The Verilator build description of a finished module: every file of its hierarchy and
/// its full port table.
pub fn build_spec(top: &Arc<Module>, trace: bool) -> Result<BuildSpec, CosimError> {
    build_spec_with(top, trace, false)
}

/// [`build_spec`], optionally with X assignments and initial values randomized
/// ([`BuildSpec::x_random`]).
pub fn build_spec_with(
    top: &Arc<Module>,
    trace: bool,
    x_random: bool,
) -> Result<BuildSpec, CosimError> {
    let sources = emit::emit_design(top).map_err(|e| CosimError::Spec(e.to_string()))?;
    let ports = top
        .ports()
        .into_iter()
        .map(|p| {
            let dir = if p.dir == Dir::In {
                PortDir::In
            } else {
                PortDir::Out
            };
            PortSpec::new(p.name, dir, p.width)
        })
        .collect();
    Ok(BuildSpec {
        top: top.name.clone(),
        sources,
        ports,
        trace,
        x_random,
    })
}

/// A Verilated module driven through [`Dut`].
pub struct VerilatorDut {
    model: Model,
    ids: Vec<PortId>,
    names: Vec<String>,
    /// Inputs settled with the clock low and unchanged since: `tick` only raises the clock.
    settled: bool,
    clocked: bool,
}

impl VerilatorDut {
    /// Builds (or reuses from the cache) and loads the model of `top`.
    pub fn new(top: &Arc<Module>, trace: bool) -> Result<VerilatorDut, CosimError> {
        VerilatorDut::with(top, trace, None)
    }

    /// Builds (or reuses) the model of `top` with X assignments and initial values randomized
    /// and loads it with every register, memory and X drawn from `seed`
    /// ([`Model::new_random`]): the test that no output depends on state the reset does not
    /// define.
    pub fn new_random(top: &Arc<Module>, seed: u32) -> Result<VerilatorDut, CosimError> {
        VerilatorDut::with(top, false, Some(seed))
    }

    /// [`VerilatorDut::new`] (`x_seed` `None`) or [`VerilatorDut::new_random`], with or
    /// without tracing.
    pub fn with(
        top: &Arc<Module>,
        trace: bool,
        x_seed: Option<u32>,
    ) -> Result<VerilatorDut, CosimError> {
        let spec = build_spec_with(top, trace, x_seed.is_some())?;
        let lib = build(&spec)?;
        let model = match x_seed {
            Some(seed) => Model::new_random(&lib, seed)?,
            None => Model::new(&lib)?,
        };
        VerilatorDut::from_model(model)
    }

    /// Wraps an already loaded model.
    pub fn from_model(model: Model) -> Result<VerilatorDut, CosimError> {
        let names: Vec<String> = model
            .library()
            .ports()
            .iter()
            .map(|p| p.name.clone())
            .collect();
        let ids = names
            .iter()
            .map(|n| model.port(n))
            .collect::<Result<Vec<_>, _>>()?;
        let clocked = names.iter().any(|n| n == "clk_i");
        Ok(VerilatorDut {
            model,
            ids,
            names,
            settled: false,
            clocked,
        })
    }

    /// The underlying model.
    pub fn model(&mut self) -> &mut Model {
        &mut self.model
    }
}

impl Dut for VerilatorDut {
    fn port_names(&self) -> &[String] {
        &self.names
    }
    fn port_width(&self, port: usize) -> u32 {
        self.model.port_spec(self.ids[port]).width
    }
    fn set(&mut self, port: usize, words: &[u32]) {
        self.settled = false;
        // Word counts come from the same port table; a mismatch is a harness bug.
        if let Err(e) = self.model.set(self.ids[port], words) {
            panic!("harness drove port {} wrongly: {}", self.names[port], e);
        }
    }
    fn get(&mut self, port: usize, out: &mut [u32]) {
        if let Err(e) = self.model.get(self.ids[port], out) {
            panic!("harness read port {} wrongly: {}", self.names[port], e);
        }
    }
    fn set_u64(&mut self, port: usize, v: u64) {
        self.settled = false;
        self.model.set_u64(self.ids[port], v);
    }
    fn get_u64(&mut self, port: usize) -> u64 {
        self.model.get_u64(self.ids[port])
    }
    fn eval(&mut self) {
        if self.clocked {
            // The low phase of the coming cycle: the edge then needs one eval, not two.
            self.model.settle();
            self.settled = true;
        } else {
            self.model.eval();
        }
    }
    fn tick(&mut self) {
        if self.settled {
            self.model.rise();
        } else {
            self.model.tick();
        }
        self.settled = false;
    }
    fn reset(&mut self, cycles: u32) {
        self.settled = false;
        if !self.names.iter().any(|n| n == "rst_ni") {
            // A purely combinational design: nothing to reset, the cycles still count.
            for _ in 0..cycles {
                self.model.tick();
            }
            self.model.eval();
            return;
        }
        if let Err(e) = self.model.reset(cycles as u64) {
            panic!("reset failed: {}", e);
        }
    }
    fn cycle(&self) -> u64 {
        self.model.cycle()
    }
    fn trace_start(&mut self, path: &Path) -> Result<(), String> {
        self.model.trace_open(path).map_err(|e| e.to_string())
    }
    fn trace_stop(&mut self) {
        let _ = self.model.trace_close();
    }
}
