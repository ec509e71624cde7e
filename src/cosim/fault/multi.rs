//! Several faults in one Verilated model, each switched on at run time: a scoreboard test
//! that injects K faults into a unit pays for one Verilator build instead of K.
//!
//! Each fault is a text edit of one emitted file (as for [`super::faulty_dut`]). The edits
//! are merged statement by statement: a changed continuous assignment becomes a chain of
//! `?:` on a select, a changed port connection a `?:` inside the connection, a changed
//! procedural statement an `if`/`else` chain. The select is an extra top-level input,
//! `hz_fault_i` (fault k is on when it holds k + 1, none when 0); modules below the top read
//! it by its hierarchical name. An edit that changes anything else (a declaration, a case
//! item, a line outside any statement) is an error, never a silently missing fault.

use super::super::vdut::{build_spec, VerilatorDut};
use super::super::{build, CosimError, Library, Model, PortDir, PortSpec};
use crate::hdl::Module;
use std::collections::BTreeMap;
use std::sync::Arc;

/// The run-time fault select: an 8-bit top-level input.
pub const SELECT_PORT: &str = "hz_fault_i";

/// One fault: the emitted file it edits (the first whose name starts with `file_prefix`) and
/// the edit.
pub struct Fault<'a> {
    /// Start of the emitted file's name.
    pub file_prefix: &'a str,
    /// The edit; it must change the text.
    pub edit: &'a dyn Fn(&str) -> String,
}

/// One Verilated model of a unit with every fault of a list, selected at run time.
pub struct FaultModel {
    lib: Arc<Library>,
    faults: usize,
}

impl FaultModel {
    /// Builds (at `-O0`, cached like every model) `top` with `faults` merged in.
    pub fn build(top: &Arc<Module>, faults: &[Fault]) -> Result<FaultModel, CosimError> {
        if faults.is_empty() || faults.len() > 255 {
            return Err(CosimError::Spec(format!(
                "{} faults (1 to 255 fit the select)",
                faults.len()
            )));
        }
        let mut spec = build_spec(top, false)?;
        // Per file: the fault numbers and edited texts.
        let mut per_file: BTreeMap<usize, Vec<(usize, String)>> = BTreeMap::new();
        for (k, f) in faults.iter().enumerate() {
            let (i, edited) = super::edit_source(&spec, f.file_prefix, f.edit)
                .map_err(|e| CosimError::Spec(format!("fault {}: {e}", k + 1)))?;
            per_file.entry(i).or_default().push((k + 1, edited));
        }
        let top_file = spec
            .sources
            .iter()
            .position(|(_, v)| module_header(v, &spec.top).is_some())
            .ok_or_else(|| CosimError::Spec(format!("no module {} emitted", spec.top)))?;
        for (i, edits) in per_file {
            let sel = if i == top_file {
                SELECT_PORT.to_string()
            } else {
                format!("{}.{}", spec.top, SELECT_PORT)
            };
            let merged = merge(&spec.sources[i].1, &edits, &sel)
                .map_err(|e| CosimError::Spec(format!("{}: {e}", spec.sources[i].0)))?;
            spec.sources[i].1 = merged;
        }
        let t = &mut spec.sources[top_file].1;
        let at = module_header(t, &spec.top).unwrap_or(0);
        t.insert_str(at, &format!("  input  wire [7:0] {SELECT_PORT},\n"));
        spec.ports.push(PortSpec::new(SELECT_PORT, PortDir::In, 8));
        let lib = super::super::build::with_opt_level(0, || build(&spec))?;
        Ok(FaultModel {
            lib,
            faults: faults.len(),
        })
    }

