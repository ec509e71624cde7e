//! Module structure: no import cycles between the crate's modules (at the top level and one
//! level down), and the layering docs/USAGE.md draws (`rtl` below `config`, `synth`, `cosim`,
//! `flow` and the engine registry; no CLI logic outside `main.rs`, `cli/` and `flow`).
//!
//! A module's imports are the `crate::a::b` and `super::b` paths in its non-test code
//! (comments and `#[cfg(test)]` modules removed). Re-exports in a parent count as the
//! parent's imports.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// Test-only files (declared under `#[cfg(test)]`), skipped.
fn is_test_file(stem: &str) -> bool {
    stem == "tests" || stem.ends_with("_tests") || stem == "crosscheck"
}

fn rs_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            rs_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

/// `src/a/b.rs` → `["a", "b"]`; `src/a/mod.rs` → `["a"]`.
fn module_path(src: &Path, file: &Path) -> Vec<String> {
    let rel = file.strip_prefix(src).unwrap().with_extension("");
    let mut v: Vec<String> = rel
        .iter()
        .map(|c| c.to_string_lossy().to_string())
        .collect();
    if v.last().is_some_and(|l| l == "mod") {
        v.pop();
    }
    v
}

/// The code without comments and without `#[cfg(test)] mod x { ... }` blocks.
fn non_test_code(text: &str) -> String {
    let mut out = String::new();
    let mut lines = text.lines().peekable();
    while let Some(l) = lines.next() {
        let t = l.trim_start();
        if t.starts_with("#[cfg(test)]") {
            if let Some(next) = lines.peek() {
                let n = next.trim_start();
                if (n.starts_with("mod ") || n.starts_with("pub mod ")) && n.ends_with('{') {
                    // Skip to the closing brace at the same indentation.
                    let indent = next.len() - n.len();
                    lines.next();
                    for body in lines.by_ref() {
                        if body.len() > indent && body[indent..].starts_with('}') {
                            break;
                        }
                    }
                }
            }
            continue;
        }
        let code = match l.find("//") {
            Some(i) => &l[..i],
            None => l,
        };
        out.push_str(code);
        out.push('\n');
    }
    out
}

/// Identifier paths following `prefix` (`crate::` or `super::`) in `code`.
fn paths_after<'a>(code: &'a str, prefix: &str) -> Vec<Vec<&'a str>> {
    let mut v = Vec::new();
    let mut rest = code;
    while let Some(i) = rest.find(prefix) {
        let before = rest[..i].chars().last();
        rest = &rest[i + prefix.len()..];
        if before.is_some_and(|c| c.is_alphanumeric() || c == '_' || c == ':') {
            continue;
        }
        let end = rest
            .find(|c: char| !(c.is_alphanumeric() || c == '_' || c == ':'))
            .unwrap_or(rest.len());
        let segs: Vec<&str> = rest[..end]
            .split("::")
            .filter(|s| {
                !s.is_empty()
                    && s.chars()
                        .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
            })
            .collect();
        v.push(segs);
    }
    v
}

/// Module → modules it imports, with paths cut to `depth` segments.
fn graph(depth: usize) -> BTreeMap<Vec<String>, BTreeSet<Vec<String>>> {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rs_files(&src, &mut files);
    let mut g: BTreeMap<Vec<String>, BTreeSet<Vec<String>>> = BTreeMap::new();
    for f in files {
        let m = module_path(&src, &f);
        if m.is_empty() || m == ["main"] || m == ["lib"] || is_test_file(m.last().unwrap()) {
            continue;
        }
        let me: Vec<String> = m.iter().take(depth).cloned().collect();
        let code = non_test_code(&std::fs::read_to_string(&f).unwrap());
        let mut targets: Vec<Vec<String>> = paths_after(&code, "crate::")
            .into_iter()
            .map(|p| p.iter().map(|s| s.to_string()).collect())
            .collect();
        let parent: Vec<String> = m[..m.len() - 1].to_vec();
        for p in paths_after(&code, "super::") {
            let mut full = parent.clone();
            full.extend(p.iter().map(|s| s.to_string()));
            targets.push(full);
        }
        for t in targets {
            if t.len() < me.len().min(depth) {
                continue;
            }
            let t: Vec<String> = t.into_iter().take(depth).collect();
            if t != me && t.len() == me.len() {
                g.entry(me.clone()).or_default().insert(t);
            }
        }
    }
    g
}

