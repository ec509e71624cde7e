//! RLE baselines for ratio comparison only (docs/FORMATS.md, ZVC §2.3). The paper gives no RLE
//! format; these are the spec's proposals and must be reported as "RLE under assumption A/B".
//!
//! Both operate on 32-bit words, independently per chunk (default 4096 B = 1024 words), as a
//! bitstream written MSB-first (bit 7 of byte 0 first). Multi-bit fields and raw words are
//! written most significant bit first. Each chunk starts on a byte boundary (optionally on a
//! 4-byte boundary for RLE-A); pad bits are zero.
//!
//! * **RLE-A** (zero-run + literal-run): records `{zrun: ZB bits, nlit: LB bits}` each followed
//!   by `nlit` raw 32-bit words. Greedy: count zeros up to `2^ZB−1`, then non-zeros up to
//!   `2^LB−1`, repeat until the chunk ends.
//! * **RLE-B** (classic): records `{value: 32 bits, count−1: CB bits}` over runs of identical
//!   words, runs of at most `2^CB` words.

use super::ModelError;
use serde::{Deserialize, Serialize};

/// MSB-first bit writer.
struct BitWriter {
    out: Vec<u8>,
    acc: u64,
    nbits: u32,
}

impl BitWriter {
    fn new() -> Self {
        BitWriter {
            out: Vec::new(),
            acc: 0,
            nbits: 0,
        }
    }
    /// Write the low `n` (≤ 32) bits of `v`, MSB first.
    fn put(&mut self, v: u32, n: u32) {
        if n == 0 {
            return;
        }
        let v = (v as u64) & ((1u64 << n) - 1);
        self.acc = (self.acc << n) | v;
        self.nbits += n;
        while self.nbits >= 8 {
            self.nbits -= 8;
            self.out.push((self.acc >> self.nbits) as u8);
        }
        self.acc &= (1u64 << self.nbits) - 1;
    }
    /// Pad with zero bits to a multiple of `align` bytes.
    fn align(&mut self, align: usize) {
        if self.nbits > 0 {
            let n = 8 - self.nbits;
            self.put(0, n);
        }
        while !self.out.len().is_multiple_of(align) {
            self.out.push(0);
        }
    }
}

/// MSB-first bit reader with bounds checks.
struct BitReader<'a> {
    data: &'a [u8],
    bitpos: usize,
}

impl<'a> BitReader<'a> {
    fn get(&mut self, n: u32, what: &str) -> Result<u32, ModelError> {
        let avail = self.data.len() * 8 - self.bitpos;
        if (n as usize) > avail {
            return Err(ModelError::Truncated {
                what: format!("{what} ({n} bits)"),
                offset: self.bitpos / 8,
                needed: (n as usize).div_ceil(8),
                available: avail / 8,
            });
        }
        let mut v = 0u32;
        for _ in 0..n {
            let b = self.data[self.bitpos / 8] >> (7 - self.bitpos % 8) & 1;
            v = (v << 1) | b as u32;
            self.bitpos += 1;
        }
        Ok(v)
    }
    fn align(&mut self, align: usize) -> Result<(), ModelError> {
        let byte = self.bitpos.div_ceil(8);
        let target = byte.div_ceil(align) * align;
        if target > self.data.len() {
            return Err(ModelError::Truncated {
                what: "chunk padding".into(),
                offset: byte,
                needed: target - byte,
                available: self.data.len() - byte.min(self.data.len()),
            });
        }
        self.bitpos = target * 8;
        Ok(())
    }
    fn finish(&self) -> Result<(), ModelError> {
        let used = self.bitpos.div_ceil(8);
        if used != self.data.len() {
            return Err(ModelError::TrailingBytes {
                extra: self.data.len() - used,
                total: self.data.len(),
                used,
            });
        }
        Ok(())
    }
}

fn check_chunk(chunk_bytes: usize) -> Result<usize, ModelError> {
    if chunk_bytes == 0 || !chunk_bytes.is_multiple_of(4) {
        return Err(ModelError::param(
            "chunk_bytes",
            chunk_bytes,
            "must be a positive multiple of 4",
        ));
    }
    Ok(chunk_bytes / 4)
}

