//! Stimulus: proptest strategies, seeded synthetic workloads and trace files.
//!
//! * [`blocks`]     128 B block classes for the PACT'12 memory-link engine
//!   (docs/FORMATS.md, PACT'12 §5)
//! * [`strategies`] proptest strategies for the data classes of docs/FORMATS.md, ZVC §5.3
//! * [`synthetic`]  deterministic (ChaCha-seeded) generators, incl. ReLU-like tensors (§5.2)
//! * [`file`](mod@file)       raw little-endian traces and YAML trace descriptions; byte traces
//!   (.gz, .npy, .safetensors)
//! * [`safetensors`] the `.safetensors` tensor container (validated header, tensors by name)
//! * [`lines`]      seeded cache-line generators for adaptive link compression (profiles,
//!   per-benchmark mixes calibrated to the paper, phase traces, entropy)
//! * [`lookups`]    field-lookup patterns for the metadata caches (streaming, strided,
//!   random, hot set)
//! * [`sectors`]    32 B sector classes for the Base+XOR engine (docs/FORMATS.md, Base+XOR §5)

pub mod blocks;
pub mod entries;
pub mod file;
pub mod lines;
pub mod lookups;
pub mod npy;
pub mod safetensors;
pub mod sectors;
pub mod strategies;
pub mod synthetic;

use serde::{Deserialize, Serialize};

/// Memory layout of a 4-D activation tensor (or a flat element array).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum Layout {
    /// Batch, channel, height, width (Caffe's native layout).
    Nchw,
    /// Batch, height, width, channel.
    Nhwc,
    /// Channel, height, width, batch.
    Chwn,
    /// No tensor structure.
    #[default]
    Flat,
}

impl Layout {
    /// Lower-case name as used in YAML and on the command line.
    pub fn name(&self) -> &'static str {
        match self {
            Layout::Nchw => "nchw",
            Layout::Nhwc => "nhwc",
            Layout::Chwn => "chwn",
            Layout::Flat => "flat",
        }
    }

    /// Permute a tensor stored in NCHW order with logical shape `[n, c, h, w]` into this
    /// layout (`Flat` and `Nchw` return a copy).
    ///
    /// # Panics
    /// If `data.len()` differs from the shape product (a programming error, not user input).
    pub fn from_nchw(&self, data: &[u32], shape: [usize; 4]) -> Vec<u32> {
        let [n, c, h, w] = shape;
        assert_eq!(
            data.len(),
            n * c * h * w,
            "from_nchw: data length vs shape {shape:?}"
        );
        let mut out = vec![0u32; data.len()];
        match self {
            Layout::Nchw | Layout::Flat => out.copy_from_slice(data),
            Layout::Nhwc | Layout::Chwn => {
                for ni in 0..n {
                    for ci in 0..c {
                        for hi in 0..h {
                            for wi in 0..w {
                                let src = ((ni * c + ci) * h + hi) * w + wi;
                                let dst = if *self == Layout::Nhwc {
                                    ((ni * h + hi) * w + wi) * c + ci
                                } else {
                                    ((ci * h + hi) * w + wi) * n + ni
                                };
                                out[dst] = data[src];
                            }
                        }
                    }
                }
            }
        }
        out
    }
}