    /// [`FaultModel::build`] with each edit on the first module of `top`'s hierarchy (leaves
    /// first, as emitted) whose text it changes; an edit that returns an empty text does not
    /// apply to that module.
    pub fn of_hierarchy(
        top: &Arc<Module>,
        edits: &[&dyn Fn(&str) -> String],
    ) -> Result<FaultModel, CosimError> {
        let files =
            crate::hdl::emit::emit_design(top).map_err(|e| CosimError::Spec(e.to_string()))?;
        let mut names = Vec::new();
        for (k, edit) in edits.iter().enumerate() {
            let (f, _) = files
                .iter()
                .find(|(_, text)| {
                    let e = edit(text);
                    !e.is_empty() && &e != text
                })
                .ok_or_else(|| {
                    CosimError::Spec(format!(
                        "fault {}: no module of {} changes",
                        k + 1,
                        top.name
                    ))
                })?;
            names.push(f.trim_end_matches(".v").to_string());
        }
        let faults: Vec<Fault> = edits
            .iter()
            .zip(&names)
            .map(|(e, f)| Fault {
                file_prefix: f,
                edit: *e,
            })
            .collect();
        FaultModel::build(top, &faults)
    }

    /// [`FaultModel::build`] with every edit on the file of `top` itself.
    pub fn of_top(
        top: &Arc<Module>,
        edits: &[&dyn Fn(&str) -> String],
    ) -> Result<FaultModel, CosimError> {
        let faults: Vec<Fault> = edits
            .iter()
            .map(|e| Fault {
                file_prefix: &top.name,
                edit: *e,
            })
            .collect();
        FaultModel::build(top, &faults)
    }

    /// A fresh model with fault `k` (0-based, in the order given to [`FaultModel::build`]) on,
    /// or with none (`None`: the unit as emitted).
    pub fn dut(&self, k: Option<usize>) -> Result<VerilatorDut, CosimError> {
        let sel = match k {
            Some(k) if k >= self.faults => {
                return Err(CosimError::Spec(format!(
                    "fault {k} of {} selected",
                    self.faults
                )))
            }
            Some(k) => k as u32 + 1,
            None => 0,
        };
        let mut model = Model::new(&self.lib)?;
        let port = model.port(SELECT_PORT)?;
        model.set(port, &[sel])?;
        VerilatorDut::from_model(model)
    }
}

/// Byte offset just after the `module <name> (` line, if the text declares that module.
fn module_header(text: &str, name: &str) -> Option<usize> {
    let key = format!("module {name} (\n");
    let at = text.find(&key)?;
    Some(at + key.len())
}

/// What a statement is, for the merge.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Kind {
    /// `assign lhs = rhs;` (one or more lines).
    Assign,
    /// `.port(expr),` in an instance (one line).
    Port,
    /// A statement in an `always` block, ending in `;`.
    Proc,
    /// Anything else: declarations, block structure, case items, comments.
    Other,
}

/// The text split into statements: (first line, last line, kind).
fn statements(lines: &[&str]) -> Vec<(usize, usize, Kind)> {
    let mut out = Vec::new();
    let (mut depth, mut in_always, mut in_case) = (0i32, false, 0i32);
    let mut i = 0;
    while i < lines.len() {
        let t = lines[i].trim();
        if t.starts_with("always") {
            in_always = true;
        }
        let kind = if t.starts_with("assign ") {
            Kind::Assign
        } else if t.starts_with('.') && (t.ends_with("),") || t.ends_with(')')) {
            Kind::Port
        } else if in_always && in_case == 0 && !t.is_empty() && !t.starts_with("//") {
            let structural = [
                "begin", "end", "else", "always", "case", "endcase", "default",
            ]
            .iter()
            .any(|w| t.starts_with(w))
                || t.ends_with("begin");
            if structural {
                Kind::Other
            } else {
                Kind::Proc
            }
        } else {
            Kind::Other
        };
        let mut j = i;
        if matches!(kind, Kind::Assign | Kind::Proc) {
            while j + 1 < lines.len() && !lines[j].trim_end().ends_with(';') {
                j += 1;
            }
        }
        if in_always {
            for l in &lines[i..=j] {
                let t = l.trim();
                let count = |w: &str| {
                    t.split(|c: char| !(c.is_alphanumeric() || c == '_'))
                        .filter(|x| *x == w)
                        .count() as i32
                };
                depth += count("begin") - count("end");
                in_case += count("case") - count("endcase");
            }
            if depth <= 0 && !t.starts_with("always") {
                in_always = false;
                depth = 0;
            }
        }
        out.push((i, j, kind));
        i = j + 1;
    }
    out
}

