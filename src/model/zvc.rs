//! Zero-Value Compression (ZVC) golden model, bit-exact (docs/FORMATS.md, ZVC §2.1–2.2).
//!
//! Stream format, for each window `b` of `window` elements (the last window is padded with
//! zero elements, which cost nothing):
//!
//! 1. the presence mask: `window` bits, bit `i` = element `i` of the window is non-zero,
//!    LSB of byte 0 = element 0, emitted as `window / 8` bytes (little-endian);
//! 2. each non-zero element in ascending order, as `word_bits / 8` bytes little-endian.
//!
//! There are no headers, no padding and no raw mode. The zero test is bitwise, so
//! `0x8000_0000` (−0.0), denormals and NaNs are non-zero. The element count is supplied out of
//! band (as a DMA descriptor would). See `docs/FORMATS.md`, section "ZVC".

use super::ModelError;
use serde::{Deserialize, Serialize};

/// ZVC parameters: element width and window (elements per presence mask).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ZvcParams {
    /// Element width in bits: 8, 16 or 32 (the paper's case is 32).
    pub word_bits: u32,
    /// Elements per window (= mask bits): a multiple of 8 and of `word_bits`, 8..=256.
    pub window: usize,
}

impl Default for ZvcParams {
    /// The paper's configuration: 32-bit words, 32-element (128 B) window.
    fn default() -> Self {
        ZvcParams {
            word_bits: 32,
            window: 32,
        }
    }
}

impl ZvcParams {
    /// Check the parameters; the error names the bad value and the allowed set.
    pub fn validate(&self) -> Result<(), ModelError> {
        if !matches!(self.word_bits, 8 | 16 | 32) {
            return Err(ModelError::param(
                "word_bits",
                self.word_bits,
                "allowed values are 8, 16, 32",
            ));
        }
        let w = self.window;
        if !(8..=256).contains(&w)
            || !w.is_multiple_of(8)
            || !w.is_multiple_of(self.word_bits as usize)
        {
            return Err(ModelError::param(
                "window",
                w,
                format!(
                    "must be in 8..=256, a multiple of 8 and a multiple of word_bits ({}) so the \
                     mask is a whole number of elements",
                    self.word_bits
                ),
            ));
        }
        Ok(())
    }

    /// Bytes per element (`word_bits / 8`).
    pub fn word_bytes(&self) -> usize {
        (self.word_bits / 8) as usize
    }

    /// Bytes per presence mask (`window / 8`).
    pub fn mask_bytes(&self) -> usize {
        self.window / 8
    }

    /// Size of one mask in elements (`window / word_bits`).
    pub fn mask_elems(&self) -> usize {
        self.window / self.word_bits as usize
    }

    /// Largest element value representable in `word_bits`.
    pub fn max_elem(&self) -> u32 {
        if self.word_bits >= 32 {
            u32::MAX
        } else {
            (1u32 << self.word_bits) - 1
        }
    }
}

/// Number of windows covering `n_elems` elements (`⌈n / window⌉`).
fn n_windows(p: &ZvcParams, n_elems: usize) -> usize {
    n_elems.div_ceil(p.window)
}