/// RLE-A parameters (zero-run + literal-run).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct RleAParams {
    /// Bits of the zero-run field (1..=24).
    pub zb: u32,
    /// Bits of the literal-count field (1..=24).
    pub lb: u32,
    /// Independently encoded chunk size in bytes (positive multiple of 4; default 4096).
    pub chunk_bytes: usize,
    /// Pad each encoded chunk to a multiple of 4 bytes (otherwise to a whole byte).
    pub pad_chunk_to_4: bool,
}

impl Default for RleAParams {
    /// ZB = LB = 8, 4096 B chunks, byte-aligned chunks.
    fn default() -> Self {
        RleAParams {
            zb: 8,
            lb: 8,
            chunk_bytes: 4096,
            pad_chunk_to_4: false,
        }
    }
}

impl RleAParams {
    /// RLE-A with the given field widths and otherwise default settings.
    pub fn new(zb: u32, lb: u32) -> Self {
        RleAParams {
            zb,
            lb,
            ..Default::default()
        }
    }

    /// Check the parameters.
    pub fn validate(&self) -> Result<(), ModelError> {
        for (name, v) in [("zb", self.zb), ("lb", self.lb)] {
            if !(1..=24).contains(&v) {
                return Err(ModelError::param(name, v, "allowed range is 1..=24"));
            }
        }
        check_chunk(self.chunk_bytes).map(|_| ())
    }

    fn align(&self) -> usize {
        if self.pad_chunk_to_4 {
            4
        } else {
            1
        }
    }
}

/// Greedy RLE-A records of one chunk: calls `f(zrun, literal_slice)`.
fn rle_a_records(p: &RleAParams, chunk: &[u32], mut f: impl FnMut(u32, &[u32])) {
    let zmax = (1usize << p.zb) - 1;
    let lmax = (1usize << p.lb) - 1;
    let mut i = 0;
    while i < chunk.len() {
        let z = chunk[i..]
            .iter()
            .take(zmax)
            .take_while(|&&x| x == 0)
            .count();
        i += z;
        let l = chunk[i..]
            .iter()
            .take(lmax)
            .take_while(|&&x| x != 0)
            .count();
        f(z as u32, &chunk[i..i + l]);
        i += l;
    }
}

/// Encode 32-bit words with RLE-A.
pub fn rle_a_encode(p: &RleAParams, words: &[u32]) -> Result<Vec<u8>, ModelError> {
    p.validate()?;
    let cw = p.chunk_bytes / 4;
    let mut w = BitWriter::new();
    for chunk in words.chunks(cw) {
        rle_a_records(p, chunk, |z, lits| {
            w.put(z, p.zb);
            w.put(lits.len() as u32, p.lb);
            for &x in lits {
                w.put(x, 32);
            }
        });
        w.align(p.align());
    }
    Ok(w.out)
}

/// Exact RLE-A encoded size in bytes (without encoding).
pub fn rle_a_size(p: &RleAParams, words: &[u32]) -> Result<usize, ModelError> {
    p.validate()?;
    let cw = p.chunk_bytes / 4;
    let mut total = 0usize;
    for chunk in words.chunks(cw) {
        let mut bits = 0usize;
        rle_a_records(p, chunk, |_, lits| {
            bits += (p.zb + p.lb) as usize + 32 * lits.len();
        });
        total += bits.div_ceil(8).div_ceil(p.align()) * p.align();
    }
    Ok(total)
}

/// Decode an RLE-A stream of exactly `n_words` words.
pub fn rle_a_decode(p: &RleAParams, stream: &[u8], n_words: usize) -> Result<Vec<u32>, ModelError> {
    p.validate()?;
    let cw = p.chunk_bytes / 4;
    // Each chunk needs at least one record: bound n_words before allocating.
    if n_words.div_ceil(cw) > stream.len() {
        return Err(ModelError::Truncated {
            what: format!("RLE-A stream for {n_words} words"),
            offset: 0,
            needed: n_words.div_ceil(cw),
            available: stream.len(),
        });
    }
    let mut r = BitReader {
        data: stream,
        bitpos: 0,
    };
    let mut out = Vec::with_capacity(n_words.min(stream.len() * 8));
    let mut done = 0;
    while done < n_words {
        let len = cw.min(n_words - done);
        let mut j = 0;
        while j < len {
            let z = r.get(p.zb, "RLE-A zrun")? as usize;
            let l = r.get(p.lb, "RLE-A nlit")? as usize;
            if z == 0 && l == 0 {
                return Err(ModelError::Corrupt(format!(
                    "RLE-A empty record at word {} of chunk {}",
                    j,
                    done / cw
                )));
            }
            if j + z + l > len {
                return Err(ModelError::Corrupt(format!(
                    "RLE-A record ({z} zeros, {l} literals) overruns chunk {} of {len} words at word {j}",
                    done / cw
                )));
            }
            out.resize(out.len() + z, 0);
            for _ in 0..l {
                out.push(r.get(32, "RLE-A literal")?);
            }
            j += z + l;
        }
        r.align(p.align())?;
        done += len;
    }
    r.finish()?;
    Ok(out)
}

