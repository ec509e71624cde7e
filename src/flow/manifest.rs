//! Build manifests that `hwzip gen` writes beside the Verilog, so the generated RTL drops
//! into a user's build as is: a plain filelist (`<engine>.f`) and a FuseSoC core
//! (`<engine>.core`, CAPI2).
//!
//! Both name the files relative to their own directory: `verilator -F <engine>.f` (capital
//! `-F` resolves relative to the file), and FuseSoC resolves core files relative to the core.
//! The core's VLNV is `hwzip:rtl:<engine>:<hwzip version>` (hyphens in engine names become
//! underscores); it has a `default` target with the RTL fileset and one Verilator lint target
//! per unit (`lint_<unit>`, the unit's top as `toplevel`).

use crate::engines::UnitDesign;
use std::path::{Path, PathBuf};

/// The filelist's and the core's file names for `engine`.
pub fn names(engine: &str) -> (String, String) {
    (format!("{engine}.f"), format!("{engine}.core"))
}

/// The core's VLNV name for `engine` (`hwzip:rtl:<engine>:<version>`).
pub fn vlnv(engine: &str) -> String {
    format!(
        "hwzip:rtl:{}:{}",
        engine.replace('-', "_"),
        env!("CARGO_PKG_VERSION")
    )
}

fn file_names(files: &[PathBuf]) -> Vec<String> {
    let mut v: Vec<String> = files
        .iter()
        .filter(|f| f.extension().is_some_and(|x| x == "v"))
        .filter_map(|f| f.file_name().map(|n| n.to_string_lossy().into_owned()))
        .collect();
    v.sort();
    v.dedup();
    v
}

/// The filelist: one Verilog file per line, relative to the list's directory.
pub fn filelist(engine: &str, files: &[PathBuf]) -> String {
    let mut s = format!(
        "// hwzip {} `hwzip gen --engine {engine}`: the generated modules; paths are relative\n\
         // to this file (verilator -F).\n",
        env!("CARGO_PKG_VERSION")
    );
    for f in file_names(files) {
        s.push_str(&f);
        s.push('\n');
    }
    s
}

/// The FuseSoC core (CAPI2) for the files and units.
pub fn core(engine: &str, description: &str, units: &[UnitDesign], files: &[PathBuf]) -> String {
    let q = |s: &str| format!("\"{}\"", s.replace('\\', "\\\\").replace('"', "\\\""));
    let mut s = String::from("CAPI=2:\n");
    s.push_str(&format!(
        "# hwzip {} `hwzip gen --engine {engine}`; regenerated with the Verilog.\n",
        env!("CARGO_PKG_VERSION")
    ));
    s.push_str(&format!("name: {}\n", vlnv(engine)));
    s.push_str(&format!(
        "description: {}\n\n",
        q(&format!("hwzip {engine} units ({description})"))
    ));
    s.push_str("filesets:\n  rtl:\n    files:\n");
    for f in file_names(files) {
        s.push_str(&format!("      - {f}\n"));
    }
    s.push_str("    file_type: verilogSource\n\ntargets:\n  default:\n    filesets: [rtl]\n");
    for u in units {
        s.push_str(&format!(
            "  lint_{}:\n    default_tool: verilator\n    filesets: [rtl]\n    toplevel: {}\n    \
             tools:\n      verilator:\n        mode: lint-only\n        \
             verilator_options: [-Wall]\n",
            u.unit.replace('-', "_"),
            u.top.name
        ));
    }
    s
}

/// Writes both manifests into `dir`; returns their paths (filelist, core).
pub fn write(
    dir: &Path,
    engine: &str,
    description: &str,
    units: &[UnitDesign],
    files: &[PathBuf],
) -> Result<Vec<PathBuf>, String> {
    let (fl, co) = names(engine);
    let fl = dir.join(fl);
    let co = dir.join(co);
    crate::files::write(&fl, filelist(engine, files))?;
    crate::files::write(&co, core(engine, description, units, files))?;
    Ok(vec![fl, co])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn core_names_every_file_and_unit() {
        let cfg = crate::config::Config::default();
        let e = crate::engines::by_name("zvc").unwrap();
        let units = e.units(&cfg).unwrap();
        let files = vec![
            PathBuf::from("/x/b.v"),
            PathBuf::from("/x/a.v"),
            PathBuf::from("/x/zvc.f"),
        ];
        let c = core("zvc", "desc \"q\"", &units, &files);
        let y: serde_yaml::Value = serde_yaml::from_str(&c).unwrap();
        assert_eq!(y["name"].as_str(), Some(vlnv("zvc").as_str()));
        let fs = y["filesets"]["rtl"]["files"].as_sequence().unwrap();
        assert_eq!(fs.len(), 2);
        assert_eq!(fs[0].as_str(), Some("a.v"));
        for u in &units {
            let t = &y["targets"][format!("lint_{}", u.unit).as_str()];
            assert_eq!(t["toplevel"].as_str(), Some(u.top.name.as_str()));
        }
        assert!(c.starts_with("CAPI=2:\n"));
        let f = filelist("zvc", &files);
        assert_eq!(f.lines().filter(|l| !l.starts_with("//")).count(), 2);
        assert_eq!(vlnv("base-xor").split(':').nth(2), Some("base_xor"));
    }
}
