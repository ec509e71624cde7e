//! The line-codec interface shared by the per-line compressors (BDI, FPC, C-Pack(+Z), BPC,
//! ZVC):
//! one cache line in, one MSB-first bit stream out, each codec configured by its own
//! parameter struct, which is the codec value itself.
//!
//! `size_bits` is the size-only fast path (no stream is built); `compress` is the bit-exact
//! reference, and `tests::size_only_equals_stream_length_on_real_data` checks that the two
//! agree.

use super::bdi::{self, BdiParams};
use super::bpc::{self, BpcParams};
use super::cpack::{self, CpackParams};
use super::fpc::{self, FpcMode, FpcParams};
use super::zvc_line::{self, ZvcLineParams};
use super::ModelError;

/// A compressed line as sent.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Coded {
    /// The stream (`nbits.div_ceil(8)` bytes, zero-padded); the raw line when not compressed.
    pub bits: Vec<u8>,
    /// Its length in bits.
    pub nbits: usize,
    /// Whether the codec compressed the line (false: `bits` is the raw line, which a link
    /// sends with its "uncompressed" code).
    pub compressed: bool,
}

/// A per-line compressor with a decodable bit stream (docs/FORMATS.md conventions: MSB-first,
/// zero-padded to whole bytes; the raw line when compression does not make it smaller).
pub trait LineCodec: Send + Sync {
    /// Short name (`bdi`, `fpc`, `cpack`).
    fn name(&self) -> &'static str;
    /// Line size in bytes.
    fn line_bytes(&self) -> usize;
    /// Bit-exact compression: the stream as sent.
    fn compress(&self, line: &[u8]) -> Result<Coded, ModelError>;
    /// Decompresses a stream of exactly `nbits` bits.
    fn decompress(&self, bits: &[u8], nbits: usize) -> Result<Vec<u8>, ModelError>;
    /// Size in bits of the line as sent, without building the stream; equals
    /// `compress(line)?.1` whenever `compress` is defined.
    fn size_bits(&self, line: &[u8]) -> Result<usize, ModelError>;
    /// What a hardware decompressor makes of a line-sized payload (a stream left-aligned,
    /// whatever follows it ignored): the line and the bits used, or the error it flags.
    fn decompress_prefix(&self, payload: &[u8]) -> Result<(Vec<u8>, usize), ModelError>;
    /// A line-sized payload for decompressor stimulus, made from a valid stream of `nbits`
    /// bits: half the time random bytes, otherwise the stream with 1-3 of its bits flipped.
    /// Deterministic in `rng`; feed it to [`LineCodec::decompress_prefix`] for the expected
    /// outcome.
    fn corrupt(&self, bits: &[u8], nbits: usize, rng: &mut dyn rand::RngCore) -> Vec<u8> {
        use rand::Rng;
        let lb = self.line_bytes();
        if rng.gen_bool(0.5) {
            return (0..lb).map(|_| rng.gen()).collect();
        }
        let mut b = bits.to_vec();
        b.resize(lb, 0);
        let n = nbits.clamp(1, 8 * lb);
        for _ in 0..rng.gen_range(1..=3) {
            let bit = rng.gen_range(0..n);
            b[bit / 8] ^= 0x80 >> (bit % 8);
        }
        b
    }
}

/// Test helper: `line` through `codec` as every line codec must treat it: the size path
/// agrees with the stream, the bytes hold exactly the bits, the stream decodes to the line,
/// and a compressed stream also decodes as a prefix using all its bits.
#[cfg(test)]
pub(crate) fn assert_round_trip(codec: &dyn LineCodec, line: &[u8]) -> Coded {
    let c = codec.compress(line).unwrap();
    assert_eq!(codec.size_bits(line).unwrap(), c.nbits);
    assert_eq!(c.bits.len(), c.nbits.div_ceil(8));
    assert_eq!(codec.decompress(&c.bits, c.nbits).unwrap(), line);
    if c.compressed {
        let (l, used) = codec.decompress_prefix(&c.bits).unwrap();
        assert_eq!((l.as_slice(), used), (line, c.nbits));
    }
    c
}

/// Each codec's module has the same free functions (`compress`, `decompress`, `size_bits`,
/// `decompress_prefix`) taking its parameter struct; the trait forwards to them.
macro_rules! line_codec {
    ($params:ty, $name:literal, $m:ident, |$c:ident| $compressed:expr) => {
        impl LineCodec for $params {
            fn name(&self) -> &'static str {
                $name
            }
            fn line_bytes(&self) -> usize {
                self.line_bytes
            }
            fn compress(&self, line: &[u8]) -> Result<Coded, ModelError> {
                $m::compress(self, line).map(|$c| Coded {
                    compressed: $compressed,
                    bits: $c.bits,
                    nbits: $c.nbits,
                })
            }
            fn decompress(&self, bits: &[u8], nbits: usize) -> Result<Vec<u8>, ModelError> {
                $m::decompress(self, bits, nbits)
            }
            fn size_bits(&self, line: &[u8]) -> Result<usize, ModelError> {
                $m::size_bits(self, line)
            }
            fn decompress_prefix(&self, payload: &[u8]) -> Result<(Vec<u8>, usize), ModelError> {
                $m::decompress_prefix(self, payload)
            }
        }
    };
}

line_codec!(BdiParams, "bdi", bdi, |c| c.is_compressed());
// FPC: `compress` is defined in Original mode only (the paper's size accounting has no
// stream).
line_codec!(FpcParams, "fpc", fpc, |c| c.compressed);
line_codec!(CpackParams, "cpack", cpack, |c| c.compressed);
line_codec!(BpcParams, "bpc", bpc, |c| c.compressed);

