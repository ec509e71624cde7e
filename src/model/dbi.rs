//! DC Dynamic Bus Inversion (DBI-DC) golden model and the full Base+XOR link pipeline
//! (docs/FORMATS.md, Base+XOR §2.4, §2.5).
//!
//! DBI-DC works per group of `group_bits` wires of a 32-bit beat: a group with more than
//! `group_bits / 2` ones is sent inverted with its flag set (a flag of 1 is driven as 0 V, so it
//! costs energy and is counted). A tie (exactly half) is not inverted.
//!
//! Lane mapping (§2.4): group l of beat k covers bits `[G·l + G−1 : G·l]` of word W\[k\]; its
//! flag is bit `k · (32/G) + l` of the flag word (so for byte DBI, bits `4k..4k+3` are beat k's
//! DBI\[3:0\]).
//!
//! Pipeline (§2.5): write = Base+XOR encode, then DBI; read = un-DBI, then Base+XOR decode.

use super::base_xor::{self, BaseXorParams};
use super::ModelError;
use serde::{Deserialize, Serialize};

/// DBI group width in bits: 0 (DBI off), 8 (GDDR5X byte lanes), 16 or 32.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(transparent)]
pub struct DbiGroup(pub u32);

impl Default for DbiGroup {
    /// Byte DBI, as in GDDR5X.
    fn default() -> Self {
        DbiGroup(8)
    }
}

impl DbiGroup {
    /// DBI off.
    pub const OFF: DbiGroup = DbiGroup(0);

    /// Checks the value.
    pub fn validate(self) -> Result<(), ModelError> {
        if !matches!(self.0, 0 | 8 | 16 | 32) {
            return Err(ModelError::param(
                "dbi_group",
                self.0,
                "allowed values are 0 (off), 8, 16, 32",
            ));
        }
        Ok(())
    }

    /// Whether DBI is on.
    pub fn enabled(self) -> bool {
        self.0 != 0
    }

    /// Flags per 32-bit beat.
    pub fn flags_per_beat(self) -> u32 {
        32u32.checked_div(self.0).unwrap_or(0)
    }

    fn mask(self) -> u32 {
        if self.0 == 32 {
            u32::MAX
        } else {
            (1u32 << self.0) - 1
        }
    }
}

/// DBI-DC encode of one beat: (wire data, flags of this beat, bit l = group l).
pub fn encode_beat(g: DbiGroup, w: u32) -> (u32, u32) {
    if !g.enabled() {
        return (w, 0);
    }
    let mut out = w;
    let mut flags = 0;
    for l in 0..g.flags_per_beat() {
        let sh = l * g.0;
        let grp = (w >> sh) & g.mask();
        if grp.count_ones() > g.0 / 2 {
            out ^= g.mask() << sh;
            flags |= 1 << l;
        }
    }
    (out, flags)
}

/// DBI decode of one beat.
pub fn decode_beat(g: DbiGroup, w: u32, flags: u32) -> u32 {
    let mut out = w;
    for l in 0..g.flags_per_beat() {
        if flags >> l & 1 == 1 {
            out ^= g.mask() << (l * g.0);
        }
    }
    out
}

/// DBI-DC encode of a run of beats: (wire data, flag word; beat k's flags at
/// `k · flags_per_beat`). At most 64 flags (16 beats of byte DBI).
pub fn encode_words(g: DbiGroup, words: &[u32]) -> (Vec<u32>, u64) {
    let fpb = g.flags_per_beat();
    let mut flags = 0u64;
    let out = words
        .iter()
        .enumerate()
        .map(|(k, &w)| {
            let (d, f) = encode_beat(g, w);
            flags |= (f as u64) << (k as u32 * fpb);
            d
        })
        .collect();
    (out, flags)
}

/// DBI decode of a run of beats.
pub fn decode_words(g: DbiGroup, words: &[u32], flags: u64) -> Vec<u32> {
    let fpb = g.flags_per_beat();
    let fmask = if fpb == 0 { 0 } else { (1u64 << fpb) - 1 };
    words
        .iter()
        .enumerate()
        .map(|(k, &w)| decode_beat(g, w, ((flags >> (k as u32 * fpb)) & fmask) as u32))
        .collect()
}

/// The whole link encoding of FORMATS §2.5: a Base+XOR transform followed by DBI.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct LinkCodec {
    /// The Base+XOR transform.
    pub bx: BaseXorParams,
    /// DBI group width (0 = off).
    pub dbi_group: DbiGroup,
}

/// One encoded transaction as it crosses the pins: data words (beats) and DBI flags.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Wire {
    /// 32-bit beats (`t_bytes / 4`).
    pub words: Vec<u32>,
    /// DBI flags (beat k's at `k · flags_per_beat`).
    pub flags: u64,
}