/// Compress `elems` (raw element values, each must fit in `word_bits`).
///
/// Errors: invalid parameters, or an element wider than `word_bits`.
pub fn compress(p: &ZvcParams, elems: &[u32]) -> Result<Vec<u8>, ModelError> {
    p.validate()?;
    let wb = p.word_bytes();
    let mb = p.mask_bytes();
    let max = p.max_elem();
    // Upper bound plus 4 bytes of slack: every element is stored unconditionally as 4 bytes
    // and the write position only advances for non-zero elements (branch-free compaction).
    let cap = n_windows(p, elems.len()) * mb + elems.len() * wb + 4;
    let mut out = vec![0u8; cap];
    let mut pos = 0usize;
    for (wi, win) in elems.chunks(p.window).enumerate() {
        let mask_at = pos;
        pos += mb;
        let mut mask = [0u64; 4];
        let mut too_wide = false;
        for (i, &x) in win.iter().enumerate() {
            too_wide |= x > max;
            let nz = (x != 0) as usize;
            out[pos..pos + 4].copy_from_slice(&x.to_le_bytes());
            pos += nz * wb;
            mask[i / 64] |= (nz as u64) << (i % 64);
        }
        if too_wide {
            // Report the first offending element.
            if let Some((i, &x)) = win.iter().enumerate().find(|&(_, &x)| x > max) {
                return Err(ModelError::ElementTooWide {
                    index: wi * p.window + i,
                    value: x,
                    word_bits: p.word_bits,
                });
            }
        }
        for (k, b) in out[mask_at..mask_at + mb].iter_mut().enumerate() {
            *b = (mask[k / 8] >> (8 * (k % 8))) as u8;
        }
    }
    out.truncate(pos);
    Ok(out)
}

/// Decompress a ZVC stream holding exactly `n_elems` elements.
///
/// Errors (never panics): invalid parameters, truncated mask, truncated payload, mask bits
/// set beyond `n_elems` in the last window, trailing bytes after the last window.
pub fn decompress(p: &ZvcParams, stream: &[u8], n_elems: usize) -> Result<Vec<u32>, ModelError> {
    p.validate()?;
    let wb = p.word_bytes();
    let mb = p.mask_bytes();
    let nw = n_windows(p, n_elems);
    // Every window costs at least its mask: reject impossible lengths before allocating.
    let min_len = nw.saturating_mul(mb);
    if min_len > stream.len() {
        return Err(ModelError::Truncated {
            what: format!(
                "{nw} masks of {mb} B for {n_elems} elements (window {})",
                p.window
            ),
            offset: 0,
            needed: min_len,
            available: stream.len(),
        });
    }
    let mut out = vec![0u32; n_elems];
    let mut pos = 0usize;
    for w in 0..nw {
        let start = w * p.window;
        let valid = (n_elems - start).min(p.window);
        if stream.len() - pos < mb {
            return Err(ModelError::Truncated {
                what: format!("mask of window {w}"),
                offset: pos,
                needed: mb,
                available: stream.len() - pos,
            });
        }
        let mask_at = pos;
        let mut mask = [0u64; 4];
        for (k, &b) in stream[pos..pos + mb].iter().enumerate() {
            mask[k / 8] |= (b as u64) << (8 * (k % 8));
        }
        pos += mb;
        // bits beyond the last valid element must be clear
        for (q, &m) in mask.iter().enumerate() {
            let lo = q * 64;
            let allowed = if valid >= lo + 64 {
                u64::MAX
            } else if valid <= lo {
                0
            } else {
                (1u64 << (valid - lo)) - 1
            };
            if m & !allowed != 0 {
                return Err(ModelError::Corrupt(format!(
                    "mask of window {w} (byte offset {mask_at}) has bits set for elements beyond \
                     n_elems = {n_elems} (only {valid} of {} elements valid; stray bits {:#x} in \
                     mask word {q})",
                    p.window,
                    m & !allowed
                )));
            }
        }
        let pop: usize = mask.iter().map(|m| m.count_ones() as usize).sum();
        let need = pop * wb;
        if stream.len() - pos < need {
            return Err(ModelError::Truncated {
                what: format!("payload of window {w} ({pop} non-zero elements)"),
                offset: pos,
                needed: need,
                available: stream.len() - pos,
            });
        }
        let payload = &stream[pos..pos + need];
        pos += need;
        let dst = &mut out[start..start + valid];
        let mut j = 0usize;
        for (q, &m) in mask.iter().enumerate() {
            let mut m = m;
            while m != 0 {
                let i = q * 64 + m.trailing_zeros() as usize;
                m &= m - 1;
                let mut b = [0u8; 4];
                b[..wb].copy_from_slice(&payload[j..j + wb]);
                j += wb;
                dst[i] = u32::from_le_bytes(b);
            }
        }
    }
    if pos != stream.len() {
        return Err(ModelError::TrailingBytes {
            extra: stream.len() - pos,
            total: stream.len(),
            used: pos,
        });
    }
    Ok(out)
}

