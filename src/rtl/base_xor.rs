//! Base+XOR Transfer generators (HPCA'18; spec `base-xor.md` §3, §6).
//!
//! Parameters are fixed at generation time (there is no metadata on the link: the stored data
//! depends on the scheme, spec §2.5).

use crate::model::base_xor::{BaseXorParams, HalfOrder, Scheme};
use crate::model::dbi::{DbiGroup, LinkCodec};
use serde::{Deserialize, Serialize};

/// Decoder structure for chains of ZDR decodes (Universal + ZDR).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, Default)]
#[serde(rename_all = "kebab-case")]
pub enum DecStyle {
    /// One ZDR decode per tree level, each waiting for its decoded partner (the paper's
    /// structure: S levels for Universal, T/N − 1 for N-byte).
    Serial,
    /// Carry-select: each level's ZDR comparisons are evaluated for every candidate value of
    /// the partner in parallel, then selected (Universal only; N-byte falls back to serial).
    #[default]
    Speculative,
}

/// Parameters of the Base+XOR hardware: the transform and DBI of the golden model
/// ([`LinkCodec`]) plus the micro-architecture knobs. Flat in YAML (`base_xor:` section).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct BaseXorRtlParams {
    /// Scheme: `none`, `nbyte`, `universal`.
    pub scheme: Scheme,
    /// Transaction (sector) size in bytes: 16, 32, 64.
    pub t_bytes: u32,
    /// N-byte element size: 2, 4, 8.
    pub n_bytes: u32,
    /// N-byte: XOR with element 0 instead of the left neighbour.
    pub fixed_base: bool,
    /// Universal stages.
    pub stages: u32,
    /// Zero Data Remapping.
    pub zdr: bool,
    /// ZDR chunk width (16, 32, 64); null = spec default.
    pub zdr_bits: Option<u32>,
    /// ZDR constant; null = `1 << (zdr_bits − 2)`.
    pub zdr_const: Option<u64>,
    /// Extension: no remapping when the base chunk is zero.
    pub zdr_skip_zero_base: bool,
    /// Halfword order at 16-bit granularity.
    pub half_order: HalfOrder,
    /// DBI-DC group width: 0 (off), 8, 16, 32.
    pub dbi_group: u32,
    /// Register stage at the output of each path (throughput stays one sector per cycle).
    pub pipe: bool,
    /// Decoder structure.
    pub dec_style: DecStyle,
}

impl Default for BaseXorRtlParams {
    /// The spec's full pipeline (§2.5): Universal T = 32 B, S = 3, ZDR, byte DBI, registered.
    fn default() -> Self {
        Self::from_codec(&LinkCodec::default())
    }
}

impl BaseXorRtlParams {
    /// Hardware parameters for a golden-model codec (registered, speculative decoder).
    pub fn from_codec(c: &LinkCodec) -> Self {
        let b = c.bx;
        BaseXorRtlParams {
            scheme: b.scheme,
            t_bytes: b.t_bytes,
            n_bytes: b.n_bytes,
            fixed_base: b.fixed_base,
            stages: b.stages,
            zdr: b.zdr,
            zdr_bits: b.zdr_bits,
            zdr_const: b.zdr_const,
            zdr_skip_zero_base: b.zdr_skip_zero_base,
            half_order: b.half_order,
            dbi_group: c.dbi_group.0,
            pipe: true,
            dec_style: DecStyle::default(),
        }
    }

    /// The golden model this hardware must match bit for bit.
    pub fn model(&self) -> LinkCodec {
        LinkCodec {
            bx: BaseXorParams {
                scheme: self.scheme,
                t_bytes: self.t_bytes,
                n_bytes: self.n_bytes,
                fixed_base: self.fixed_base,
                stages: self.stages,
                zdr: self.zdr,
                zdr_bits: self.zdr_bits,
                zdr_const: self.zdr_const,
                zdr_skip_zero_base: self.zdr_skip_zero_base,
                half_order: self.half_order,
            },
            dbi_group: DbiGroup(self.dbi_group),
        }
    }

    /// Checks the parameter set (the model's rules).
    pub fn validate(&self) -> Result<(), String> {
        self.model().validate().map_err(|e| e.to_string())
    }

    /// Human-readable parameter line for headers and reports.
    pub fn describe(&self) -> String {
        format!(
            "{}{}{}",
            self.model().describe(),
            if self.pipe { " pipe" } else { "" },
            if self.zdr && self.scheme == Scheme::Universal {
                match self.dec_style {
                    DecStyle::Serial => " dec=serial",
                    DecStyle::Speculative => " dec=speculative",
                }
            } else {
                ""
            }
        )
    }

    /// Bytes per transaction (the datapath width of both paths).
    pub fn beat_bytes(&self) -> u32 {
        self.t_bytes
    }
}
