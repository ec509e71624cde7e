//! Arbitrary-width bit vectors: constants in the builder and values in the interpreter.

use std::fmt;

/// An unsigned bit vector of a fixed width (1 ..= any), stored LSB-first in 64-bit words.
///
/// Bits above `width` are always zero (every operation re-masks).
#[derive(Clone, PartialEq, Eq, Hash)]
pub struct Bits {
    width: u32,
    words: Vec<u64>,
}

fn nwords(width: u32) -> usize {
    (width as usize).div_ceil(64).max(1)
}

impl Bits {
    /// All-zero vector of `width` bits.
    pub fn zero(width: u32) -> Self {
        Bits {
            width,
            words: vec![0; nwords(width)],
        }
    }

    /// All-ones vector of `width` bits.
    pub fn ones(width: u32) -> Self {
        let mut b = Bits {
            width,
            words: vec![u64::MAX; nwords(width)],
        };
        b.mask();
        b
    }

    /// `value` truncated to `width` bits.
    pub fn from_u64(width: u32, value: u64) -> Self {
        let mut b = Bits::zero(width);
        b.words[0] = value;
        b.mask();
        b
    }

    /// `value` truncated to `width` bits.
    pub fn from_u128(width: u32, value: u128) -> Self {
        let mut b = Bits::zero(width);
        b.words[0] = value as u64;
        if b.words.len() > 1 {
            b.words[1] = (value >> 64) as u64;
        }
        b.mask();
        b
    }

    /// Builds a vector from 32-bit words, word 0 = bits 31:0 (Verilator's wide-port layout).
    pub fn from_u32_words(width: u32, words: &[u32]) -> Self {
        let mut b = Bits::zero(width);
        for (i, w) in words.iter().enumerate() {
            let bit = i * 32;
            if bit >= width as usize {
                break;
            }
            b.words[bit / 64] |= (*w as u64) << (bit % 64);
        }
        b.mask();
        b
    }

    /// The vector as 32-bit words, word 0 = bits 31:0.
    pub fn to_u32_words(&self) -> Vec<u32> {
        let n = (self.width as usize).div_ceil(32);
        (0..n)
            .map(|i| (self.words[i / 2] >> ((i % 2) * 32)) as u32)
            .collect()
    }

    fn mask(&mut self) {
        let rem = self.width % 64;
        let n = nwords(self.width);
        self.words.truncate(n);
        if rem != 0 {
            self.words[n - 1] &= (1u64 << rem) - 1;
        }
        if self.width == 0 {
            self.words[0] = 0;
        }
    }

    /// Width in bits.
    pub fn width(&self) -> u32 {
        self.width
    }

    /// Low 64 bits.
    pub fn to_u64(&self) -> u64 {
        self.words[0]
    }

    /// Low 128 bits.
    pub fn to_u128(&self) -> u128 {
        let hi = self.words.get(1).copied().unwrap_or(0) as u128;
        (hi << 64) | self.words[0] as u128
    }

    /// Bit `i` (false beyond the width).
    pub fn bit(&self, i: u32) -> bool {
        i < self.width && (self.words[(i / 64) as usize] >> (i % 64)) & 1 == 1
    }

    /// Sets bit `i` (ignored beyond the width).
    pub fn set_bit(&mut self, i: u32, v: bool) {
        if i >= self.width {
            return;
        }
        let w = &mut self.words[(i / 64) as usize];
        if v {
            *w |= 1 << (i % 64);
        } else {
            *w &= !(1 << (i % 64));
        }
    }

    /// True when every bit is zero.
    pub fn is_zero(&self) -> bool {
        self.words.iter().all(|w| *w == 0)
    }

    /// Number of set bits.
    pub fn count_ones(&self) -> u32 {
        self.words.iter().map(|w| w.count_ones()).sum()
    }

    /// Bits `lo .. lo+width`.
    pub fn slice(&self, lo: u32, width: u32) -> Bits {
        self.shr(lo).resize(width)
    }

    /// Zero-extends or truncates to `width`.
    pub fn resize(&self, width: u32) -> Bits {
        let mut b = Bits::zero(width);
        for (i, w) in b.words.iter_mut().enumerate() {
            *w = self.words.get(i).copied().unwrap_or(0);
        }
        b.mask();
        b
    }

    /// Concatenation with `parts[0]` at the most significant end (Verilog `{a, b}` order).
    pub fn concat_msb(parts: &[Bits]) -> Bits {
        let width = parts.iter().map(|p| p.width).sum();
        let mut out = Bits::zero(width);
        let mut pos = 0;
        for p in parts.iter().rev() {
            out.or_at(p, pos);
            pos += p.width;
        }
        out
    }

    fn or_at(&mut self, p: &Bits, pos: u32) {
        let shifted = p.resize(self.width.max(1)).shl(pos);
        for (a, b) in self.words.iter_mut().zip(shifted.words.iter()) {
            *a |= *b;
        }
    }

    /// Logical shift left, same width.
    pub fn shl(&self, n: u32) -> Bits {
        let mut out = Bits::zero(self.width);
        if n >= self.width {
            return out;
        }
        let (ws, bs) = ((n / 64) as usize, n % 64);
        for i in (ws..out.words.len()).rev() {
            let src = i - ws;
            let mut v = self.words[src] << bs;
            if bs != 0 && src > 0 {
                v |= self.words[src - 1] >> (64 - bs);
            }
            out.words[i] = v;
        }
        out.mask();
        out
    }

