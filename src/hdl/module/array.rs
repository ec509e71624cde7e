//! Arrays of signals and families of instances: the builder's words for regular structure.
//!
//! An array is a list of same-width signals that the emitter declares once, as
//! `wire [W-1:0] x [0:N-1];` or `reg [W-1:0] x_q [0:N-1];`, and reads as `x[k]`. Its elements
//! are ordinary signals, so the interpreter, the checks and every other pass see no
//! difference. A family is a list of instances of one module whose outputs are arrays; the
//! emitter writes each run of members whose connections follow the index as one
//! `generate` loop (see [`crate::hdl::emit`]).

use super::{
    BTreeMap, Bits, Expr, Family, Inst, Module, ModuleBuilder, Net, NetArray, Reg, RegInfo, SigId,
    SigKind,
};
use std::sync::Arc;

impl ModuleBuilder {
    /// Claims the genvar's name with the module's first array or family (the emitter may
    /// write loops over them).
    fn claim_genvar(&mut self) {
        if self.m.arrays.is_empty() && self.m.families.is_empty() {
            self.claim(super::GENVAR);
            self.claim(super::LOOPVAR);
        }
    }

    /// Declares array `name` (claimed like a signal name) and returns its index.
    fn add_array(&mut self, name: &str, width: u32, len: u32, kind: SigKind) -> usize {
        self.claim_genvar();
        self.claim(name);
        if len == 0 {
            self.problems
                .push(format!("array `{}` has no elements", name));
        }
        self.m.arrays.push(NetArray {
            name: name.into(),
            width,
            len,
            kind,
        });
        self.m.arrays.len() - 1
    }

    /// Adds element `k` of array `array` as a signal named `<array>[k]`.
    pub(super) fn add_element(&mut self, array: usize, k: u32) -> (SigId, Expr) {
        let a = &self.m.arrays[array];
        let name: Arc<str> = format!("{}[{}]", a.name, k).into();
        let (width, kind) = (a.width, a.kind.clone());
        self.push_signal(name, width, kind, Some((array, k)))
    }

    /// Declares the wire array `name` (`wire [W-1:0] name [0:N-1]`) with element `k` driven
    /// by `elems[k]`, and returns the elements (they print as `name[k]`). The elements must
    /// all have one width.
    pub fn wire_array(&mut self, name: &str, elems: &[Expr]) -> Vec<Expr> {
        let width = elems.first().map_or(1, Expr::width);
        let nets = self.wire_array_decl(name, width, elems.len() as u32);
        for (n, e) in nets.iter().zip(elems) {
            self.drive(n, e);
        }
        nets.iter().map(Net::expr).collect()
    }

    /// Declares the wire array `name` of `len` elements of `width` bits, each to be driven
    /// later with [`ModuleBuilder::drive`].
    pub fn wire_array_decl(&mut self, name: &str, width: u32, len: u32) -> Vec<Net> {
        let a = self.add_array(name, width, len, SigKind::Wire);
        (0..len)
            .map(|k| {
                let (id, e) = self.add_element(a, k);
                Net { id, e }
            })
            .collect()
    }

    /// Declares the register array `name` (`reg [W-1:0] name [0:N-1]`, conventionally
    /// `x_q`, with next state `x_d[k]`) of `len` registers with reset value `reset` (`None`:
    /// no reset). Give each element its next state with [`ModuleBuilder::next`].
    pub fn reg_array(&mut self, name: &str, width: u32, len: u32, reset: Option<u64>) -> Vec<Reg> {
        let a = self.add_array(name, width, len, SigKind::Reg);
        self.claim(&super::d_name(name));
        self.m.has_clock = true;
        (0..len)
            .map(|k| {
                let (id, q) = self.add_element(a, k);
                self.m.signals[id.index].reg = Some(RegInfo {
                    reset: reset.map(|r| Bits::from_u64(width, r)),
                    next: None,
                    enable: None,
                    keep: false,
                    case: None,
                    lanes: None,
                });
                self.m.items.push(super::Item::Signal(id.index));
                Reg { id, q }
            })
            .collect()
    }

    /// [`ModuleBuilder::reg_array`] with element `k`'s next state `nexts[k]` under `enable`
    /// (the array form of [`ModuleBuilder::reg_next`]); returns the elements' outputs. The
    /// next states must all have one width.
    pub fn reg_array_next(
        &mut self,
        name: &str,
        reset: Option<u64>,
        nexts: &[Expr],
        enable: Option<&Expr>,
    ) -> Vec<Expr> {
        let width = nexts.first().map_or(1, Expr::width);
        let regs = self.reg_array(name, width, nexts.len() as u32, reset);
        for (r, v) in regs.iter().zip(nexts) {
            self.next(r, v, enable);
        }
        regs.iter().map(|r| r.q()).collect()
    }

    /// `len` instances of `module`, named `<name>0`, `<name>1`, ... (`<name>_0`, ... when
    /// `name` ends in a digit); `inputs(k)` connects
    /// instance `k`. Output `p` of instance `k` is element `k` of the array `<name>_<p>`
    /// (read through the returned handles as with [`ModuleBuilder::instance`]). The emitter
    /// writes runs of instances whose connections are the same for all, or an index-affine
    /// slice or array element, as a `generate` loop.
    pub fn instance_array<'a>(
        &mut self,
        module: &Arc<Module>,
        name: &str,
        len: u32,
        mut inputs: impl FnMut(u32) -> Vec<(&'a str, Expr)>,
    ) -> Vec<Inst> {
        self.claim_genvar();
        let family = self.m.families.len();
        self.m.families.push(Family {
            name: name.to_string(),
            len,
        });
        let mut arrays = BTreeMap::new();
        for p in module.ports() {
            if p.dir == super::Dir::Out {
                let a = self.add_array(
                    &format!("{}_{}", name, p.name),
                    p.width,
                    len,
                    SigKind::InstOut,
                );
                arrays.insert(p.name.clone(), a);
            }
        }
        (0..len)
            .map(|k| {
                let conns = inputs(k);
                let member = Some((&arrays, family, k));
                // `u_lane3`; `u_ps4_c3_0` when the name ends in a digit.
                let sep = if name.ends_with(|c: char| c.is_ascii_digit()) {
                    "_"
                } else {
                    ""
                };
                self.instance_with(module, &format!("{}{}{}", name, sep, k), &conns, member)
            })
            .collect()
    }
}
