//! proptest strategies producing `Vec<u32>` of word-bit-limited elements for the data classes
//! of docs/FORMATS.md, ZVC §5.3. Every strategy takes the element width (`8`, `16` or `32`) and a
//! non-empty length range, and yields vectors whose elements fit in `word_bits`.

use super::synthetic;
use super::Layout;
use proptest::collection::vec;
use proptest::prelude::*;
use std::ops::Range;

fn max_for(word_bits: u32) -> u32 {
    if word_bits >= 32 {
        u32::MAX
    } else {
        (1u32 << word_bits) - 1
    }
}

/// Keep the top `word_bits` bits of a 32-bit pattern (FP32 → bfloat16-like for 16 bits).
fn narrow(x: u32, word_bits: u32) -> u32 {
    if word_bits >= 32 {
        x
    } else {
        x >> (32 - word_bits)
    }
}

/// All-zero vectors.
pub fn all_zero(len: Range<usize>) -> BoxedStrategy<Vec<u32>> {
    len.prop_map(|n| vec![0u32; n]).boxed()
}

/// Vectors with every element non-zero.
pub fn all_nonzero(word_bits: u32, len: Range<usize>) -> BoxedStrategy<Vec<u32>> {
    vec(1..=max_for(word_bits), len).boxed()
}

/// i.i.d. zeros with a density drawn from `0..=1` per vector.
pub fn uniform_density(word_bits: u32, len: Range<usize>) -> BoxedStrategy<Vec<u32>> {
    let max = max_for(word_bits);
    (0.0f64..=1.0, vec((0.0f64..1.0, 1..=max), len))
        .prop_map(|(d, v)| {
            v.into_iter()
                .map(|(u, x)| if u < d { x } else { 0 })
                .collect()
        })
        .boxed()
}

/// Clustered zero and non-zero runs (run lengths 1..=96), trimmed or zero-padded to a length
/// drawn from `len`.
pub fn clustered_zero_runs(word_bits: u32, len: Range<usize>) -> BoxedStrategy<Vec<u32>> {
    let max = max_for(word_bits);
    let max_runs = len.end.max(1);
    (len, vec((any::<bool>(), 1usize..=96, 1..=max), 0..max_runs))
        .prop_map(|(n, runs)| {
            let mut out = Vec::with_capacity(n);
            for (zero, r, x) in runs {
                if out.len() >= n {
                    break;
                }
                let r = r.min(n - out.len());
                out.extend(std::iter::repeat_n(if zero { 0 } else { x }, r));
            }
            out.resize(n, 0);
            out
        })
        .boxed()
}

/// ReLU-activation-like data (a `[1, c, 8, 8]` tensor from [`synthetic::relu_tensor`] with
/// sparsity drawn from `0..=1`, truncated to the drawn length; FP32 narrowed for < 32 bits).
pub fn relu_like(word_bits: u32, len: Range<usize>) -> BoxedStrategy<Vec<u32>> {
    (len, 0.0f64..=1.0, any::<u64>())
        .prop_map(move |(n, s, seed)| {
            let c = n.div_ceil(64).max(1);
            let mut v = synthetic::relu_tensor([1, c, 8, 8], s, Layout::Nchw, seed);
            v.truncate(n);
            v.into_iter().map(|x| narrow(x, word_bits)).collect()
        })
        .boxed()
}

/// FP32 data containing −0.0 (`0x8000_0000`), denormals, NaNs, ±Inf, zeros and normal values
/// (narrowed to the top `word_bits` bits for < 32-bit elements).
pub fn float_specials(word_bits: u32, len: Range<usize>) -> BoxedStrategy<Vec<u32>> {
    let elem = prop_oneof![
        3 => Just(0u32),
        2 => Just(0x8000_0000u32),
        1 => Just(0x7f80_0000u32),
        1 => Just(0xff80_0000u32),
        1 => Just(0x7fc0_0000u32),
        1 => 0x7f80_0001u32..=0x7fff_ffff,
        2 => 1u32..0x0080_0000,
        1 => 0x8000_0001u32..0x8080_0000,
        3 => any::<f32>().prop_map(f32::to_bits),
    ];
    vec(elem.prop_map(move |x| narrow(x, word_bits)), len).boxed()
}

/// Any ZVC stimulus: a mix of all the classes above, lengths `0..max_len` (`max_len ≥ 1`).
pub fn any_zvc_data(word_bits: u32, max_len: usize) -> BoxedStrategy<Vec<u32>> {
    let l = 0..max_len.max(1);
    prop_oneof![
        1 => all_zero(l.clone()),
        1 => all_nonzero(word_bits, l.clone()),
        3 => uniform_density(word_bits, l.clone()),
        2 => clustered_zero_runs(word_bits, l.clone()),
        2 => relu_like(word_bits, l.clone()),
        2 => float_specials(word_bits, l),
    ]
    .boxed()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::zvc::{self, ZvcParams};

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(200))]

        #[test]
        fn zvc_roundtrip_any_class(
            (p, x) in prop_oneof![Just(8u32), Just(16u32), Just(32u32)].prop_flat_map(|wb| {
                let windows: Vec<usize> = (1..=256 / wb as usize).map(|k| k * wb as usize).collect();
                (proptest::sample::select(windows), any_zvc_data(wb, 600))
                    .prop_map(move |(window, x)| (ZvcParams { word_bits: wb, window }, x))
            })
        ) {
            prop_assert!(x.iter().all(|&e| e <= p.max_elem()));
            let s = zvc::compress(&p, &x).unwrap();
            prop_assert_eq!(s.len(), zvc::compressed_size(&p, &x));
            prop_assert_eq!(zvc::decompress(&p, &s, x.len()).unwrap(), x);
        }

        #[test]
        fn lengths_and_widths(x in clustered_zero_runs(8, 5..50), y in relu_like(16, 1..300)) {
            prop_assert!((5..50).contains(&x.len()));
            prop_assert!(x.iter().all(|&e| e <= 0xff));
            prop_assert!((1..300).contains(&y.len()));
            prop_assert!(y.iter().all(|&e| e <= 0xffff));
        }

        #[test]
        fn specials_keep_negative_zero(x in float_specials(32, 200..201)) {
            // −0.0 must be counted non-zero by the size formula
            let nnz = x.iter().filter(|&&e| e != 0).count();
            prop_assert_eq!(zvc::compressed_size(&ZvcParams::default(), &x), 4 * 7 + 4 * nnz);
        }
    }
}
