//! Instance families as `generate` loops.
//!
//! The members of a family ([`crate::hdl::ModuleBuilder::instance_array`]) are split into
//! runs: a run is a stretch of at least two consecutive members whose every connection is
//! either the same for all of them or follows the index `i` as `base[a*i + b +: w]` (a slice)
//! or `arr[a*i + b]` (an array element). A run is written as one loop; a member outside every
//! run (an edge lane wired to a constant, say) is written as a plain instance.

use super::super::expr::Expr;
use super::super::module::{Instance, Module, GENVAR};
use super::loops::{shape_of, Rule, Shape};
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
            let shape = match e {
                Some(e) => shape_of(m, e),
                None => match net.split_once('[') {
                    Some((array, k)) => Shape::Elem {
                        array: array.to_string(),
                        k: k.trim_end_matches(']').parse().unwrap_or(-1),
                    },
                    None => Shape::Other(net),
                },
            };
            (port, shape, e)
        })
        .collect()
}

/// The end (exclusive) of the longest run starting at member `k0`, and its rules.
fn run(members: &[Vec<Conn<'_>>], k0: usize) -> (usize, Vec<Rule>) {
    if k0 + 1 >= members.len() {
        return (k0 + 1, Vec::new());
    }
    let (a, b) = (&members[k0], &members[k0 + 1]);
    let rules: Option<Vec<Rule>> = a
        .iter()
        .zip(b)
        .map(|((_, s0, _), (_, s1, _))| Rule::of(s0, k0 as i64, s1, k0 as i64 + 1))
        .collect();
    let Some(rules) = rules else {
        return (k0 + 1, Vec::new());
    };
    let mut end = k0 + 2;
    while end < members.len()
        && rules
            .iter()
            .zip(&members[end])
            .all(|(r, (_, s, _))| r.fits(s, end as i64))
    {
        end += 1;
    }
    (end, rules)
}

/// Writes family `f` of `m`: its runs as generate loops, the other members as instances.
/// Returns whether it wrote a loop.
pub(super) fn emit(m: &Module, f: usize, o: &mut String) -> bool {
    let idx: Vec<usize> = (0..m.instances.len())
        .filter(|&i| m.instances[i].family.map(|(g, _)| g) == Some(f))
        .collect();
    let members: Vec<_> = idx.iter().map(|&i| shapes(m, &m.instances[i])).collect();
    let name = &m.families[f].name;
    let base = name.strip_prefix("u_").unwrap_or(name);
    let mut k = 0;
    let mut loops = 0;
    while k < members.len() {
        let (end, rules) = run(&members, k);
        if end - k < 2 {
            emit_instance(m, idx[k], o);
            k += 1;
            continue;
        }
        let label = if loops == 0 {
            format!("g_{}", base)
        } else {
            format!("g_{}_{}", base, k)
        };
        loops += 1;
        let inst = &m.instances[idx[k]];
        let _ = writeln!(o, "  generate");
        let _ = writeln!(
            o,
            "    for ({g} = {}; {g} < {}; {g} = {g} + 1) begin : {}",
            k,
            end,
            label,
            g = GENVAR
        );
        let _ = writeln!(o, "      {} {} (", inst.module.name, name);
        let n = rules.len();
        for (j, (rule, (port, shape, e))) in rules.iter().zip(&members[k]).enumerate() {
            let sep = if j + 1 == n { ")" } else { ")," };
            match (rule.loop_text(), e) {
                (Some(t), _) => {
                    let _ = writeln!(o, "        .{}({}{}", port, t, sep);
                }
                (None, Some(e)) => statement(o, 8, &format!(".{}(", port), e, sep),
                (None, None) => {
                    let _ = writeln!(o, "        .{}({}{}", port, shape.text(), sep);
                }
            }
        }
        let _ = writeln!(o, "      );");
        let _ = writeln!(o, "    end");
        let _ = writeln!(o, "  endgenerate");
        k = end;
    }
    loops > 0
}