    /// Logical shift right, same width.
    pub fn shr(&self, n: u32) -> Bits {
        let mut out = Bits::zero(self.width);
        if n >= self.width {
            return out;
        }
        let (ws, bs) = ((n / 64) as usize, n % 64);
        for i in 0..out.words.len() {
            let src = i + ws;
            if src >= self.words.len() {
                break;
            }
            let mut v = self.words[src] >> bs;
            if bs != 0 && src + 1 < self.words.len() {
                v |= self.words[src + 1] << (64 - bs);
            }
            out.words[i] = v;
        }
        out
    }

    fn zip(&self, o: &Bits, f: impl Fn(u64, u64) -> u64) -> Bits {
        let mut out = Bits::zero(self.width);
        for (i, w) in out.words.iter_mut().enumerate() {
            *w = f(self.words[i], o.words.get(i).copied().unwrap_or(0));
        }
        out.mask();
        out
    }

    /// Bitwise AND (width of `self`).
    pub fn and(&self, o: &Bits) -> Bits {
        self.zip(o, |a, b| a & b)
    }
    /// Bitwise OR (width of `self`).
    pub fn or(&self, o: &Bits) -> Bits {
        self.zip(o, |a, b| a | b)
    }
    /// Bitwise XOR (width of `self`).
    pub fn xor(&self, o: &Bits) -> Bits {
        self.zip(o, |a, b| a ^ b)
    }
    /// Bitwise NOT.
    pub fn not(&self) -> Bits {
        let mut out = self.zip(self, |a, _| !a);
        out.mask();
        out
    }

    /// Modular addition (width of `self`).
    pub fn add(&self, o: &Bits) -> Bits {
        let mut out = Bits::zero(self.width);
        let mut carry = 0u64;
        for i in 0..out.words.len() {
            let b = o.words.get(i).copied().unwrap_or(0);
            let (s1, c1) = self.words[i].overflowing_add(b);
            let (s2, c2) = s1.overflowing_add(carry);
            out.words[i] = s2;
            carry = (c1 as u64) + (c2 as u64);
        }
        out.mask();
        out
    }

    /// Modular subtraction (width of `self`).
    pub fn sub(&self, o: &Bits) -> Bits {
        self.add(
            &o.resize(self.width)
                .not()
                .add(&Bits::from_u64(self.width, 1)),
        )
    }

    /// Unsigned less-than.
    pub fn ult(&self, o: &Bits) -> bool {
        let n = self.words.len().max(o.words.len());
        for i in (0..n).rev() {
            let a = self.words.get(i).copied().unwrap_or(0);
            let b = o.words.get(i).copied().unwrap_or(0);
            if a != b {
                return a < b;
            }
        }
        false
    }

    /// Value equality ignoring width.
    pub fn val_eq(&self, o: &Bits) -> bool {
        let n = self.words.len().max(o.words.len());
        (0..n).all(|i| {
            self.words.get(i).copied().unwrap_or(0) == o.words.get(i).copied().unwrap_or(0)
        })
    }

    /// Value as a shift amount, saturated to `u32::MAX`.
    pub fn to_shift(&self) -> u32 {
        if self.words[1..].iter().any(|w| *w != 0) || self.words[0] > u32::MAX as u64 {
            u32::MAX
        } else {
            self.words[0] as u32
        }
    }

    /// Lower-case hexadecimal digits, most significant first, exactly ⌈width/4⌉ digits.
    pub fn to_hex(&self) -> String {
        let digits = (self.width as usize).div_ceil(4).max(1);
        (0..digits)
            .rev()
            .map(|d| {
                let v = (self.words[d / 16] >> ((d % 16) * 4)) & 0xf;
                char::from_digit(v as u32, 16).unwrap_or('0')
            })
            .collect()
    }
}

impl fmt::Debug for Bits {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}'h{}", self.width, self.to_hex())
    }
}

impl fmt::Display for Bits {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}'h{}", self.width, self.to_hex())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arithmetic_wraps_at_width() {
        let a = Bits::from_u64(4, 0xf);
        assert_eq!(a.add(&Bits::from_u64(4, 1)).to_u64(), 0);
        assert_eq!(
            Bits::from_u64(4, 0).sub(&Bits::from_u64(4, 1)).to_u64(),
            0xf
        );
        let wide = Bits::ones(130);
        assert!(wide.add(&Bits::from_u64(130, 1)).is_zero());
    }

    #[test]
    fn shifts_cross_word_boundaries() {
        let a = Bits::from_u64(130, 1);
        assert!(a.shl(129).bit(129));
        assert_eq!(a.shl(129).shr(129).to_u64(), 1);
        assert!(a.shl(130).is_zero());
        let b = Bits::from_u128(100, 0xdead_beef_0000_0000_0000_0001);
        assert_eq!(b.slice(64, 32).to_u64(), 0xdead_beef);
    }

    #[test]
    fn words_and_concat_round_trip() {
        let w = [0x1234_5678u32, 0x9abc_def0, 0x3];
        let b = Bits::from_u32_words(66, &w);
        assert_eq!(b.to_u32_words(), vec![0x1234_5678, 0x9abc_def0, 0x3]);
        let c = Bits::concat_msb(&[Bits::from_u64(4, 0xa), Bits::from_u64(8, 0x5c)]);
        assert_eq!(c.width(), 12);
        assert_eq!(c.to_u64(), 0xa5c);
        assert_eq!(c.to_hex(), "a5c");
    }
}
