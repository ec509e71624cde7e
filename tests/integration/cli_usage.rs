//! The usage block of `docs/USAGE.md` against `hwzip <command> --help`: every command is in the
//! block, the block names exactly the options each command's help lists (the global
//! `--max-input` once), and its `--engine` lists are the registry's engine names.

use std::collections::{BTreeMap, BTreeSet};
use std::process::Command;

/// The fenced block that starts with `hwzip gen`.
fn usage_block() -> String {
    let readme = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/docs/USAGE.md"))
        .expect("docs/USAGE.md");
    let start = readme
        .find("```sh\nhwzip gen")
        .expect("usage block in docs/USAGE.md");
    let body = &readme[start + "```sh\n".len()..];
    body[..body.find("```").expect("end of the usage block")].to_string()
}

/// Long options (and `-j`) in a piece of text.
fn options(text: &str) -> BTreeSet<String> {
    let mut v = BTreeSet::new();
    let b = text.as_bytes();
    let mut i = 0;
    while i + 2 < b.len() {
        let boundary = i == 0 || !(b[i - 1].is_ascii_alphanumeric() || b[i - 1] == b'-');
        if boundary && b[i] == b'-' && b[i + 1] == b'-' && b[i + 2].is_ascii_lowercase() {
            let mut j = i + 2;
            while j < b.len()
                && (b[j].is_ascii_lowercase() || b[j].is_ascii_digit() || b[j] == b'-')
            {
                j += 1;
            }
            v.insert(text[i..j].to_string());
            i = j;
        } else if boundary && text[i..].starts_with("-j ") {
            v.insert("-j".into());
            i += 2;
        } else {
            i += 1;
        }
    }
    v
}

/// The block's options per command (text after `#` is a comment; `;` separates commands).
fn block_options(block: &str) -> BTreeMap<String, BTreeSet<String>> {
    let mut m: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    let mut cur = String::new();
    for line in block.lines() {
        let code = line.split('#').next().unwrap_or("");
        for part in code.split(';') {
            let t = part.trim_start();
            if let Some(rest) = t.strip_prefix("hwzip ") {
                cur = rest.split_whitespace().next().unwrap_or("").to_string();
                m.entry(cur.clone()).or_default();
            }
            if !cur.is_empty() {
                m.get_mut(&cur).unwrap().extend(options(part));
            }
        }
    }
    m
}

fn help(args: &[&str]) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_hwzip"))
        .args(args)
        .output()
        .expect("hwzip runs");
    assert!(out.status.success(), "hwzip {args:?} failed");
    String::from_utf8(out.stdout).unwrap()
}

/// The options a command's `--help` lists (option lines only, not their descriptions).
fn help_options(cmd: &str) -> BTreeSet<String> {
    let text = help(&[cmd, "--help"]);
    let mut v = BTreeSet::new();
    for line in text.lines() {
        let t = line.trim_start();
        let t = t.strip_prefix("-j, ").unwrap_or(t);
        if line.trim_start().starts_with("-j, ") {
            v.insert("-j".into()); // the usage block writes `-j N`
        } else if t.starts_with("--") {
            let name: String = t.chars().take_while(|c| !c.is_whitespace()).collect();
            v.insert(name.trim_end_matches(',').to_string());
        }
    }
    v.remove("--help");
    v.remove("--version");
    v
}

fn commands() -> Vec<String> {
    let text = help(&["--help"]);
    let body = &text[text.find("Commands:").expect("command list")..];
    body.lines()
        .skip(1)
        .take_while(|l| l.starts_with("  "))
        .filter_map(|l| l.split_whitespace().next())
        .filter(|c| *c != "help")
        .map(str::to_string)
        .collect()
}

#[test]
fn readme_usage_matches_help() {
    let block = usage_block();
    let per = block_options(&block);
    let cmds = commands();
    assert!(cmds.len() >= 9, "commands: {cmds:?}");
    assert!(
        block.contains("--max-input"),
        "the block does not name --max-input"
    );
    let mut problems = Vec::new();
    for c in &cmds {
        let Some(doc) = per.get(c) else {
            problems.push(format!("`hwzip {c}` is not in the usage block"));
            continue;
        };
        let mut doc = doc.clone();
        doc.remove("--max-input");
        let mut h = help_options(c);
        h.remove("--max-input");
        let missing: Vec<_> = h.difference(&doc).collect();
        let extra: Vec<_> = doc.difference(&h).collect();
        if !missing.is_empty() {
            problems.push(format!("hwzip {c}: the usage block lacks {missing:?}"));
        }
        if !extra.is_empty() {
            problems.push(format!(
                "hwzip {c}: the usage block names unknown {extra:?}"
            ));
        }
    }
    for c in per.keys() {
        if c != "<command>" && !cmds.contains(c) {
            problems.push(format!(
                "the usage block names a command `{c}` hwzip does not have"
            ));
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn engine_lists_are_the_registry() {
    let names: Vec<&str> = hwzip::engines::ALL.iter().map(|e| e.name()).collect();
    let list = format!("--engine {}", names.join("|"));
    let block = usage_block();
    assert!(
        block.contains(&list),
        "the usage block should list `{list}`"
    );
    for c in [
        "gen",
        "cosim",
        "synth",
        "eval",
        "compress",
        "decompress",
        "flow",
    ] {
        let h = help(&[c, "--help"]).replace('\n', " ");
        let want = format!("[possible values: {}]", names.join(", "));
        let squashed: String = h.split_whitespace().collect::<Vec<_>>().join(" ");
        assert!(squashed.contains(&want), "hwzip {c} --help lacks {want}");
    }
}

#[test]
fn every_option_has_a_description() {
    for c in commands() {
        let text = help(&[&c, "--help"]);
        for line in text.lines() {
            let t = line.trim_start();
            let opt = t.starts_with("--") || t.starts_with("-j, ");
            let arg = t.starts_with('<') && line.starts_with("  ");
            if opt || arg {
                let words: Vec<&str> = t.split_whitespace().collect();
                // `--flag <VALUE>  Description`: more than the flag and its value name.
                let head = if t.starts_with("-j, ") { 3 } else { 1 };
                let value = words.get(head).is_some_and(|w| w.starts_with('<'));
                let n = head + usize::from(value);
                assert!(
                    words.len() > n && !words[n].starts_with('['),
                    "hwzip {c}: `{}` has no description",
                    t
                );
            }
        }
    }
}

/// `hwzip --help` and docs/RELIABILITY.md say what hwzip does with pipes, FIFOs and special files.
#[test]
fn special_files_are_documented() {
    let h = help(&["--help"]);
    for needle in [
        "FIFOs",
        "waits for its writer",
        "devices are refused",
        "in place",
    ] {
        assert!(h.contains(needle), "`hwzip --help` should say `{needle}`");
    }
    let doc = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/docs/RELIABILITY.md"))
        .expect("docs/RELIABILITY.md");
    assert!(
        doc.contains("waits for its writer"),
        "docs/RELIABILITY.md should say how FIFOs are read"
    );
}
