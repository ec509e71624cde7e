//! The cache model against a flat memory: every answer equals what a plain array of fields
//! would return in request order, fills arrive in random order, and after a flush the
//! memory holds every write.

use super::*;
use crate::trace::lookups::{field, Pattern, PATTERNS};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::collections::HashMap;

fn init_byte(sector: u64, i: usize) -> u8 {
    (sector.wrapping_mul(131) as u8) ^ (i as u8).wrapping_mul(29)
}

/// Sector contents of a memory that starts with `init_byte`.
fn read_sector(mem: &HashMap<u64, Vec<u8>>, p: &CacheParams, s: u64) -> Vec<u8> {
    mem.get(&s).cloned().unwrap_or_else(|| {
        (0..p.sector_bytes as usize)
            .map(|i| init_byte(s, i))
            .collect()
    })
}

fn field_value(mem: &HashMap<u64, Vec<u8>>, p: &CacheParams, f: u64) -> u64 {
    let s = p.sector_of(f);
    let bit = f % p.fields_per_sector() * p.field_bits as u64;
    get_bits(&read_sector(mem, p, s), bit, p.field_bits)
}

/// Runs `n` lookups; returns the model's counters.
fn drive(p: &CacheParams, pat: Pattern, n: u64, seed: u64) -> CacheStats {
    let mut c = Cache::new(p).unwrap();
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut mem: HashMap<u64, Vec<u8>> = HashMap::new();
    let mut reference: HashMap<u64, u64> = HashMap::new();
    let mut expect: HashMap<u32, (u64, bool)> = HashMap::new();
    let mut pending: Vec<u64> = Vec::new();
    let (mut issued, mut answered, mut next_id) = (0u64, 0u64, 0u32);
    let mut retry: Option<Request> = None;
    let mut handle = |evs: Vec<Event>,
                      mem: &mut HashMap<u64, Vec<u8>>,
                      pending: &mut Vec<u64>,
                      expect: &mut HashMap<u32, (u64, bool)>| {
        for e in evs {
            match e {
                Event::Response { id, hit, data } => {
                    let (want, was_hit) = expect.remove(&id).expect("answer to a known request");
                    assert_eq!(data, want, "request {} data", id);
                    assert_eq!(hit, was_hit, "request {} hit flag", id);
                    answered += 1;
                }
                Event::MemRead { sector } => pending.push(sector),
                Event::MemWrite { sector, data } => {
                    mem.insert(sector, data);
                }
            }
        }
    };
    while issued < n || !pending.is_empty() {
        let do_fill = !pending.is_empty() && (issued >= n || rng.gen_bool(0.4));
        if do_fill {
            let k = rng.gen_range(0..pending.len());
            let s = pending.swap_remove(k);
            let d = read_sector(&mem, p, s);
            let evs = c.fill(s, &d).unwrap();
            handle(evs, &mut mem, &mut pending, &mut expect);
            continue;
        }
        let r = retry.take().unwrap_or_else(|| {
            let f = field(p, pat, issued, &mut rng);
            let op = if rng.gen_bool(0.3) {
                Op::Write(rng.gen::<u64>())
            } else {
                Op::Read
            };
            next_id = next_id.wrapping_add(1);
            Request {
                id: next_id,
                field: f,
                op,
            }
        });
        let before = c.stats();
        match c.lookup(r) {
            Lookup::Stall => retry = Some(r),
            Lookup::Accepted(evs) => {
                issued += 1;
                let mask = (1u64 << p.field_bits) - 1;
                let cur = *reference
                    .entry(r.field)
                    .or_insert_with(|| field_value(&mem, p, r.field));
                let want = match r.op {
                    Op::Read => cur,
                    Op::Write(v) => {
                        reference.insert(r.field, v & mask);
                        v & mask
                    }
                };
                let hit = c.stats().hits > before.hits;
                expect.insert(r.id, (want, hit));
                handle(evs, &mut mem, &mut pending, &mut expect);
            }
        }
    }
    assert!(
        expect.is_empty(),
        "{} requests never answered",
        expect.len()
    );
    assert_eq!(answered, n);
    for e in c.flush() {
        if let Event::MemWrite { sector, data } = e {
            mem.insert(sector, data);
        }
    }
    for (f, v) in &reference {
        assert_eq!(
            field_value(&mem, p, *f),
            *v,
            "memory field {} after flush",
            f
        );
    }
    let st = c.stats();
    assert_eq!(st.hits + st.misses + st.merges, n);
    assert_eq!(st.fills, st.misses);
    st
}

