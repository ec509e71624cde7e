//! The line-codec interface shared by the per-line compressors (BDI, FPC, C-Pack(+Z); BPC
//! next): one cache line in, one MSB-first bit stream out, each codec configured by its own
//! parameter struct, which is the codec value itself.
//!
//! `size_bits` is the size-only fast path (no stream is built); `compress` is the bit-exact
//! reference, and `tests::size_only_equals_stream_length_on_real_data` checks that the two
//! agree.

use super::bdi::{self, BdiParams};
use super::cpack::{self, CpackParams};
use super::fpc::{self, FpcMode, FpcParams};
use super::ModelError;

/// A per-line compressor with a decodable bit stream (spec README conventions: MSB-first,
/// zero-padded to whole bytes; the raw line when compression does not make it smaller).
pub trait LineCodec: Send + Sync {
    /// Short name (`bdi`, `fpc`, `cpack`).
    fn name(&self) -> &'static str;
    /// Line size in bytes.
    fn line_bytes(&self) -> usize;
    /// Bit-exact compression: the stream (`nbits.div_ceil(8)` bytes) and its length in bits.
    fn compress(&self, line: &[u8]) -> Result<(Vec<u8>, usize), ModelError>;
    /// Decompresses a stream of exactly `nbits` bits.
    fn decompress(&self, bits: &[u8], nbits: usize) -> Result<Vec<u8>, ModelError>;
    /// Size in bits of the line as sent, without building the stream; equals
    /// `compress(line)?.1` whenever `compress` is defined.
    fn size_bits(&self, line: &[u8]) -> Result<usize, ModelError>;
}

impl LineCodec for BdiParams {
    fn name(&self) -> &'static str {
        "bdi"
    }
    fn line_bytes(&self) -> usize {
        self.line_bytes
    }
    fn compress(&self, line: &[u8]) -> Result<(Vec<u8>, usize), ModelError> {
        bdi::compress(self, line).map(|c| (c.bits, c.nbits))
    }
    fn decompress(&self, bits: &[u8], nbits: usize) -> Result<Vec<u8>, ModelError> {
        bdi::decompress(self, bits, nbits)
    }
    fn size_bits(&self, line: &[u8]) -> Result<usize, ModelError> {
        bdi::size_bits(self, line)
    }
}

impl LineCodec for FpcParams {
    fn name(&self) -> &'static str {
        "fpc"
    }
    fn line_bytes(&self) -> usize {
        self.line_bytes
    }
    /// Original mode only: the paper's size accounting has no stream.
    fn compress(&self, line: &[u8]) -> Result<(Vec<u8>, usize), ModelError> {
        fpc::compress(self, line).map(|c| (c.bits, c.nbits))
    }
    fn decompress(&self, bits: &[u8], nbits: usize) -> Result<Vec<u8>, ModelError> {
        fpc::decompress(self, bits, nbits)
    }
    fn size_bits(&self, line: &[u8]) -> Result<usize, ModelError> {
        fpc::size_bits(self, line)
    }
}

impl LineCodec for CpackParams {
    fn name(&self) -> &'static str {
        "cpack"
    }
    fn line_bytes(&self) -> usize {
        self.line_bytes
    }
    fn compress(&self, line: &[u8]) -> Result<(Vec<u8>, usize), ModelError> {
        cpack::compress(self, line).map(|c| (c.bits, c.nbits))
    }
    fn decompress(&self, bits: &[u8], nbits: usize) -> Result<Vec<u8>, ModelError> {
        cpack::decompress(self, bits, nbits)
    }
    fn size_bits(&self, line: &[u8]) -> Result<usize, ModelError> {
        cpack::size_bits(self, line)
    }
}

/// The codecs at their defaults plus their variants that change the size path (base rules,
/// line sizes, FPC's original format, C-Pack's code tables), for tests and benchmarks.
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
    fn size_only_equals_stream_length_on_real_data() {
        let data = real_data();
        for c in variants() {
            let lb = c.line_bytes();
            let mut compressed = 0usize;
            for line in data.chunks_exact(lb).step_by(3) {
                let (bits, nbits) = c.compress(line).expect("compress");
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