/// Exact compressed size in bytes: `mask_bytes·⌈N/window⌉ + word_bytes·nnz` (bitwise zero test).
pub fn compressed_size(p: &ZvcParams, elems: &[u32]) -> usize {
    let nnz = elems.iter().filter(|&&x| x != 0).count();
    size_from_counts(p, elems.len(), nnz)
}

/// Exact compressed size from the element count and the number of non-zero elements.
pub fn size_from_counts(p: &ZvcParams, n_elems: usize, nnz: usize) -> usize {
    p.mask_bytes() * n_windows(p, n_elems) + p.word_bytes() * nnz
}

/// Encode one window for the hardware scoreboard: returns the mask bytes (`window / 8` bytes,
/// LSB of byte 0 = element 0) and the non-zero elements in ascending order.
///
/// A slice shorter than `p.window` is zero-padded; elements beyond `p.window` are ignored.
/// Elements are not range-checked here (use [`compress`] for checked encoding).
pub fn encode_window(p: &ZvcParams, window_elems: &[u32]) -> (Vec<u8>, Vec<u32>) {
    let mut mask = vec![0u8; p.mask_bytes()];
    let mut nz = Vec::new();
    for (i, &x) in window_elems.iter().take(p.window).enumerate() {
        if x != 0 {
            mask[i / 8] |= 1 << (i % 8);
            nz.push(x);
        }
    }
    (mask, nz)
}

/// Split a little-endian byte buffer into elements of `word_bits`.
///
/// Errors if the length is not a multiple of the element size.
pub fn elems_from_le_bytes(p: &ZvcParams, bytes: &[u8]) -> Result<Vec<u32>, ModelError> {
    p.validate()?;
    let wb = p.word_bytes();
    super::split_le(bytes, wb).ok_or(ModelError::BadByteLength {
        len: bytes.len(),
        elem_bytes: wb,
    })
}

