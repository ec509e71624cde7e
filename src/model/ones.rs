//! Ones, toggles and I/O-energy accounting for link encodings (docs/FORMATS.md, Base+XOR §1, §2.0,
//! §2.7, §4), backing `hwzip eval --engine base-xor`.
//!
//! * **Ones**: logical 1s on the pins (data and DBI flags). On a POD link a 1 draws static
//!   current for the bit time: 1.82 pJ extra per 1 at GDDR5X 10 Gb/s (parameter).
//! * **Toggles**: per-wire transitions between consecutive beats (32 DQ wires and, when DBI
//!   is on, the beat's DBI wires). [`ToggleMode::Stream`]: transactions back to back, every
//!   wire starting at 0; [`ToggleMode::Idle`]: the bus idles at logical 0 (V_DD on a POD link)
//!   between transactions, so entering and leaving each transaction counts too (FORMATS §2.7:
//!   "inter-transaction/idle handling as a parameter").
//! * **Mixed sectors** (Fig. 14): sectors with both zero and non-zero 32-bit words.
//!
//! Every accounted transaction is also decoded and compared with the input, so a table is
//! only printed for encodings that round-trip.

use super::base_xor::{BaseXorParams, Scheme};
use super::dbi::{DbiGroup, LinkCodec};
use super::ModelError;
use serde::Serialize;

/// Default extra energy of one transmitted 1, pJ (GDDR5X POD at 10 Gb/s, FORMATS §1).
pub const PJ_PER_ONE: f64 = 1.82;

/// How toggles between transactions are counted.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ToggleMode {
    /// Transactions back to back on the wires (the most favourable case for similar data).
    #[default]
    Stream,
    /// The bus returns to idle (all 0) between transactions.
    Idle,
}

/// Totals of one encoding over a trace.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct LinkStats {
    /// Encoding description.
    pub scheme: String,
    /// Transactions.
    pub sectors: u64,
    /// Ones on data wires.
    pub data_ones: u64,
    /// Ones on DBI wires.
    pub flag_ones: u64,
    /// Wire transitions between consecutive beats (data and DBI wires).
    pub toggles: u64,
    /// Extra I/O energy of the ones, pJ.
    pub energy_pj: f64,
}

impl LinkStats {
    /// All ones (data + DBI).
    pub fn ones(&self) -> u64 {
        self.data_ones + self.flag_ones
    }
}

/// Accounts `words` (a whole number of transactions) through `codec`, checking that every
/// transaction decodes back to its input.
pub fn account(
    codec: &LinkCodec,
    words: &[u32],
    pj_per_one: f64,
    toggles: ToggleMode,
) -> Result<LinkStats, ModelError> {
    codec.validate()?;
    let tw = (codec.bx.t_bytes / 4) as usize;
    if !words.len().is_multiple_of(tw) {
        return Err(ModelError::BadByteLength {
            len: words.len() * 4,
            elem_bytes: tw * 4,
        });
    }
    let fpb = codec.dbi_group.flags_per_beat();
    let fmask = if fpb == 0 { 0 } else { (1u64 << fpb) - 1 };
    let mut st = LinkStats {
        scheme: codec.describe(),
        ..LinkStats::default()
    };
    let (mut prev_dq, mut prev_dbi) = (0u32, 0u64);
    for (i, t) in words.chunks_exact(tw).enumerate() {
        let wire = codec.encode_words(t)?;
        let back = codec.decode_words(&wire)?;
        if back != t {
            return Err(ModelError::Corrupt(format!(
                "{}: transaction {} does not round-trip",
                st.scheme, i
            )));
        }
        st.sectors += 1;
        if toggles == ToggleMode::Idle {
            prev_dq = 0;
            prev_dbi = 0;
        }
        st.data_ones += super::base_xor::ones(&wire.words);
        st.flag_ones += wire.flags.count_ones() as u64;
        for (k, &dq) in wire.words.iter().enumerate() {
            let dbi = (wire.flags >> (k as u32 * fpb)) & fmask;
            st.toggles += (dq ^ prev_dq).count_ones() as u64 + (dbi ^ prev_dbi).count_ones() as u64;
            prev_dq = dq;
            prev_dbi = dbi;
        }
        if toggles == ToggleMode::Idle {
            st.toggles += prev_dq.count_ones() as u64 + prev_dbi.count_ones() as u64;
        }
    }
    st.energy_pj = st.ones() as f64 * pj_per_one;
    Ok(st)
}

/// Fraction of transactions whose 32-bit words are partly zero and partly non-zero (Fig. 14).
pub fn mixed_ratio(words: &[u32], t_words: usize) -> f64 {
    let chunks = words.chunks_exact(t_words.max(1));
    let n = chunks.len();
    if n == 0 {
        return 0.0;
    }
    let mixed = chunks
        .filter(|c| c.contains(&0) && c.iter().any(|&w| w != 0))
        .count();
    mixed as f64 / n as f64
}

