//! Parameters of the adaptive link compression hardware (Tavana et al., IPDPS'19; spec
//! `adaptive-link-compression.md` §3, §6), the `adaptive:` section of the YAML configuration.
//!
//! The units themselves live one file per algorithm: [`super::bdi`] (`bdi_comp`,
//! `bdi_decomp`). FPC, C-Pack+Z, `penalty_select` and `adaptive_ctrl` are not built yet.

use crate::model::bdi::{BaseRule, BdiParams};
use serde::{Deserialize, Serialize};

/// Spec reference printed in every module header.
pub const SPEC: &str = "shared/spec/adaptive-link-compression.md";

/// Parameters of the adaptive link compression hardware. Flat in YAML (`adaptive:` section).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct AdaptiveRtlParams {
    /// Line size in bytes: 32, 64 (default, the paper) or 128.
    pub line_bytes: usize,
    /// BDI base rule: `element0` (the paper, default) or `first-non-immediate`.
    pub bdi_base_rule: BaseRule,
}

impl Default for AdaptiveRtlParams {
    fn default() -> Self {
        AdaptiveRtlParams {
            line_bytes: 64,
            bdi_base_rule: BaseRule::Element0,
        }
    }
}

impl AdaptiveRtlParams {
    /// Checks the parameter set; the message names the bad value and what is allowed.
    pub fn validate(&self) -> Result<(), String> {
        if ![32, 64, 128].contains(&self.line_bytes) {
            return Err(format!(
                "line_bytes = {} is not supported (allowed: 32, 64, 128)",
                self.line_bytes
            ));
        }
        Ok(())
    }

    /// Line size in bits (the payload bus width).
    pub fn line_bits(&self) -> u32 {
        self.line_bytes as u32 * 8
    }

    /// Width of the compressed-size fields (`len`, bits): `clog2(line_bits + 1)`.
    pub fn len_bits(&self) -> u32 {
        crate::hdl::clog2(self.line_bits() as u64 + 1)
    }

    /// The matching BDI golden-model parameters.
    pub fn bdi(&self) -> BdiParams {
        BdiParams {
            line_bytes: self.line_bytes,
            base_rule: self.bdi_base_rule,
        }
    }

    /// Human-readable parameter line for headers and reports.
    pub fn describe(&self) -> String {
        format!(
            "line_bytes={} bdi_base_rule={}",
            self.line_bytes,
            match self.bdi_base_rule {
                BaseRule::Element0 => "element0",
                BaseRule::FirstNonImmediate => "first-non-immediate",
            }
        )
    }
}
