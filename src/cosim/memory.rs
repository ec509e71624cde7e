//! A reactive memory for the N-channel harness: it takes the design's read and write
//! requests on one channel and answers on another after a random latency, in order or
//! reordered among the answers that are due, and records every write.
//!
//! Request beats carry the fields [`MemFields`] names (address, optional write enable, write
//! data and tag), read by their layout names. A response beat carries the read data and,
//! when the memory echoes a tag, that tag, under the response layout's names. Reads of
//! never-written addresses return [`MemResponder::with_init`]'s function of the address
//! (zero by default).

use super::harness::{Fields, Responder};
use super::stream::Beat;
use rand::Rng;
use rand_chacha::ChaCha8Rng;
use std::cell::RefCell;
use std::collections::HashMap;
use std::rc::Rc;

/// The layout field names of the memory's requests and responses.
#[derive(Clone, Debug)]
pub struct MemFields {
    /// Request address (at most 64 bits).
    pub addr: &'static str,
    /// Request write enable (1: write), `None`: read-only requests.
    pub we: Option<&'static str>,
    /// Request write data.
    pub wdata: Option<&'static str>,
    /// A request field the response echoes, and the response field that carries it.
    pub tag: Option<(&'static str, &'static str)>,
    /// Response read data.
    pub rdata: &'static str,
}

/// Timing and ordering of the answers.
#[derive(Clone, Debug)]
pub struct MemTiming {
    /// Smallest latency in cycles from request to the earliest answer.
    pub min_latency: u64,
    /// Largest latency.
    pub max_latency: u64,
    /// Answer any due request (chosen at random) instead of the oldest first.
    pub reorder: bool,
    /// Writes are acknowledged with a response beat (read data zero).
    pub write_ack: bool,
}

impl Default for MemTiming {
    fn default() -> Self {
        MemTiming {
            min_latency: 1,
            max_latency: 20,
            reorder: false,
            write_ack: false,
        }
    }
}

struct Pending {
    due: u64,
    issued: u64,
    beat: Beat,
}

/// The memory (see the module documentation).
pub struct MemResponder {
    fields: MemFields,
    timing: MemTiming,
    data_words: usize,
    store: HashMap<u64, Vec<u32>>,
    init: Box<dyn Fn(u64) -> Vec<u32>>,
    pending: Vec<Pending>,
    writes: Vec<(u64, Vec<u32>)>,
    reads: u64,
}

impl MemResponder {
    /// A memory whose words are `data_words` 32-bit words.
    pub fn new(fields: MemFields, timing: MemTiming, data_words: usize) -> MemResponder {
        MemResponder {
            fields,
            timing,
            data_words,
            store: HashMap::new(),
            init: Box::new(move |_| vec![0; data_words]),
            pending: Vec::new(),
            writes: Vec::new(),
            reads: 0,
        }
    }

    /// Contents of never-written addresses.
    pub fn with_init(mut self, f: impl Fn(u64) -> Vec<u32> + 'static) -> MemResponder {
        self.init = Box::new(f);
        self
    }

    /// The word at `addr` now.
    pub fn read(&self, addr: u64) -> Vec<u32> {
        self.store
            .get(&addr)
            .cloned()
            .unwrap_or_else(|| (self.init)(addr))
    }

    /// Every write so far, in order: (address, data).
    pub fn writes(&self) -> &[(u64, Vec<u32>)] {
        &self.writes
    }

    /// Reads served so far.
    pub fn reads(&self) -> u64 {
        self.reads
    }
}

impl Responder for MemResponder {
    fn request(&mut self, beat: &Fields<'_>, cycle: u64, rng: &mut ChaCha8Rng) {
        let addr = beat.u64(self.fields.addr);
        let write = self.fields.we.is_some_and(|f| beat.u64(f) & 1 == 1);
        let mut data = if write {
            let mut d = self
                .fields
                .wdata
                .map(|f| beat.get(f).to_vec())
                .unwrap_or_default();
            d.resize(self.data_words, 0);
            self.store.insert(addr, d.clone());
            self.writes.push((addr, d));
            if !self.timing.write_ack {
                return;
            }
            vec![0; self.data_words]
        } else {
            self.reads += 1;
            self.read(addr)
        };
        data.resize(self.data_words, 0);
        let mut out = Beat::new().with(self.fields.rdata, data);
        if let Some((req, rsp)) = self.fields.tag {
            out = out.with(rsp, beat.get(req).to_vec());
        }
        let lo = self.timing.min_latency;
        let hi = self.timing.max_latency.max(lo);
        self.pending.push(Pending {
            due: cycle + rng.gen_range(lo..=hi),
            issued: cycle,
            beat: out,
        });
    }

    fn respond(&mut self, cycle: u64, rng: &mut ChaCha8Rng) -> Option<Beat> {
        let due: Vec<usize> = (0..self.pending.len())
            .filter(|&i| self.pending[i].due <= cycle)
            .collect();
        let pick = if self.timing.reorder {
            *due.get(rng.gen_range(0..due.len().max(1)))?
        } else {
            // In order: only the oldest request, once it is due.
            (self.pending.first()?.due <= cycle).then_some(0)?
        };
        Some(self.pending.remove(pick).beat)
    }

    fn outstanding(&self) -> usize {
        self.pending.len()
    }

    fn oldest(&self) -> Option<u64> {
        self.pending.iter().map(|p| p.issued).min()
    }

    /// Reads not answered yet are lost with the design's reset; the memory contents and
    /// the writes it has taken stay.
    fn reset(&mut self) {
        self.pending.clear();
    }
}

/// A [`MemResponder`] the bench keeps a handle to while the harness drives it (to read the
/// final contents, or to rebuild a model after a reset).
#[derive(Clone)]
pub struct SharedMem(pub Rc<RefCell<MemResponder>>);

impl SharedMem {
    /// Shares `m`.
    pub fn new(m: MemResponder) -> SharedMem {
        SharedMem(Rc::new(RefCell::new(m)))
    }
}

impl Responder for SharedMem {
    fn request(&mut self, beat: &Fields<'_>, cycle: u64, rng: &mut ChaCha8Rng) {
        self.0.borrow_mut().request(beat, cycle, rng)
    }
    fn respond(&mut self, cycle: u64, rng: &mut ChaCha8Rng) -> Option<Beat> {
        self.0.borrow_mut().respond(cycle, rng)
    }
    fn outstanding(&self) -> usize {
        self.0.borrow().outstanding()
    }
    fn oldest(&self) -> Option<u64> {
        self.0.borrow().oldest()
    }
    fn reset(&mut self) {
        self.0.borrow_mut().reset()
    }
}
