use super::*;

#[test]
fn size_codes_follow_the_buckets() {
    assert_eq!(SizeCode::of(true, 10), SizeCode::Zero);
    assert_eq!(SizeCode::of(false, 10), SizeCode::Le8);
    assert_eq!(SizeCode::of(false, 64), SizeCode::Le8);
    assert_eq!(SizeCode::of(false, 65), SizeCode::B32);
    assert_eq!(SizeCode::of(false, 256), SizeCode::B32);
    assert_eq!(SizeCode::of(false, 257), SizeCode::B64);
    assert_eq!(SizeCode::of(false, 768), SizeCode::B96);
    assert_eq!(SizeCode::of(false, 769), SizeCode::Raw);
    assert_eq!(SizeCode::of(false, 1089), SizeCode::Raw);
    for c in SizeCode::ALL {
        assert_eq!(SizeCode::from_bits(c.bits()).unwrap(), c);
    }
    for v in 6..16 {
        assert!(SizeCode::from_bits(v).is_err());
    }
    let buckets: Vec<usize> = SizeCode::ALL.iter().map(|c| c.bucket()).collect();
    assert_eq!(buckets, vec![0, 32, 32, 64, 96, 128]);
}

#[test]
fn split_follows_the_spec_table() {
    // "Fits fully on device if S in ..." (spec §2.2 table).
    let fits = |t: Target| -> Vec<usize> {
        SizeCode::ALL
            .into_iter()
            .filter(|c| split(*c, t).fits_dev)
            .map(|c| c.bytes())
            .collect()
    };
    assert_eq!(fits(Target::X1), vec![0, 8, 32, 64, 96, 128]);
    assert_eq!(fits(Target::X4_3), vec![0, 8, 32, 64, 96]);
    assert_eq!(fits(Target::X2), vec![0, 8, 32, 64]);
    assert_eq!(fits(Target::X4), vec![0, 8, 32]);
    assert_eq!(fits(Target::X16), vec![0, 8]);
    // 2x: sectors 0-1 on the device, 2-3 in buddy memory.
    let s = split(SizeCode::Raw, Target::X2);
    assert_eq!((s.dev_mask, s.bud_mask, s.is_raw), (0b0011, 0b0011, true));
    let s = split(SizeCode::B96, Target::X4);
    assert_eq!((s.dev_mask, s.bud_mask), (0b0001, 0b0011));
    // 16x: the 8 B slot, then 32 B pieces of bytes [8, S).
    let s = split(SizeCode::Raw, Target::X16);
    assert_eq!((s.dev_mask, s.bud_mask, s.n_bud()), (0b0001, 0b1111, 4));
    let s = split(SizeCode::B32, Target::X16);
    assert_eq!((s.dev_mask, s.bud_mask), (0b0001, 0b0001));
    let s = split(SizeCode::Zero, Target::X4);
    assert_eq!((s.dev_mask, s.bud_mask, s.is_zero), (0, 0, true));
    // Every split covers the stored bytes exactly once.
    for c in SizeCode::ALL {
        for t in Target::ALL {
            let s = split(c, t);
            let dev = (s.n_dev() as usize * 32)
                .min(t.device_bytes())
                .min(c.bytes());
            let bud = c.bytes() - dev;
            assert_eq!(s.n_bud() as usize, bud.div_ceil(32), "{c:?} {t:?}");
            assert!(
                s.n_bud() as usize * 32 <= t.buddy_bytes() + 31,
                "{c:?} {t:?}"
            );
        }
    }
}

#[test]
fn targets_and_codes() {
    let d: Vec<usize> = Target::ALL.iter().map(|t| t.device_bytes()).collect();
    assert_eq!(d, vec![128, 96, 64, 32, 8]);
    assert!((Target::X4_3.ratio() - 4.0 / 3.0).abs() < 1e-12);
    for t in Target::ALL {
        assert_eq!(Target::from_code(t.code()).unwrap(), t);
    }
    assert_eq!(Target::X2.code(), 0b010);
    assert!(Target::from_code(0b101).is_err());
}

#[test]
fn offset_widths_of_spec_section_3_2() {
    // A 4x maximum target on a 32 GB GPU: a 96 GB carve-out (3x), 128 GB of data (4x).
    let carve = 96u64 << 30;
    assert_eq!(PageSize::M2.offset_bits_for(carve), 16);
    assert_eq!(PageSize::K64.offset_bits_for(carve), 21);
    assert_eq!(PageSize::K64.offset_bits_for(128 << 30), 21);
    AddrParams::default().validate().unwrap();
    AddrParams::pages_64k().validate().unwrap();
    let bad = AddrParams {
        boff_bits: 30,
        ..AddrParams::default()
    };
    assert!(bad.validate().is_err());
}

#[test]
fn addresses_follow_the_formula() {
    let a = AddrParams::default();
    let base = 0x40_0000_0000u64;
    let gbbr = 0x80_0000_0000u64;
    // Device: page_base + e·D + 32k.
    assert_eq!(a.device_addr(base, 3, Target::X2, 1), base + 3 * 64 + 32);
    assert_eq!(a.device_addr(base, 5, Target::X16, 0), base + 5 * 8);
    // Buddy: GBBR + off·2 MB + e·(128 − D) + 32m.
    assert_eq!(
        a.buddy_addr(gbbr, 7, 3, Target::X4, 2),
        gbbr + 7 * (2 << 20) + 3 * 96 + 64
    );
    assert_eq!(
        a.buddy_addr(gbbr, 1, 16383, Target::X16, 3),
        gbbr + (2 << 20) + 16383 * 120 + 96
    );
    // A page's buddy slots stay inside its carve-out pages.
    for t in Target::ALL {
        let last = a.buddy_addr(0, 0, a.entries_per_page() - 1, t, 0) + t.buddy_bytes() as u64;
        assert!(last <= a.page.bytes(), "{t:?}");
    }
    // The offset field is masked to its width; addresses to pa_bits.
    assert_eq!(a.buddy_addr(0, 1 << 16, 0, Target::X2, 0), 0);
    assert_eq!(a.meta_index(2, 5), 2 * 16384 + 5);
}