/// `orig` with every statement that one of `edits` (fault number, edited text) changes turned
/// into a run-time choice on `sel`.
pub(crate) fn merge(orig: &str, edits: &[(usize, String)], sel: &str) -> Result<String, String> {
    let lines: Vec<&str> = orig.split('\n').collect();
    let stmts = statements(&lines);
    // Statement index of every line.
    let mut of_line = vec![0usize; lines.len()];
    for (s, &(a, b, _)) in stmts.iter().enumerate() {
        for l in &mut of_line[a..=b] {
            *l = s;
        }
    }
    // Per changed statement: (fault number, its edited text).
    let mut alts: BTreeMap<usize, Vec<(usize, String)>> = BTreeMap::new();
    for (k, edited) in edits {
        let el: Vec<&str> = edited.split('\n').collect();
        let regions = changed_regions(&lines, &el)?;
        for (oa, ob, delta) in regions {
            // The statements the region touches; with a changed line count, exactly one.
            let (sa, sb) = (
                of_line[oa.min(lines.len() - 1)],
                of_line[ob.min(lines.len() - 1)],
            );
            if delta != 0 && sa != sb {
                return Err(format!(
                    "fault {k} changes the line count across statements"
                ));
            }
            for (s, &(a, b, kind)) in stmts.iter().enumerate().take(sb + 1).skip(sa) {
                if kind == Kind::Other {
                    return Err(format!(
                        "fault {k} edits line {} ({:?}), which is not an assignment, a port \
                         connection or a procedural statement",
                        a + 1,
                        lines[a].trim()
                    ));
                }
                let eb = (b as isize + if s == sb { delta } else { 0 }) as usize;
                let text = el[a..=eb].join("\n");
                let v = alts.entry(s).or_default();
                if v.iter().all(|(kk, _)| kk != k) {
                    v.push((*k, text));
                }
            }
        }
    }
    let mut out: Vec<String> = Vec::with_capacity(lines.len());
    for (s, &(a, b, kind)) in stmts.iter().enumerate() {
        let o = lines[a..=b].join("\n");
        match alts.get(&s) {
            None => out.push(o),
            Some(v) => out.push(combine(kind, &o, v, sel)?),
        }
    }
    Ok(out.join("\n"))
}

/// The changed line ranges of `new` against `old`: (first, last line in `old`, line-count
/// change). Equal line counts compare line by line; otherwise one range between the common
/// head and tail.
fn changed_regions(old: &[&str], new: &[&str]) -> Result<Vec<(usize, usize, isize)>, String> {
    if old.len() == new.len() {
        return Ok((0..old.len())
            .filter(|&i| old[i] != new[i])
            .map(|i| (i, i, 0))
            .collect());
    }
    let head = old.iter().zip(new).take_while(|(a, b)| a == b).count();
    let max_tail = old.len().min(new.len()) - head;
    let tail = old
        .iter()
        .rev()
        .zip(new.iter().rev())
        .take(max_tail)
        .take_while(|(a, b)| a == b)
        .count();
    if head + tail >= old.len() {
        return Err("an edit that only inserts lines".into());
    }
    let delta = new.len() as isize - old.len() as isize;
    Ok(vec![(head, old.len() - tail - 1, delta)])
}

/// One statement of kind `kind`, original text `o`, as a choice between the faults' texts.
fn combine(kind: Kind, o: &str, alts: &[(usize, String)], sel: &str) -> Result<String, String> {
    let cond = |k: usize| format!("({sel} == 8'd{k})");
    match kind {
        Kind::Assign => {
            let (lhs, rhs) = split_assign(o)?;
            let mut s = lhs.to_string();
            for (k, t) in alts {
                let (l2, r2) = split_assign(t)?;
                if l2 != lhs {
                    return Err(format!("fault {k} changes the target of {}", lhs.trim()));
                }
                s += &format!("{} ? ({r2})\n    : ", cond(*k));
            }
            Ok(format!("{s}({rhs});"))
        }
        Kind::Port => {
            let (name, expr, tail) = split_port(o)?;
            let mut s = format!("{name}(");
            for (k, t) in alts {
                let (n2, e2, _) = split_port(t)?;
                if n2 != name {
                    return Err(format!("fault {k} changes the port {}", name.trim()));
                }
                s += &format!("{} ? ({e2}) : ", cond(*k));
            }
            Ok(format!("{s}({expr})){tail}"))
        }
        Kind::Proc => {
            let indent: String = o.chars().take_while(|c| c.is_whitespace()).collect();
            let mut s = String::new();
            for (i, (k, t)) in alts.iter().enumerate() {
                let kw = if i == 0 { "if" } else { "end else if" };
                s += &format!("{indent}{kw} {} begin\n{t}\n", cond(*k));
            }
            Ok(format!("{s}{indent}end else begin\n{o}\n{indent}end"))
        }
        Kind::Other => Err("not a statement".into()),
    }
}

