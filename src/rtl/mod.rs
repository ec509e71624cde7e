//! Hardware generators, one file per algorithm (same names as [`crate::model`]):
//! parameters in, checked [`crate::hdl::Module`] out.
//!
//! [`Engine`] lists the engines built so far and the synthesizable units each one has; the
//! CLI (`hwzip gen | cosim | synth | flow`) works from this table only, so a new engine is
//! added by adding its generator file and a row here.

pub mod adaptive;
pub mod adaptive_ctrl;
pub mod base_xor;
pub mod bdi;
pub mod cache;
pub mod cpack;
pub mod dbi;
pub mod fpc;
pub mod link;
pub mod zvc;

use crate::config::Config;
use crate::hdl::{HdlError, Module};
use std::sync::Arc;

/// A compression engine family.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Engine {
    /// Zero-Value Compression (cDMA, HPCA'18).
    Zvc,
    /// Base+XOR Transfer, Zero Data Remapping and DBI (HPCA'18).
    BaseXor,
    /// Adaptive link compression (IPDPS'19): BDI, FPC, C-Pack+Z, the controller and the link
    /// egress/ingress.
    Adaptive,
}

/// One synthesizable unit of an engine.
#[derive(Clone, Debug)]
pub struct UnitDesign {
    /// Engine.
    pub engine: Engine,
    /// Unit name (`compressor`, `decompressor`, …).
    pub unit: &'static str,
    /// The generated top module.
    pub top: Arc<Module>,
    /// Parameter description for reports.
    pub params: String,
    /// Input bytes per beat (the unit's datapath width).
    pub beat_bytes: u32,
}

impl Engine {
    /// Every engine built so far.
    pub const ALL: [Engine; 3] = [Engine::Zvc, Engine::BaseXor, Engine::Adaptive];

    /// CLI name.
    pub fn name(self) -> &'static str {
        match self {
            Engine::Zvc => "zvc",
            Engine::BaseXor => "base-xor",
            Engine::Adaptive => "adaptive",
        }
    }

    /// Parses a CLI name; the error lists the known engines.
    pub fn from_name(s: &str) -> Result<Engine, String> {
        Engine::ALL
            .iter()
            .copied()
            .find(|e| e.name() == s)
            .ok_or_else(|| {
                let known: Vec<&str> = Engine::ALL.iter().map(|e| e.name()).collect();
                format!("unknown engine `{}` (known: {})", s, known.join(", "))
            })
    }

    /// Unit names of this engine (what `--unit` accepts).
    pub fn unit_names(self) -> &'static [&'static str] {
        match self {
            Engine::Zvc => &["compressor", "decompressor"],
            Engine::BaseXor => &["encoder", "decoder", "serializer", "deserializer"],
            Engine::Adaptive => &[
                "bdi_comp",
                "bdi_decomp",
                "fpc_comp",
                "fpc_decomp",
                "cpack_comp",
                "cpack_decomp",
                "ctrl",
                "tx",
                "rx",
            ],
        }
    }

    /// Generates every unit of this engine for the configuration.
    pub fn units(self, cfg: &Config) -> Result<Vec<UnitDesign>, HdlError> {
        match self {
            Engine::Zvc => {
                let p = &cfg.zvc;
                Ok(vec![
                    UnitDesign {
                        engine: self,
                        unit: "compressor",
                        top: zvc::compressor(p)?,
                        params: p.describe(),
                        beat_bytes: p.beat_bytes(),
                    },
                    UnitDesign {
                        engine: self,
                        unit: "decompressor",
                        top: zvc::decompressor(p)?,
                        params: p.describe(),
                        beat_bytes: p.beat_bytes(),
                    },
                ])
            }
            Engine::BaseXor => {
                let p = &cfg.base_xor;
                let unit = |unit: &'static str, top: Arc<Module>, beat_bytes: u32| UnitDesign {
                    engine: self,
                    unit,
                    top,
                    params: p.describe(),
                    beat_bytes,
                };
                Ok(vec![
                    unit("encoder", base_xor::encoder(p)?, p.beat_bytes()),
                    unit("decoder", base_xor::decoder(p)?, p.beat_bytes()),
                    unit("serializer", base_xor::serializer(p)?, p.beat_bytes()),
                    unit("deserializer", base_xor::deserializer(p)?, 4),
                ])
            }
            Engine::Adaptive => {
                let p = &cfg.adaptive;
                let unit = |unit: &'static str, top: Arc<Module>| UnitDesign {
                    engine: self,
                    unit,
                    top,
                    params: p.describe(),
                    beat_bytes: p.line_bytes as u32,
                };
                Ok(vec![
                    unit("bdi_comp", bdi::compressor(p)?),
                    unit("bdi_decomp", bdi::decompressor(p)?),
                    unit("fpc_comp", fpc::compressor(p)?),
                    unit("fpc_decomp", fpc::decompressor(p)?),
                    UnitDesign {
                        params: p.describe_cpack(),
                        ..unit("cpack_comp", cpack::compressor(&p.cpack_rtl())?)
                    },
                    UnitDesign {
                        params: p.describe_cpack(),
                        ..unit("cpack_decomp", cpack::decompressor(&p.cpack_rtl())?)
                    },
                    UnitDesign {
                        engine: self,
                        unit: "ctrl",
                        top: adaptive_ctrl::controller(p)?,
                        params: p.describe_ctrl(),
                        beat_bytes: p.line_bytes as u32,
                    },
                    UnitDesign {
                        engine: self,
                        unit: "tx",
                        top: link::transmitter(p)?,
                        params: p.describe_link(),
                        beat_bytes: p.line_bytes as u32,
                    },
                    UnitDesign {
                        engine: self,
                        unit: "rx",
                        top: link::receiver(p)?,
                        params: p.describe_link(),
                        beat_bytes: p.line_bytes as u32,
                    },
                ])
            }
        }
    }
}