/// Serialise elements as little-endian bytes of `word_bits / 8` each (upper bits are dropped;
/// callers should hold word-bit-limited values).
pub fn elems_to_le_bytes(p: &ZvcParams, elems: &[u32]) -> Vec<u8> {
    let wb = p.word_bytes();
    let mut out = Vec::with_capacity(elems.len() * wb);
    for &x in elems {
        out.extend_from_slice(&x.to_le_bytes()[..wb]);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn p32() -> ZvcParams {
        ZvcParams::default()
    }

    #[test]
    fn worked_example() {
        let mut x = vec![0u32; 32];
        x[0] = 0x3f80_0000;
        x[3] = 0x4000_0000;
        x[7] = 0x3e80_0000;
        x[31] = 0x4120_0000;
        let s = compress(&p32(), &x).unwrap();
        let expect: [u8; 20] = [
            0x89, 0x00, 0x00, 0x80, 0x00, 0x00, 0x80, 0x3f, 0x00, 0x00, 0x00, 0x40, 0x00, 0x00,
            0x80, 0x3e, 0x00, 0x00, 0x20, 0x41,
        ];
        assert_eq!(s, expect);
        assert_eq!(u32::from_le_bytes([s[0], s[1], s[2], s[3]]), 0x8000_0089);
        let (m, nz) = encode_window(&p32(), &x);
        assert_eq!(m, vec![0x89, 0, 0, 0x80]);
        assert_eq!(nz, vec![0x3f80_0000, 0x4000_0000, 0x3e80_0000, 0x4120_0000]);
        assert_eq!(decompress(&p32(), &s, 32).unwrap(), x);
    }

    #[test]
    fn all_zero_is_32x() {
        let x = vec![0u32; 1024];
        let s = compress(&p32(), &x).unwrap();
        assert_eq!(s.len(), 4096 / 32);
        assert!(s.iter().all(|&b| b == 0));
        assert_eq!(decompress(&p32(), &s, 1024).unwrap(), x);
    }

    #[test]
    fn all_nonzero_expands_132_over_128() {
        let x: Vec<u32> = (1..=64).collect();
        let s = compress(&p32(), &x).unwrap();
        assert_eq!(s.len(), 2 * 132);
        assert_eq!(&s[0..4], &[0xff; 4]);
        assert_eq!(decompress(&p32(), &s, 64).unwrap(), x);
    }

    #[test]
    fn negative_zero_is_nonzero() {
        let x = vec![0x8000_0000u32, 0, 0x0000_0001, 0x7fc0_0000];
        let s = compress(&p32(), &x).unwrap();
        assert_eq!(s[0], 0b1101);
        assert_eq!(s.len(), 4 + 12);
        assert_eq!(compressed_size(&p32(), &x), 16);
        assert_eq!(decompress(&p32(), &s, 4).unwrap(), x);
    }

    #[test]
    fn partial_final_window() {
        let mut x = vec![0u32; 40];
        x[33] = 7;
        x[39] = 9;
        let s = compress(&p32(), &x).unwrap();
        assert_eq!(s.len(), 4 + 4 + 8);
        assert_eq!(&s[4..8], &[0x82, 0, 0, 0]);
        assert_eq!(decompress(&p32(), &s, 40).unwrap(), x);
    }

    #[test]
    fn empty_input() {
        assert!(compress(&p32(), &[]).unwrap().is_empty());
        assert!(decompress(&p32(), &[], 0).unwrap().is_empty());
        assert!(matches!(
            decompress(&p32(), &[0], 0),
            Err(ModelError::TrailingBytes { extra: 1, .. })
        ));
    }

    #[test]
    fn narrow_elements() {
        let p8 = ZvcParams {
            word_bits: 8,
            window: 8,
        };
        let s = compress(&p8, &[0, 0xab, 0, 0, 0, 0, 0, 0x01, 0x02]).unwrap();
        assert_eq!(s, vec![0x82, 0xab, 0x01, 0x01, 0x02]);
        assert_eq!(p8.mask_elems(), 1);
        let p16 = ZvcParams {
            word_bits: 16,
            window: 16,
        };
        let s = compress(&p16, &[0x1234, 0, 0x8000]).unwrap();
        assert_eq!(s, vec![0x05, 0x00, 0x34, 0x12, 0x00, 0x80]);
        assert_eq!(decompress(&p16, &s, 3).unwrap(), vec![0x1234, 0, 0x8000]);
        assert!(matches!(
            compress(&p16, &[0, 0x1_0000]),
            Err(ModelError::ElementTooWide {
                index: 1,
                value: 0x1_0000,
                word_bits: 16
            })
        ));
    }

    #[test]
    fn window_64() {
        let p = ZvcParams {
            word_bits: 32,
            window: 64,
        };
        assert_eq!(p.mask_bytes(), 8);
        assert_eq!(p.mask_elems(), 2);
        let mut x = vec![0u32; 70];
        x[63] = 5;
        x[69] = 6;
        let s = compress(&p, &x).unwrap();
        assert_eq!(s.len(), 8 + 4 + 8 + 4);
        assert_eq!(s[7], 0x80);
        assert_eq!(s[12], 0x20);
        assert_eq!(decompress(&p, &s, 70).unwrap(), x);
    }

    #[test]
    fn size_formula() {
        let p = p32();
        assert_eq!(size_from_counts(&p, 0, 0), 0);
        assert_eq!(size_from_counts(&p, 1, 0), 4);
        assert_eq!(size_from_counts(&p, 33, 2), 16);
        assert_eq!(size_from_counts(&p, 1024, 410), 128 + 1640);
        let p8 = ZvcParams {
            word_bits: 8,
            window: 256,
        };
        assert_eq!(size_from_counts(&p8, 257, 3), 64 + 3);
    }

    #[test]
    fn param_errors() {
        let bad = [(24, 32), (32, 0), (32, 16), (8, 12), (8, 264), (16, 24)];
        for (word_bits, window) in bad {
            let p = ZvcParams { word_bits, window };
            let e = p.validate().unwrap_err();
            assert!(matches!(e, ModelError::InvalidParam { .. }), "{e}");
            assert!(compress(&p, &[1]).is_err());
        }
        let e = ZvcParams {
            word_bits: 12,
            window: 32,
        }
        .validate()
        .unwrap_err()
        .to_string();
        assert!(e.contains("12") && e.contains("8, 16, 32"), "{e}");
        for (word_bits, window) in [(8, 8), (16, 16), (16, 48), (32, 256), (8, 256)] {
            ZvcParams { word_bits, window }.validate().unwrap();
        }
    }

    #[test]
    fn corrupt_streams() {
        let p = p32();
        let x: Vec<u32> = vec![1, 0, 2, 0, 3];
        let s = compress(&p, &x).unwrap();
        // truncated mask
        assert!(matches!(
            decompress(&p, &s[..2], 5),
            Err(ModelError::Truncated { .. })
        ));
        // truncated payload
        let e = decompress(&p, &s[..s.len() - 1], 5).unwrap_err();
        assert!(matches!(e, ModelError::Truncated { .. }), "{e}");
        // trailing bytes
        let mut t = s.clone();
        t.push(0);
        assert!(matches!(
            decompress(&p, &t, 5),
            Err(ModelError::TrailingBytes { extra: 1, .. })
        ));
        // mask bit beyond n_elems
        let mut m = s.clone();
        m[0] |= 0x20;
        let e = decompress(&p, &m, 5).unwrap_err();
        assert!(matches!(e, ModelError::Corrupt(_)), "{e}");
        // too-short n_elems is also detected (bit beyond)
        assert!(decompress(&p, &s, 4).is_err());
        // huge n_elems does not allocate or hang
        assert!(matches!(
            decompress(&p, &s, usize::MAX),
            Err(ModelError::Truncated { .. })
        ));
        // second window missing
        assert!(decompress(&p, &s, 40).is_err());
    }

    #[test]
    fn byte_helpers() {
        let p16 = ZvcParams {
            word_bits: 16,
            window: 32,
        };
        let e = elems_from_le_bytes(&p16, &[1, 2, 3, 4]).unwrap();
        assert_eq!(e, vec![0x0201, 0x0403]);
        assert_eq!(elems_to_le_bytes(&p16, &e), vec![1, 2, 3, 4]);
        assert!(matches!(
            elems_from_le_bytes(&p16, &[1, 2, 3]),
            Err(ModelError::BadByteLength {
                len: 3,
                elem_bytes: 2
            })
        ));
    }

    fn any_params() -> impl Strategy<Value = ZvcParams> {
        prop_oneof![Just(8u32), Just(16u32), Just(32u32)].prop_flat_map(|wb| {
            let step = wb as usize;
            (1..=256 / step).prop_map(move |k| ZvcParams {
                word_bits: wb,
                window: k * step,
            })
        })
    }

    proptest! {
        #[test]
        fn roundtrip_and_size(
            p in any_params(),
            raw in proptest::collection::vec((any::<u32>(), 0u8..4), 0..700),
        ) {
            // about half zeros; mask to the element width
            let x: Vec<u32> = raw.iter().map(|&(v, z)| if z < 2 { 0 } else { v & p.max_elem() }).collect();
            let s = compress(&p, &x).unwrap();
            prop_assert_eq!(s.len(), compressed_size(&p, &x));
            prop_assert_eq!(decompress(&p, &s, x.len()).unwrap(), x);
        }

        #[test]
        fn decompress_garbage_never_panics(
            p in any_params(),
            bytes in proptest::collection::vec(any::<u8>(), 0..200),
            n in 0usize..2000,
        ) {
            if let Ok(v) = decompress(&p, &bytes, n) {
                prop_assert_eq!(v.len(), n);
                prop_assert_eq!(compress(&p, &v).unwrap(), bytes);
            }
        }
    }
}
