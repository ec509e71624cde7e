//! Fault injection for scoreboard tests: a Verilated model of a design with one emitted
//! source file edited (e.g. one mux select inverted), so a test can show that the scoreboard
//! catches the fault. Shared by every engine's scoreboard tests.

mod multi;

pub use multi::{Fault, FaultModel, SELECT_PORT};

use super::vdut::{build_spec, VerilatorDut};
use super::{build, BuildSpec, CosimError, Model};
use crate::hdl::Module;
use std::sync::Arc;

/// Rewrites `assign <wire> = (S ? T : F);` in `verilog` to `(~(S) ? T : F)`: one mux select
/// inverted, the fault the scoreboard must catch. `None` if the wire is not such a mux.
pub fn invert_mux_select(verilog: &str, wire: &str) -> Option<String> {
    let key = format!("assign {} = (", wire);
    let start = verilog.find(&key)? + key.len();
    let bytes = verilog.as_bytes();
    // The select is the first operand: a balanced-parenthesis term or an identifier.
    let mut depth = 0i32;
    let mut end = start;
    while end < bytes.len() {
        match bytes[end] {
            b'(' => depth += 1,
            b')' => depth -= 1,
            b' ' if depth == 0 => break,
            b'\n' => return None,
            _ => {}
        }
        end += 1;
    }
    if !verilog[end..].starts_with(" ? ") {
        return None;
    }
    let sel = &verilog[start..end];
    Some(format!(
        "{}~({}){}",
        &verilog[..start],
        sel,
        &verilog[end..]
    ))
}

/// Builds (at `-O0`) and loads `top` with the first emitted file whose name starts with `file_prefix`
/// passed through `edit`. An error if no file matches or the edit changes nothing (a fault
/// that was not injected would make the test unable to fail).
pub fn faulty_dut(
    top: &Arc<Module>,
    file_prefix: &str,
    edit: &dyn Fn(&str) -> String,
) -> Result<VerilatorDut, CosimError> {
    let mut spec = build_spec(top, false)?;
    let (i, edited) = edit_source(&spec, file_prefix, edit)?;
    spec.sources[i].1 = edited;
    // A faulty model runs until the scoreboard's first mismatch (a few thousand cycles at
    // most): -O0 compiles in about half the time of -O1.
    let lib = super::build::with_opt_level(0, || build(&spec))?;
    VerilatorDut::from_model(Model::new(&lib)?)
}

/// The index in `spec.sources` of the first file whose name starts with `file_prefix`, and
/// its text passed through `edit`. An error if no file matches or the edit changes nothing (a
/// fault that was not injected would make the test unable to fail).
fn edit_source(
    spec: &BuildSpec,
    file_prefix: &str,
    edit: &dyn Fn(&str) -> String,
) -> Result<(usize, String), CosimError> {
    let i = spec
        .sources
        .iter()
        .position(|(n, _)| n.starts_with(file_prefix))
        .ok_or_else(|| CosimError::Spec(format!("no emitted file {}*", file_prefix)))?;
    let (name, text) = &spec.sources[i];
    let edited = edit(text);
    if &edited == text {
        return Err(CosimError::Spec(format!(
            "the fault was not injected into {name}"
        )));
    }
    Ok((i, edited))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fault_injection_helper_rewrites_only_muxes() {
        let v = "  assign a = (b ? c : d);\n  assign e = (f & g);\n";
        assert_eq!(
            invert_mux_select(v, "a").unwrap(),
            "  assign a = (~(b) ? c : d);\n  assign e = (f & g);\n"
        );
        assert!(invert_mux_select(v, "e").is_none());
        assert!(invert_mux_select(v, "zz").is_none());
    }
}