/// A cycle in `g`, if any (depth-first search).
fn find_cycle(g: &BTreeMap<Vec<String>, BTreeSet<Vec<String>>>) -> Option<Vec<String>> {
    fn visit(
        v: &Vec<String>,
        g: &BTreeMap<Vec<String>, BTreeSet<Vec<String>>>,
        state: &mut BTreeMap<Vec<String>, u8>,
        stack: &mut Vec<Vec<String>>,
    ) -> Option<Vec<String>> {
        state.insert(v.clone(), 1);
        stack.push(v.clone());
        for w in g.get(v).into_iter().flatten() {
            match state.get(w).copied().unwrap_or(0) {
                0 => {
                    if let Some(c) = visit(w, g, state, stack) {
                        return Some(c);
                    }
                }
                1 => {
                    let i = stack.iter().position(|x| x == w).unwrap();
                    let mut c: Vec<String> = stack[i..].iter().map(|m| m.join("::")).collect();
                    c.push(w.join("::"));
                    return Some(c);
                }
                _ => {}
            }
        }
        stack.pop();
        state.insert(v.clone(), 2);
        None
    }
    let mut state = BTreeMap::new();
    for v in g.keys() {
        if !state.contains_key(v) {
            if let Some(c) = visit(v, g, &mut state, &mut Vec::new()) {
                return Some(c);
            }
        }
    }
    None
}

#[test]
fn no_import_cycles_between_modules() {
    for depth in [1, 2, 3] {
        let g = graph(depth);
        assert!(
            g.len() > 5,
            "depth {}: only {} modules found",
            depth,
            g.len()
        );
        if let Some(c) = find_cycle(&g) {
            panic!("import cycle at depth {}: {}", depth, c.join(" -> "));
        }
    }
}

#[test]
fn layers_point_downwards() {
    let g = graph(1);
    let deps = |m: &str| g.get(&vec![m.to_string()]).cloned().unwrap_or_default();
    let forbidden: &[(&str, &[&str])] = &[
        (
            "hdl",
            &[
                "model", "rtl", "cosim", "synth", "config", "flow", "engines", "trace",
            ],
        ),
        (
            "model",
            &[
                "hdl", "rtl", "cosim", "synth", "config", "flow", "engines", "trace",
            ],
        ),
        (
            "rtl",
            &["config", "synth", "cosim", "flow", "engines", "trace"],
        ),
        ("cosim", &["config", "synth", "flow", "engines"]),
        ("synth", &["rtl", "cosim", "flow", "engines"]),
        ("engines", &["flow"]),
    ];
    for (m, bad) in forbidden {
        for d in deps(m) {
            assert!(
                !bad.contains(&d[0].as_str()),
                "`{}` must not depend on `{}`",
                m,
                d[0]
            );
        }
    }
}

/// The self-check: the scanner sees a cycle when there is one.
#[test]
fn cycle_finder_finds_cycles() {
    let mut g: BTreeMap<Vec<String>, BTreeSet<Vec<String>>> = BTreeMap::new();
    let m = |s: &str| vec![s.to_string()];
    g.entry(m("a")).or_default().insert(m("b"));
    g.entry(m("b")).or_default().insert(m("c"));
    assert!(find_cycle(&g).is_none());
    g.entry(m("c")).or_default().insert(m("a"));
    assert_eq!(find_cycle(&g).unwrap(), ["a", "b", "c", "a"]);
    let code = non_test_code(
        "use crate::x::y; // crate::z\n#[cfg(test)]\nmod tests {\n    use crate::w;\n}\n",
    );
    assert_eq!(paths_after(&code, "crate::"), vec![vec!["x", "y"]]);
}