/// RLE-B parameters (classic value/count pairs).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct RleBParams {
    /// Bits of the count field (1..=24); it stores run length − 1.
    pub cb: u32,
    /// Independently encoded chunk size in bytes (positive multiple of 4; default 4096).
    pub chunk_bytes: usize,
}

impl Default for RleBParams {
    /// CB = 8, 4096 B chunks.
    fn default() -> Self {
        RleBParams {
            cb: 8,
            chunk_bytes: 4096,
        }
    }
}

impl RleBParams {
    /// Check the parameters.
    pub fn validate(&self) -> Result<(), ModelError> {
        if !(1..=24).contains(&self.cb) {
            return Err(ModelError::param("cb", self.cb, "allowed range is 1..=24"));
        }
        check_chunk(self.chunk_bytes).map(|_| ())
    }
}

fn rle_b_runs(p: &RleBParams, chunk: &[u32], mut f: impl FnMut(u32, usize)) {
    let max = 1usize << p.cb;
    let mut i = 0;
    while i < chunk.len() {
        let v = chunk[i];
        let n = chunk[i..].iter().take(max).take_while(|&&x| x == v).count();
        f(v, n);
        i += n;
    }
}

/// Encode 32-bit words with RLE-B.
pub fn rle_b_encode(p: &RleBParams, words: &[u32]) -> Result<Vec<u8>, ModelError> {
    p.validate()?;
    let mut w = BitWriter::new();
    for chunk in words.chunks(p.chunk_bytes / 4) {
        rle_b_runs(p, chunk, |v, n| {
            w.put(v, 32);
            w.put((n - 1) as u32, p.cb);
        });
        w.align(1);
    }
    Ok(w.out)
}

/// Exact RLE-B encoded size in bytes.
pub fn rle_b_size(p: &RleBParams, words: &[u32]) -> Result<usize, ModelError> {
    p.validate()?;
    let mut total = 0;
    for chunk in words.chunks(p.chunk_bytes / 4) {
        let mut runs = 0usize;
        rle_b_runs(p, chunk, |_, _| runs += 1);
        total += (runs * (32 + p.cb as usize)).div_ceil(8);
    }
    Ok(total)
}