/// The encodings of the paper's comparison (Figs. 11, 12, 15), in table order: raw, 2/4/8-byte
/// Base+XOR with ZDR, Universal without and with ZDR, 4/2/1-byte DBI alone, Universal + ZDR +
/// byte DBI; then the (not in the paper) "skip zero base" ZDR extension of FORMATS §2.2, which
/// keeps all-zero data at zero ones.
pub fn paper_schemes() -> Vec<LinkCodec> {
    let c = |bx: BaseXorParams, g: u32| LinkCodec {
        bx,
        dbi_group: DbiGroup(g),
    };
    vec![
        c(BaseXorParams::none(), 0),
        c(BaseXorParams::nbyte(2, true), 0),
        c(BaseXorParams::nbyte(4, true), 0),
        c(BaseXorParams::nbyte(8, true), 0),
        c(BaseXorParams::universal(3, false), 0),
        c(BaseXorParams::universal(3, true), 0),
        c(BaseXorParams::none(), 32),
        c(BaseXorParams::none(), 16),
        c(BaseXorParams::none(), 8),
        c(BaseXorParams::universal(3, true), 8),
        c(
            BaseXorParams {
                zdr_skip_zero_base: true,
                ..BaseXorParams::universal(3, true)
            },
            0,
        ),
    ]
}

/// Side-by-side accounting of several encodings over one trace.
#[derive(Clone, Debug, Serialize)]
pub struct Comparison {
    /// Trace label.
    pub trace: String,
    /// Transactions.
    pub sectors: u64,
    /// Fig. 14 mixed-data ratio of the trace.
    pub mixed_ratio: f64,
    /// pJ per 1 used for the energy column.
    pub pj_per_one: f64,
    /// How toggles between transactions were counted.
    pub toggle_mode: ToggleMode,
    /// One row per encoding; the first is the raw baseline.
    pub rows: Vec<LinkStats>,
}

/// Accounts `words` under every codec of `schemes` (the first should be raw data). `words` is
/// zero-padded to a whole number of 32 B transactions.
pub fn compare(
    trace: &str,
    words: &[u32],
    schemes: &[LinkCodec],
    pj_per_one: f64,
    toggle_mode: ToggleMode,
) -> Result<Comparison, ModelError> {
    let mut w = words.to_vec();
    w.resize(w.len().div_ceil(8) * 8, 0);
    let rows = schemes
        .iter()
        .map(|c| account(c, &w, pj_per_one, toggle_mode))
        .collect::<Result<Vec<_>, _>>()?;
    Ok(Comparison {
        trace: trace.to_string(),
        sectors: (w.len() / 8) as u64,
        mixed_ratio: mixed_ratio(&w, 8),
        pj_per_one,
        toggle_mode,
        rows,
    })
}

fn pct(new: u64, base: u64) -> String {
    if base == 0 {
        if new == 0 {
            "±0.0%".into()
        } else {
            "+∞".into()
        }
    } else {
        format!("{:+.1}%", (new as f64 / base as f64 - 1.0) * 100.0)
    }
}

impl Comparison {
    /// Normalised ones (encoded / raw) of row `i`.
    pub fn norm_ones(&self, i: usize) -> f64 {
        let base = self.rows[0].ones().max(1) as f64;
        self.rows[i].ones() as f64 / base
    }

    /// Markdown table: ones, toggles and energy per encoding, changes against raw.
    pub fn to_markdown(&self) -> String {
        let base = &self.rows[0];
        let mut s = format!(
            "trace: {} ({} sectors of 32 B, {:.1}% mixed zero/non-zero sectors)\n\n",
            self.trace,
            self.sectors,
            self.mixed_ratio * 100.0
        );
        s.push_str(
            "| encoding | ones | ones/sector | Δ ones | DBI-flag ones | toggles | Δ toggles | I/O energy of ones |\n\
             |---|---:|---:|---:|---:|---:|---:|---:|\n",
        );
        for r in &self.rows {
            s.push_str(&format!(
                "| {} | {} | {:.2} | {} | {} | {} | {} | {:.3} nJ ({:.1} pJ/sector) |\n",
                if r.scheme == "none" { "raw" } else { &r.scheme },
                r.ones(),
                r.ones() as f64 / r.sectors.max(1) as f64,
                pct(r.ones(), base.ones()),
                r.flag_ones,
                r.toggles,
                pct(r.toggles, base.toggles),
                r.energy_pj / 1000.0,
                r.energy_pj / r.sectors.max(1) as f64
            ));
        }
        s.push_str(&format!(
            "\nones cost {} pJ each (POD, FORMATS §1); toggles count per-wire transitions between \
             consecutive beats (32 DQ + DBI wires, {}).\n",
            self.pj_per_one,
            match self.toggle_mode {
                ToggleMode::Stream => "transactions back to back",
                ToggleMode::Idle => "bus idle at 0 between transactions",
            }
        ));
        s
    }
}

