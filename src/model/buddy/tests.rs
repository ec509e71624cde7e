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
    // "Fits fully on device if S in ..." (FORMATS §2.2 table).
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

mod profiler {
    use super::super::profile::*;
    use super::super::{SizeCode, Target};

    fn alloc(name: &str, snaps: &[&[(SizeCode, usize)]]) -> Allocation {
        Allocation {
            name: name.into(),
            snapshots: snaps
                .iter()
                .map(|s| {
                    s.iter()
                        .flat_map(|&(c, n)| std::iter::repeat_n(c, n))
                        .collect()
                })
                .collect(),
        }
    }

    #[test]
    fn largest_target_under_the_threshold() {
        use SizeCode::*;
        let p = ProfileParams::default();
        let a = [
            // 80 % at most 32 B, 20 % 64 B: 4x has 20 % buddy accesses.
            alloc("ints", &[&[(B32, 80), (B64, 20)]]),
            // 50 % 64 B, 50 % raw: 2x would be 50 %, 4/3x 50 %: 1x.
            alloc("floats", &[&[(B64, 50), (Raw, 50)]]),
            // Mostly zero in every snapshot: 16x.
            alloc(
                "zeros",
                &[&[(Zero, 95), (Raw, 5)], &[(Zero, 90), (Le8, 10)]],
            ),
            // Mostly zero in one snapshot only: not 16x; 4x has 25 % over 32 B.
            alloc("drift", &[&[(Zero, 100)], &[(B32, 50), (B64, 50)]]),
            // 2x: 70 % at most 64 B.
            alloc("mixed", &[&[(B64, 70), (B96, 30)]]),
        ];
        let c = profile(&a, &p).unwrap();
        let t: Vec<Target> = c.iter().map(|c| c.target).collect();
        assert_eq!(
            t,
            [Target::X4, Target::X1, Target::X16, Target::X4, Target::X2]
        );
        assert!((c[0].buddy_fraction - 0.2).abs() < 1e-12);
        assert!((c[2].buddy_fraction - 0.025).abs() < 1e-12);
        assert!((c[3].buddy_fraction - 0.25).abs() < 1e-12);
        // A tighter threshold lowers targets.
        let tight = ProfileParams {
            threshold: 0.1,
            ..p
        };
        let c = profile(&a, &tight).unwrap();
        assert_eq!(c[0].target, Target::X2);
        assert_eq!(c[4].target, Target::X4_3);
    }

    #[test]
    fn the_overall_ratio_stays_below_four() {
        use SizeCode::*;
        let p = ProfileParams::default();
        // Two 16x allocations alone would give 16x overall.
        let a = [
            alloc("z1", &[&[(Zero, 100)]]),
            alloc("z2", &[&[(Zero, 300)]]),
        ];
        let c = profile(&a, &p).unwrap();
        let t: Vec<Target> = c.iter().map(|c| c.target).collect();
        let r = overall_ratio(&[100, 300], &t);
        assert!(r < 4.0, "{t:?} {r}");
        // The highest target drops first, the larger allocation on a tie: 16x/16x ->
        // 16x/4x (4.9x) -> 4x/4x (4.0x) -> 4x/2x (2.3x).
        assert_eq!(t, [Target::X4, Target::X2]);
        assert!((r - 400.0 / 175.0).abs() < 1e-12);
        assert!((overall_ratio(&[100, 100], &[Target::X2, Target::X1]) - 4.0 / 3.0).abs() < 1e-12);
        // Bad settings and inputs are errors.
        let bad = ProfileParams {
            threshold: 1.5,
            ..p
        };
        assert!(profile(&a, &bad).is_err());
        let ragged = alloc("r", &[&[(Zero, 2)], &[(Zero, 3)]]);
        assert!(profile(&[ragged], &p).is_err());
    }
}

mod system_model {
    use super::super::system::*;
    use super::super::Target;

    fn block(f: impl Fn(usize) -> u32) -> Vec<u8> {
        (0..32).flat_map(|i| f(i).to_le_bytes()).collect()
    }