line_codec!(ZvcLineParams, "zvc", zvc_line, |c| c.compressed);

/// The codecs at their defaults plus their variants that change the size path (base rules,
/// line sizes, FPC's original format, C-Pack's code tables, BPC's symbol widths; BDI, FPC,
/// C-Pack and BPC also on the proofs' 16 B lines), for tests and benchmarks.
pub fn variants() -> Vec<Box<dyn LineCodec>> {
    let mut v: Vec<Box<dyn LineCodec>> = Vec::new();
    for lb in [32, 64, 128] {
        for rule in [bdi::BaseRule::Element0, bdi::BaseRule::FirstNonImmediate] {
            v.push(Box::new(BdiParams {
                line_bytes: lb,
                base_rule: rule,
            }));
        }
        v.push(Box::new(FpcParams {
            mode: FpcMode::Original,
            line_bytes: lb,
        }));
        for codes in [cpack::CodeTable::Paper, cpack::CodeTable::Original] {
            v.push(Box::new(CpackParams {
                codes,
                line_bytes: lb,
                ..CpackParams::default()
            }));
        }
        v.push(Box::new(ZvcLineParams {
            line_bytes: lb,
            word_bits: if lb == 128 { 32 } else { 8 },
        }));
        // BPC's narrow symbols (the proofs' 9 and 17 planes) on 32 B only.
        let narrow: &[u32] = if lb == 32 { &[8, 16] } else { &[] };
        for &sym_bits in [32, 64].iter().chain(narrow) {
            v.push(Box::new(BpcParams {
                line_bytes: lb,
                sym_bits,
                ..BpcParams::default()
            }));
        }
    }
    // 16 B lines (the proofs' configuration): the three line compressors only.
    v.push(Box::new(BdiParams {
        line_bytes: 16,
        base_rule: bdi::BaseRule::Element0,
    }));
    v.push(Box::new(FpcParams {
        mode: FpcMode::Original,
        line_bytes: 16,
    }));
    v.push(Box::new(CpackParams {
        line_bytes: 16,
        ..CpackParams::default()
    }));
    for sym_bits in [32, 64] {
        v.push(Box::new(BpcParams {
            line_bytes: 16,
            sym_bits,
            ..BpcParams::default()
        }));
    }
    v
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Real bytes: this test binary (code, data, symbols), always present.
    fn real_data() -> Vec<u8> {
        let exe = std::env::current_exe().expect("test binary path");
        let mut b = std::fs::read(exe).expect("read test binary");
        b.truncate(4 << 20);
        b
    }

    #[test]
    fn corrupted_payloads_reach_both_decoder_outcomes() {
        use rand::SeedableRng;
        let data = real_data();
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(3);
        for c in variants() {
            let lb = c.line_bytes();
            let (mut ok, mut err) = (0, 0);
            for line in data.chunks_exact(lb).step_by(7).take(400) {
                let Coded { bits, nbits, .. } = c.compress(line).expect("compress");
                if nbits < 8 * lb {
                    let mut p = bits.clone();
                    p.resize(lb, 0);
                    let (back, used) = c.decompress_prefix(&p).expect("valid stream");
                    assert_eq!((back.as_slice(), used), (line, nbits), "{}", c.name());
                }
                let bad = c.corrupt(&bits, nbits, &mut rng);
                assert_eq!(bad.len(), lb);
                match c.decompress_prefix(&bad) {
                    Ok((l, _)) => {
                        assert_eq!(l.len(), lb);
                        ok += 1
                    }
                    Err(_) => err += 1,
                }
            }
            // ZVC has no invalid streams (every mask is one; only a mask longer than the
            // payload fails), so a corrupted line just decodes to other data.
            let needs_err = c.name() != "zvc";
            assert!(
                ok > 0 && (err > 0 || !needs_err),
                "{} {lb} B: {ok} decoded, {err} errors",
                c.name()
            );
        }
    }

    #[test]
    fn size_only_equals_stream_length_on_real_data() {
        let data = real_data();
        for c in variants() {
            let lb = c.line_bytes();
            let mut compressed = 0usize;
            for line in data.chunks_exact(lb).step_by(3) {
                let Coded {
                    bits,
                    nbits,
                    compressed: ok,
                } = c.compress(line).expect("compress");
                assert_eq!(ok, nbits < 8 * lb, "{} {lb} B", c.name());
                assert_eq!(
                    c.size_bits(line).expect("size"),
                    nbits,
                    "{} {lb} B",
                    c.name()
                );
                if nbits < 8 * lb {
                    compressed += 1;
                }
                assert_eq!(c.decompress(&bits, nbits).expect("decompress"), line);
            }
            assert!(compressed > 0, "{} {lb} B: no line compressed", c.name());
        }
    }

    #[test]
    fn fpc_paper_size_matches_its_word_classification() {
        let data = real_data();
        for lb in [32, 64, 128] {
            let p = FpcParams {
                mode: FpcMode::PaperSize,
                line_bytes: lb,
            };
            for line in data.chunks_exact(lb).step_by(5).take(50_000) {
                let cl = fpc::classify(&p, line).expect("classify");
                let want = if cl.zero_line {
                    fpc::FpcPattern::ZeroBlock.paper_size()
                } else {
                    let s: usize = cl.words.iter().map(|w| w.paper_size()).sum();
                    s.min(8 * lb)
                };
                assert_eq!(fpc::size_bits(&p, line).expect("size"), want);
            }
        }
    }
}