/// Summary over several traces: normalised ones per encoding and their arithmetic mean (the
/// paper's "average" over applications), as Markdown.
pub fn summary_markdown(cmps: &[Comparison]) -> String {
    let Some(first) = cmps.first() else {
        return String::new();
    };
    let names: Vec<String> = first
        .rows
        .iter()
        .map(|r| {
            if r.scheme == "none" {
                "raw".into()
            } else {
                r.scheme.clone()
            }
        })
        .collect();
    let mut s = String::from("| trace |");
    for n in &names[1..] {
        s.push_str(&format!(" {} |", n));
    }
    s.push_str("\n|---|");
    s.push_str(&"---:|".repeat(names.len() - 1));
    s.push('\n');
    let mut sums = vec![0f64; names.len()];
    for c in cmps {
        s.push_str(&format!("| {} |", c.trace));
        for (i, sum) in sums.iter_mut().enumerate().skip(1) {
            let n = c.norm_ones(i);
            *sum += n;
            s.push_str(&format!(" {:+.1}% |", (n - 1.0) * 100.0));
        }
        s.push('\n');
    }
    s.push_str("| **mean** |");
    for sum in &sums[1..] {
        s.push_str(&format!(
            " **{:+.1}%** |",
            (sum / cmps.len() as f64 - 1.0) * 100.0
        ));
    }
    s.push_str(
        "\n\nΔ ones against raw data (DBI flags included); mean = arithmetic mean of normalised \
         ones over the traces, as the paper averages over applications.\n",
    );
    s
}

/// Whether a codec is the raw baseline.
pub fn is_raw(c: &LinkCodec) -> bool {
    c.bx.scheme == Scheme::None && !c.dbi_group.enabled()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accounting_matches_worked_example_4() {
        let w = [
            0x400e617c, 0x400e64c3, 0x400e69ad, 0x400e76c9, 0x400e88ce, 0x400e978d, 0x400ea993,
            0x400eb9f5,
        ];
        let c = compare("ex4", &w, &paper_schemes(), PJ_PER_ONE, ToggleMode::Stream).unwrap();
        let by = |s: &str| c.rows.iter().find(|r| r.scheme == s).unwrap().clone();
        assert_eq!(by("none").ones(), 100);
        assert_eq!(by("universal s3 zdr32").ones(), 66);
        assert_eq!(by("4-byte zdr32").ones(), 69);
        assert_eq!(by("8-byte zdr32").ones(), 61);
        let u = by("universal s3 zdr32 + dbi8");
        assert_eq!((u.data_ones, u.flag_ones), (46, 6));
        assert_eq!(by("dbi8 only").ones(), 91);
        assert!((by("none").energy_pj - 182.0).abs() < 1e-9);
        assert_eq!(c.mixed_ratio, 0.0);
        assert!(c.to_markdown().contains("| raw | 100 |"));
        assert!(summary_markdown(&[c.clone(), c]).contains("**mean**"));
    }

    #[test]
    fn toggles_count_transitions_between_beats() {
        let raw = LinkCodec {
            bx: BaseXorParams::none(),
            dbi_group: DbiGroup::OFF,
        };
        // 0 → ffffffff → 0 … : 32 toggles per beat after the first (wires start at 0).
        let w: Vec<u32> = (0..8)
            .map(|i| if i % 2 == 0 { u32::MAX } else { 0 })
            .collect();
        let s = account(&raw, &w, 1.0, ToggleMode::Stream).unwrap();
        assert_eq!(s.toggles, 8 * 32);
        assert_eq!(s.ones(), 4 * 32);
        // Idle: the same, plus nothing on leaving (the last beat is 0); two sectors of
        // [ffffffff, 0 ×7] toggle 2 × 64 with idle wires, 32 + 32 + 32 back to back.
        let mut two = vec![0u32; 16];
        two[0] = u32::MAX;
        two[8] = u32::MAX;
        assert_eq!(
            account(&raw, &two, 1.0, ToggleMode::Idle).unwrap().toggles,
            128
        );
        assert_eq!(
            account(&raw, &two, 1.0, ToggleMode::Stream)
                .unwrap()
                .toggles,
            128
        );
        let mut last = vec![0u32; 16];
        last[7] = u32::MAX;
        last[15] = u32::MAX;
        assert_eq!(
            account(&raw, &last, 1.0, ToggleMode::Idle).unwrap().toggles,
            128
        );
        assert_eq!(
            account(&raw, &last, 1.0, ToggleMode::Stream)
                .unwrap()
                .toggles,
            96
        );
        assert!(account(&raw, &w[..5], 1.0, ToggleMode::Stream).is_err());
        assert!(is_raw(&raw));
    }

    #[test]
    fn mixed_sectors() {
        let mut w = vec![1u32; 16];
        w[3] = 0;
        assert_eq!(mixed_ratio(&w, 8), 0.5);
        assert_eq!(mixed_ratio(&[], 8), 0.0);
    }
}