#[test]
fn both_configurations_match_a_flat_memory_for_every_pattern() {
    for p in [CacheParams::pact12_md(), CacheParams::buddy_slice()] {
        for (i, pat) in PATTERNS.into_iter().enumerate() {
            let st = drive(&p, pat, 50_000, 7 + i as u64);
            // Streaming re-reads each field three times and walks fields in order: mostly hits.
            if matches!(pat, Pattern::Streaming) {
                assert!(st.hit_rate() > 0.9, "{:?} {:?}: {:?}", p, pat, st);
            }
            if matches!(pat, Pattern::HotSet) {
                assert!(st.evictions > 100, "{:?}", st);
            }
        }
    }
}

#[test]
fn true_lru_evicts_the_least_recently_used_way() {
    let p = CacheParams {
        mshrs: 1,
        ..CacheParams::pact12_md()
    };
    let mut c = Cache::new(&p).unwrap();
    let fields_per_line = p.line_bytes as u64 * 8 / p.field_bits as u64;
    // Lines A, B, C all in set 0.
    let line = |k: u64| k * p.sets as u64 * fields_per_line;
    let get = |c: &mut Cache, f: u64| -> bool {
        match c.lookup(Request {
            id: 0,
            field: f,
            op: Op::Read,
        }) {
            Lookup::Accepted(ev) if matches!(ev.first(), Some(Event::MemRead { .. })) => {
                let s = p.sector_of(f);
                c.fill(s, &vec![0; p.sector_bytes as usize]).unwrap();
                false
            }
            Lookup::Accepted(_) => true,
            Lookup::Stall => panic!("stall"),
        }
    };
    assert!(!get(&mut c, line(0))); // A miss
    assert!(!get(&mut c, line(1))); // B miss
    assert!(get(&mut c, line(0))); // A hit: B is now LRU
    assert!(!get(&mut c, line(2))); // C miss evicts B
    assert!(get(&mut c, line(0)));
    assert!(!get(&mut c, line(1)), "B was evicted");
    assert!(!get(&mut c, line(2)), "C was LRU after A, B");
}

#[test]
fn full_mshrs_stall_and_merges_park() {
    let p = CacheParams {
        mshrs: 2,
        mshr_slots: 2,
        ..CacheParams::buddy_slice()
    };
    let mut c = Cache::new(&p).unwrap();
    let fps = p.fields_per_sector();
    let rd = |id, f| Request {
        id,
        field: f,
        op: Op::Read,
    };
    assert!(matches!(c.lookup(rd(1, 0)), Lookup::Accepted(ref e) if e.len() == 1));
    assert_eq!(c.lookup(rd(2, 1)), Lookup::Accepted(Vec::new()), "merge");
    assert_eq!(c.lookup(rd(3, 2)), Lookup::Stall, "MSHR slots full");
    assert!(
        matches!(c.lookup(rd(4, fps)), Lookup::Accepted(_)),
        "second sector"
    );
    assert_eq!(c.lookup(rd(5, 2 * fps)), Lookup::Stall, "no MSHR free");
    let ev = c.fill(0, &vec![0xab; p.sector_bytes as usize]).unwrap();
    assert_eq!(ev.len(), 2, "both parked requests answered: {:?}", ev);
    assert!(matches!(c.lookup(rd(5, 2 * fps)), Lookup::Accepted(_)));
    assert!(
        c.fill(0, &vec![0; p.sector_bytes as usize]).is_err(),
        "no MSHR waits"
    );
    let st = c.stats();
    assert_eq!((st.misses, st.merges, st.stalls), (3, 1, 2));
}

#[test]
fn bad_parameters_are_refused() {
    for p in [
        CacheParams {
            sets: 12,
            ..CacheParams::pact12_md()
        },
        CacheParams {
            ways: 8,
            ..CacheParams::pact12_md()
        },
        CacheParams {
            sector_bytes: 256,
            ..CacheParams::pact12_md()
        },
        CacheParams {
            mshrs: 0,
            ..CacheParams::pact12_md()
        },
    ] {
        assert!(Cache::new(&p).is_err(), "{:?}", p);
    }
}