/// `assign lhs = rhs;` as (`  assign lhs = `, `rhs`).
fn split_assign(s: &str) -> Result<(&str, &str), String> {
    let at = s
        .find(" = ")
        .ok_or_else(|| format!("no ` = ` in {:?}", s.trim()))?;
    let rhs = s[at + 3..].trim_end();
    let rhs = rhs
        .strip_suffix(';')
        .ok_or_else(|| format!("no `;` ending {:?}", s.trim()))?;
    Ok((&s[..at + 3], rhs))
}

/// `.name(expr),` as (`    .name`, `expr`, `,`).
fn split_port(s: &str) -> Result<(&str, &str, &str), String> {
    let open = s
        .find('(')
        .ok_or_else(|| format!("no `(` in {:?}", s.trim()))?;
    let t = s.trim_end();
    let (body, tail) = match t.strip_suffix(',') {
        Some(b) => (b, ","),
        None => (t, ""),
    };
    let expr = body
        .strip_suffix(')')
        .ok_or_else(|| format!("no `)` ending {:?}", s.trim()))?;
    Ok((&s[..open], &expr[open + 1..], tail))
}

#[cfg(test)]
mod tests {
    use super::*;

    const V: &str = "module m (\n  input  wire a,\n  output wire y\n);\n  wire b;\n  \
                     assign b = (a ? c\n             : d);\n  assign y = ~b;\n  sub u (\n    \
                     .x_i(b),\n    .y_o(y)\n  );\n  always @(posedge clk_i) begin\n    \
                     if (en) q <= d;\n  end\nendmodule\n";

    #[test]
    fn assignments_ports_and_procedural_statements_become_choices() {
        let e1 = V.replace("assign y = ~b;", "assign y = b;");
        let e2 = V.replace("(a ? c\n", "(~a ? c\n");
        let e3 = V.replace(".x_i(b)", ".x_i(a)");
        let e4 = V.replace("if (en) q <= d;", "if (en) q <= 1'b0;");
        let m = merge(V, &[(1, e1), (2, e2), (3, e3), (4, e4)], "s").unwrap();
        assert!(
            m.contains("assign y = (s == 8'd1) ? (b)\n    : (~b);"),
            "{m}"
        );
        assert!(
            m.contains("assign b = (s == 8'd2) ? ((~a ? c\n             : d))\n    : ((a ? c"),
            "{m}"
        );
        assert!(m.contains(".x_i((s == 8'd3) ? (a) : (b)),"), "{m}");
        assert!(m.contains("if (s == 8'd4) begin\n    if (en) q <= 1'b0;\n    end else begin\n    if (en) q <= d;\n    end"), "{m}");
        // Two faults on one statement chain in order.
        let e5 = V.replace("assign y = ~b;", "assign y = 1'b0;");
        let e6 = V.replace("assign y = ~b;", "assign y = 1'b1;");
        let m = merge(V, &[(1, e5), (2, e6)], "s").unwrap();
        assert!(m.contains("(s == 8'd1) ? (1'b0)\n    : (s == 8'd2) ? (1'b1)\n    : (~b);"));
        // A statement shortened to one line.
        let e7 = V.replace("(a ? c\n             : d)", "1'b0");
        let m = merge(V, &[(1, e7)], "s").unwrap();
        assert!(
            m.contains("assign b = (s == 8'd1) ? (1'b0)\n    : ((a ? c\n"),
            "{m}"
        );
    }

    #[test]
    fn edits_outside_statements_are_refused() {
        let e = V.replace("wire b;", "wire [1:0] b;");
        let err = merge(V, &[(1, e)], "s").unwrap_err();
        assert!(err.contains("not an assignment"), "{err}");
    }
}