impl Wire {
    /// Logical ones on the pins (data and flags).
    pub fn ones(&self) -> u64 {
        base_xor::ones(&self.words) + self.flags.count_ones() as u64
    }
}

impl LinkCodec {
    /// Checks both parts; DBI flags of one transaction must fit in 64 bits.
    pub fn validate(&self) -> Result<(), ModelError> {
        self.bx.validate()?;
        self.dbi_group.validate()?;
        if self.bx.t_bytes / 4 * self.dbi_group.flags_per_beat() > 64 {
            return Err(ModelError::param(
                "dbi_group",
                self.dbi_group.0,
                "more than 64 DBI flags per transaction",
            ));
        }
        Ok(())
    }

    /// Write path: Base+XOR, then DBI.
    pub fn encode_words(&self, words: &[u32]) -> Result<Wire, ModelError> {
        self.validate()?;
        let bx = base_xor::encode_words(&self.bx, words)?;
        let (words, flags) = encode_words(self.dbi_group, &bx);
        Ok(Wire { words, flags })
    }

    /// Read path: un-DBI, then Base+XOR decode.
    pub fn decode_words(&self, wire: &Wire) -> Result<Vec<u32>, ModelError> {
        self.validate()?;
        let fpb = self.dbi_group.flags_per_beat();
        let used = wire.words.len() as u32 * fpb;
        if used < 64 && wire.flags >> used != 0 {
            return Err(ModelError::Corrupt(format!(
                "DBI flags {:#x} set beyond the {} flags of a transaction",
                wire.flags, used
            )));
        }
        let bx = decode_words(self.dbi_group, &wire.words, wire.flags);
        base_xor::decode_words(&self.bx, &bx)
    }

    /// Write path on a byte sector.
    pub fn encode(&self, sector: &[u8]) -> Result<Wire, ModelError> {
        if !sector.len().is_multiple_of(4) {
            return Err(ModelError::BadByteLength {
                len: sector.len(),
                elem_bytes: 4,
            });
        }
        self.encode_words(&base_xor::words_le(sector))
    }

    /// Read path to a byte sector.
    pub fn decode(&self, wire: &Wire) -> Result<Vec<u8>, ModelError> {
        Ok(base_xor::bytes_le(&self.decode_words(wire)?))
    }

    /// Short description (`universal s3 zdr32 + dbi8`).
    pub fn describe(&self) -> String {
        let bx = self.bx.describe();
        match (self.bx.scheme, self.dbi_group.enabled()) {
            (base_xor::Scheme::None, true) => format!("dbi{} only", self.dbi_group.0),
            (_, true) => format!("{} + dbi{}", bx, self.dbi_group.0),
            (_, false) => bx,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn tie_is_not_inverted_and_flags_are_counted() {
        let g = DbiGroup(8);
        assert_eq!(encode_beat(g, 0x0000_000f), (0x0000_000f, 0));
        assert_eq!(encode_beat(g, 0x0000_001f), (0x0000_00e0, 1));
        assert_eq!(encode_beat(g, 0xff00_0000), (0x0000_0000, 0b1000));
        let (w, f) = encode_words(g, &[0, 0xffff_ffff]);
        assert_eq!((w, f), (vec![0, 0], 0xf0));
        assert_eq!(encode_beat(DbiGroup(32), 0x0001_ffff), (0xfffe_0000, 1));
        assert_eq!(encode_beat(DbiGroup(16), 0x00ff_01ff), (0x00ff_fe00, 1));
    }

    proptest! {
        #[test]
        fn dbi_invariant_and_round_trip(words in proptest::collection::vec(any::<u32>(), 8),
                                        gi in 0usize..4) {
            let g = DbiGroup([0, 8, 16, 32][gi]);
            let (enc, flags) = encode_words(g, &words);
            prop_assert_eq!(decode_words(g, &enc, flags), words.clone());
            if g.enabled() {
                let fpb = g.flags_per_beat();
                for (k, w) in enc.iter().enumerate() {
                    for l in 0..fpb {
                        let grp = (w >> (l * g.0)) & g.mask();
                        let flag = (flags >> (k as u32 * fpb + l)) & 1;
                        // n + 1 pins carry at most n/2 ones in the data, and (for n = 8) at
                        // most 4 ones including the flag.
                        prop_assert!(grp.count_ones() <= g.0 / 2);
                        if g.0 == 8 {
                            prop_assert!(grp.count_ones() + flag as u32 <= 4);
                        }
                    }
                }
            }
        }
    }
}