    #[test]
    fn reads_return_what_was_written_and_count_buddy_traffic() {
        use rand::{Rng, SeedableRng};
        let mut rng = rand::rngs::StdRng::seed_from_u64(9);
        let mut s = System::new(&SystemParams::default()).unwrap();
        let a2 = s.allocate(1024, Target::X2);
        let a1 = s.allocate(64, Target::X1);
        let a16 = s.allocate(256, Target::X16);
        let zero = vec![0u8; 128];
        let ramp = block(|i| 1000 + i as u32); // 31 bits: <= 8 B
        let small = block(|i| (i as u32).wrapping_mul(0x9E37_79B1) >> 28); // 4-bit values: 32 B
        let rnd: Vec<u8> = (0..128).map(|_| rng.gen()).collect(); // raw
        s.write(a2, 0, &zero).unwrap();
        s.write(a2, 1, &ramp).unwrap();
        s.write(a2, 2, &small).unwrap();
        s.write(a2, 3, &rnd).unwrap();
        let c = s.counts();
        assert_eq!((c.accesses, c.zero_accesses, c.buddy_accesses), (4, 1, 1));
        // Raw at 2x: sectors 0-1 on the device, two pieces over the link.
        assert_eq!((c.device_sectors, c.buddy_pieces), (1 + 1 + 2, 2));
        assert_eq!(c.link_bytes, 64 + 32);
        for (e, b) in [(0, &zero), (1, &ramp), (2, &small), (3, &rnd)] {
            assert_eq!(&s.read(a2, e).unwrap(), b);
        }
        // Never written: zeros. Uncompressed pages move whole entries, no metadata.
        assert_eq!(s.read(a2, 500).unwrap(), zero);
        let before = s.meta_stats();
        s.write(a1, 5, &rnd).unwrap();
        assert_eq!(s.read(a1, 5).unwrap(), rnd);
        assert_eq!(s.meta_stats(), before);
        // 16x: the ramp fits the 8 B slot; 32 B needs one buddy piece.
        let b0 = s.counts().buddy_accesses;
        s.write(a16, 0, &ramp).unwrap();
        assert_eq!(s.counts().buddy_accesses, b0);
        s.write(a16, 1, &small).unwrap();
        assert_eq!(s.counts().buddy_accesses, b0 + 1);
        // Partial write: read-modify-write of sector 2.
        let mut upd = rnd.clone();
        upd[64..96].fill(0xAB);
        s.write_partial(a2, 2, 0b0100, &upd).unwrap();
        let mut want = small.clone();
        want[64..96].fill(0xAB);
        assert_eq!(s.read(a2, 2).unwrap(), want);
        assert_eq!(s.counts().rmws, 1);
        // Errors, not panics.
        assert!(s.read(a2, 1024).is_err());
        assert!(s.read(9, 0).is_err());
        assert!(s.write(a2, 0, &[0u8; 64]).is_err());
    }

    #[test]
    fn metadata_slices_hit_on_neighbours_and_energy_saves_on_compressible_data() {
        let mut s = System::new(&SystemParams::default()).unwrap();
        let a = s.allocate(1 << 14, Target::X4);
        let ramp = block(|i| 1000 + i as u32);
        // A streaming pass: one 32 B metadata sector covers 64 entries, spread over 8 slices:
        // one miss per 8 x 64 entries.
        for e in 0..(1 << 14) {
            s.write(a, e, &ramp).unwrap();
        }
        let m = s.meta_stats();
        assert_eq!(m.misses, (1 << 14) / 64);
        assert!(m.hit_rate() > 0.98, "{m:?}");
        let c = s.counts();
        assert_eq!(c.buddy_accesses, 0);
        assert!(c.energy_pj < 0.5 * c.baseline_pj, "{c:?}");
        // Random data at 4x: every access reaches buddy memory and costs more than the
        // baseline.
        let mut t = System::new(&SystemParams::default()).unwrap();
        let b = t.allocate(256, Target::X4);
        for e in 0..256 {
            let r: Vec<u8> = (0..128)
                .map(|i| (e * 131 + i * 71) as u8 ^ (i * i) as u8)
                .collect();
            t.write(b, e, &r).unwrap();
        }
        let c = t.counts();
        assert_eq!(c.buddy_fraction(), 1.0);
        assert!(c.energy_pj > c.baseline_pj, "{c:?}");
    }
}
