//! Instance families as `generate` loops.
//!
//! The members of a family ([`crate::hdl::ModuleBuilder::instance_array`]) are split into
//! runs: a run is a stretch of at least two consecutive members whose every connection is
//! either the same for all of them or follows the index `i` as `base[a*i + b +: w]` (a slice)
//! or `arr[a*i + b]` (an array element). A run is written as one loop; a member outside every
//! run (an edge lane wired to a constant, say) is written as a plain instance.

use super::super::expr::Expr;
use super::super::module::{Instance, Module};
use super::loops::{bind_consts, label, longest_run, shape_of, shape_of_signal, write_loop, Shape};
use super::{emit_instance, statement};
use std::fmt::Write as _;

/// One connection of a member: port, shape, and the input expression (`None` for outputs and
/// the clock and reset, whose nets print as their names).
type Conn<'a> = (String, Shape, Option<&'a Expr>);

/// The connections of one member in port order.
fn shapes<'a>(m: &'a Module, inst: &'a Instance) -> Vec<Conn<'a>> {
    super::connections(m, inst)
        .into_iter()
        .map(|(port, e, net)| {
            let out = inst.outputs.iter().find(|(p, _)| *p == port);
            let shape = match (e, out) {
                (Some(e), _) => shape_of(m, e),
                (None, Some((_, id))) => shape_of_signal(m, id.index),
                (None, None) => Shape::Other(net),
            };
            (port, shape, e)
        })
        .collect()
}

/// Writes family `f` of `m`: its runs as generate loops (labels unique among `labels`), the
/// other members as instances. Returns whether it wrote a loop.
pub(super) fn emit(m: &Module, f: usize, labels: &mut Vec<String>, o: &mut String) -> bool {
    let idx: Vec<usize> = (0..m.instances.len())
        .filter(|&i| m.instances[i].family.map(|(g, _)| g) == Some(f))
        .collect();
    let members: Vec<_> = idx.iter().map(|&i| shapes(m, &m.instances[i])).collect();
    let name = &m.families[f].name;
    let base = name.strip_prefix("u_").unwrap_or(name);
    let mut looped = false;
    let mut k = 0;
    while k < members.len() {
        let cands: Vec<(i64, Vec<Shape>)> = members[k..]
            .iter()
            .enumerate()
            .map(|(j, c)| ((k + j) as i64, c.iter().map(|x| x.1.clone()).collect()))
            .collect();
        let (len, rules) = longest_run(&cands);
        if len < 2 {
            emit_instance(m, idx[k], o);
            k += 1;
            continue;
        }
        looped = true;
        let (texts, decls) = bind_consts(m, &rules);
        let mut body: String = decls.iter().map(|l| format!("      {}\n", l)).collect();
        let _ = writeln!(body, "      {} {} (", m.instances[idx[k]].module.name, name);
        let n = texts.len();
        for (j, (t, (port, shape, e))) in texts.into_iter().zip(&members[k]).enumerate() {
            let sep = if j + 1 == n { ")" } else { ")," };
            match (t, e) {
                (Some(t), _) => {
                    let _ = writeln!(body, "        .{}({}{}", port, t, sep);
                }
                (None, Some(e)) => statement(&mut body, 8, &format!(".{}(", port), e, sep),
                (None, None) => {
                    let _ = writeln!(body, "        .{}({}{}", port, shape.text(), sep);
                }
            }
        }
        body.push_str("      );\n");
        let label = label(labels, base, k as i64);
        write_loop(o, k as i64, (k + len) as i64, &label, &body);
        k += len;
    }
    looped
}