/// Decode an RLE-B stream of exactly `n_words` words.
pub fn rle_b_decode(p: &RleBParams, stream: &[u8], n_words: usize) -> Result<Vec<u32>, ModelError> {
    p.validate()?;
    let cw = p.chunk_bytes / 4;
    let max_words =
        (stream.len().saturating_mul(8) / (32 + p.cb as usize)).saturating_mul(1usize << p.cb);
    if n_words > max_words {
        return Err(ModelError::Truncated {
            what: format!("RLE-B stream for {n_words} words"),
            offset: 0,
            needed: n_words,
            available: stream.len(),
        });
    }
    let mut r = BitReader {
        data: stream,
        bitpos: 0,
    };
    let mut out = Vec::with_capacity(n_words);
    let mut done = 0;
    while done < n_words {
        let len = cw.min(n_words - done);
        let mut j = 0;
        while j < len {
            let v = r.get(32, "RLE-B value")?;
            let n = r.get(p.cb, "RLE-B count")? as usize + 1;
            if j + n > len {
                return Err(ModelError::Corrupt(format!(
                    "RLE-B run of {n} overruns chunk {} of {len} words at word {j}",
                    done / cw
                )));
            }
            out.resize(out.len() + n, v);
            j += n;
        }
        r.align(1)?;
        done += len;
    }
    r.finish()?;
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn all_zero_chunk_is_10_bytes() {
        let x = vec![0u32; 1024];
        let p = RleAParams::default();
        let s = rle_a_encode(&p, &x).unwrap();
        assert_eq!(s.len(), 10);
        assert_eq!(rle_a_size(&p, &x).unwrap(), 10);
        assert_eq!(&s[..2], &[255, 0]);
        assert_eq!(&s[8..], &[4, 0]);
        assert_eq!(rle_a_decode(&p, &s, 1024).unwrap(), x);
        let p4 = RleAParams {
            pad_chunk_to_4: true,
            ..p
        };
        assert_eq!(rle_a_size(&p4, &x).unwrap(), 12);
        assert_eq!(
            rle_a_decode(&p4, &rle_a_encode(&p4, &x).unwrap(), 1024).unwrap(),
            x
        );
    }

    #[test]
    fn rle_a_layout() {
        let p = RleAParams::default();
        let s = rle_a_encode(&p, &[0, 0, 0x1122_3344, 0]).unwrap();
        assert_eq!(s, vec![2, 1, 0x11, 0x22, 0x33, 0x44, 1, 0]);
        let p16 = RleAParams::new(16, 16);
        assert_eq!(rle_a_size(&p16, &[0, 0, 5]).unwrap(), 8);
        let odd = RleAParams::new(3, 2);
        let x = [0u32, 0, 0, 0, 0, 0, 0, 0, 9, 9, 9, 9, 0];
        let s = rle_a_encode(&odd, &x).unwrap();
        assert_eq!(s.len(), rle_a_size(&odd, &x).unwrap());
        assert_eq!(rle_a_decode(&odd, &s, x.len()).unwrap(), x);
    }

    #[test]
    fn rle_b_basic() {
        let p = RleBParams::default();
        let x = [7u32, 7, 7, 0, 1];
        let s = rle_b_encode(&p, &x).unwrap();
        assert_eq!(s.len(), (3 * 40) / 8);
        assert_eq!(&s[..5], &[0, 0, 0, 7, 2]);
        assert_eq!(rle_b_decode(&p, &s, 5).unwrap(), x);
        let z = vec![0u32; 1024];
        assert_eq!(rle_b_size(&p, &z).unwrap(), 4 * 5);
    }

    #[test]
    fn corrupt() {
        let p = RleAParams::default();
        assert!(rle_a_decode(&p, &[0, 0], 3).is_err());
        assert!(rle_a_decode(&p, &[5, 0], 3).is_err());
        assert!(rle_a_decode(&p, &[3, 0, 0], 3).is_err());
        assert!(rle_a_decode(&p, &[0, 1, 0, 0], 1).is_err());
        assert!(rle_a_decode(&p, &[1, 0], usize::MAX).is_err());
        assert!(rle_b_decode(&RleBParams::default(), &[0; 5], usize::MAX).is_err());
        assert!(RleAParams::new(0, 8).validate().is_err());
        assert!(RleBParams {
            cb: 8,
            chunk_bytes: 6
        }
        .validate()
        .is_err());
    }

    proptest! {
        #[test]
        fn roundtrips(
            raw in proptest::collection::vec((any::<u32>(), 0u8..8), 0..3000),
            zb in 1u32..10, lb in 1u32..10, cb in 1u32..10, pad: bool,
            chunk in 1usize..300,
        ) {
            let x: Vec<u32> = raw.iter().map(|&(v, k)| match k { 0..=3 => 0, 4 => 1, _ => v }).collect();
            let pa = RleAParams { zb, lb, chunk_bytes: chunk * 4, pad_chunk_to_4: pad };
            let s = rle_a_encode(&pa, &x).unwrap();
            prop_assert_eq!(s.len(), rle_a_size(&pa, &x).unwrap());
            prop_assert_eq!(rle_a_decode(&pa, &s, x.len()).unwrap(), x.clone());
            let pb = RleBParams { cb, chunk_bytes: chunk * 4 };
            let s = rle_b_encode(&pb, &x).unwrap();
            prop_assert_eq!(s.len(), rle_b_size(&pb, &x).unwrap());
            prop_assert_eq!(rle_b_decode(&pb, &s, x.len()).unwrap(), x);
        }
    }
}
