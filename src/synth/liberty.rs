//! Liberty (`.lib` / `.lib.gz`) loading: decompression cache and a small, tolerant scanner that
//! extracts only what the synthesis driver needs (library name, units, cell areas, which cells
//! are flip-flops or latches, and the NAND2 reference cell used for gate equivalents).

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

use super::SynthError;
use crate::files::input::{self, Purpose};

/// Where Debian's `qflow-tech-osu018` package installs the OSU 0.18 µm liberty.
pub const OSU018_PATH: &str = "/usr/share/qflow/tech/osu018/osu018_stdcells.lib";

/// File names of the reference libraries looked up by [`Liberty::shared_refs`].
pub const SHARED_REF_FILES: [&str; 2] = ["nangate45_typ.lib.gz", "sky130hd_tt.lib.gz"];

/// Preferred NAND2 reference cells, in order (osu018, Nangate45, sky130hd).
const NAND2_PREFERRED: [&str; 3] = ["NAND2X1", "NAND2_X1", "sky130_fd_sc_hd__nand2_1"];

/// A loaded standard-cell library.
#[derive(Debug, Clone, PartialEq)]
pub struct Liberty {
    /// Library name from the `library (...)` group.
    pub name: String,
    /// Uncompressed liberty file usable by Yosys and OpenSTA.
    pub path: PathBuf,
    /// The file the library was loaded from (may be the `.lib.gz`).
    pub source: PathBuf,
    /// Name of the NAND2 reference cell (for gate equivalents).
    pub nand2_cell: String,
    /// Area of the NAND2 reference cell, µm².
    pub nand2_area_um2: f64,
    /// Liberty `time_unit` expressed in ns (e.g. `"1ps"` → 0.001).
    pub time_unit_ns: f64,
    /// Liberty `capacitive_load_unit` expressed in pF (e.g. `(1,ff)` → 0.001).
    pub cap_unit_pf: f64,
    /// Number of `cell` groups in the library.
    pub cell_count: usize,
    /// Cells with an `ff` / `ff_bank` group (flip-flops).
    pub flop_cells: BTreeSet<String>,
    /// Cells with a `latch` / `latch_bank` group.
    pub latch_cells: BTreeSet<String>,
    /// Output pins of every cell (`direction : output`), for netlist passes.
    pub output_pins: BTreeMap<String, BTreeSet<String>>,
    /// The buffer used to split high-fan-out flop outputs (see [`super::buffer`]).
    pub buffer: Option<BufferCell>,
    /// Cells removed before synthesis as not for general logic (`dont_use : true`, sky130
    /// low-power/isolation `lpflow_*` and probe cells, as OpenROAD flows exclude them).
    pub excluded_cells: Vec<String>,
}

/// A non-inverting buffer cell of a library.
#[derive(Debug, Clone, PartialEq)]
pub struct BufferCell {
    /// Cell name (e.g. `BUF_X4`).
    pub name: String,
    /// Input pin.
    pub input: String,
    /// Output pin.
    pub output: String,
    /// Area, µm².
    pub area_um2: f64,
}

impl Liberty {
    /// Short display name (`osu018`, `nangate45`, `sky130hd`, else the library name), from
    /// the file it was loaded from.
    pub fn label(&self) -> String {
        let lower = self
            .source
            .file_name()
            .map(|f| f.to_string_lossy().to_lowercase())
            .unwrap_or_default();
        if lower.contains("osu018") {
            "osu018".into()
        } else if lower.contains("nangate") {
            "nangate45".into()
        } else if lower.contains("sky130") {
            "sky130hd".into()
        } else {
            self.name.clone()
        }
    }

    /// Loads a `.lib` or `.lib.gz` file. Compressed files are decompressed once into the cache
    /// directory (see [`cache_dir`]), keyed by the SHA-256 of the compressed bytes.
    pub fn load(path: impl AsRef<Path>) -> Result<Self, SynthError> {
        let source = path.as_ref().to_path_buf();
        if !source.is_file() {
            // Say what the path is: missing, a folder, a device or FIFO (never read: a
            // liberty needs a regular file).
            let what = match std::fs::metadata(&source) {
                Err(_) => None,
                Ok(m) if m.is_dir() => Some("a folder"),
                Ok(m) => {
                    use std::os::unix::fs::FileTypeExt;
                    let t = m.file_type();
                    Some(if t.is_fifo() {
                        "a FIFO"
                    } else if t.is_char_device() || t.is_block_device() {
                        "a device"
                    } else {
                        "not a regular file"
                    })
                }
            };
            return Err(match what {
                None => SynthError::LibertyNotFound {
                    path: source,
                    hint: "check the path".into(),
                },
                Some(w) => SynthError::LibertyNotAFile {
                    path: source,
                    what: w.into(),
                },
            });
        }
        let is_gz = source
            .file_name()
            .and_then(|n| n.to_str())
            .is_some_and(|n| n.ends_with(".gz"));
        let path = if is_gz {
            decompress_cached(&source)?
        } else {
            source.clone()
        };
        let bytes = input::read(&path, Purpose::Liberty).map_err(|e| SynthError::io(&path, e))?;
        let text = String::from_utf8_lossy(&bytes);
        // Cells no synthesis flow should pick (see `is_dont_use`) are removed from a cached
        // copy, because Yosys 0.23's `abc`/`dfflibmap` cannot exclude cells by name.
        let (filtered, removed) = remove_cells(&text, is_dont_use);
        if removed.is_empty() {
            return Self::from_scan(scan(&text), path, source);
        }
        let out = path.with_file_name(format!(
            "{}-usable.lib",
            path.file_stem().and_then(|s| s.to_str()).unwrap_or("lib")
        ));
        let out = if out.starts_with(cache_dir()) || path != source {
            out
        } else {
            cache_dir().join(out.file_name().unwrap_or_default())
        };
        if !fs::metadata(&out).is_ok_and(|m| m.len() > 0) {
            let dir = out
                .parent()
                .map(Path::to_path_buf)
                .unwrap_or_else(cache_dir);
            fs::create_dir_all(&dir).map_err(|e| SynthError::io(&dir, e))?;
            let mut tmp =
                tempfile::NamedTempFile::new_in(&dir).map_err(|e| SynthError::io(&dir, e))?;
            tmp.write_all(filtered.as_bytes())
                .map_err(|e| SynthError::io(&out, e))?;
            tmp.persist(&out)
                .map_err(|e| SynthError::io(&out, e.error))?;
        }
        let mut lib = Self::from_scan(scan(&filtered), out, source)?;
        lib.excluded_cells = removed;
        Ok(lib)
    }

    /// The default library: OSU 0.18 µm from Debian's `qflow-tech-osu018`.
    pub fn osu018() -> Result<Self, SynthError> {
        if !Path::new(OSU018_PATH).is_file() {
            return Err(SynthError::LibertyNotFound {
                path: OSU018_PATH.into(),
                hint: "package qflow-tech-osu018 is not installed: run scripts/setup.sh".into(),
            });
        }
        Self::load(OSU018_PATH)
    }

    /// The reference libraries (Nangate45, sky130hd) that exist in a `shared/pdk/` directory
    /// beside the crate (found by walking up from `CARGO_MANIFEST_DIR`, or `$HWZIP_PDK_DIR`).
    /// Missing files are skipped; an empty vector means none are available.
    pub fn shared_refs() -> Result<Vec<Self>, SynthError> {
        Self::shared_refs_in(Path::new(env!("CARGO_MANIFEST_DIR")))
    }

    /// Like [`Liberty::shared_refs`], starting the search for `shared/pdk/` at `root`
    /// (`root/../shared/pdk`, then further ancestors). `$HWZIP_PDK_DIR` takes precedence.
    pub fn shared_refs_in(root: &Path) -> Result<Vec<Self>, SynthError> {
        let Some(dir) = shared_pdk_dir(root) else {
            return Ok(Vec::new());
        };
        SHARED_REF_FILES
            .iter()
            .map(|f| dir.join(f))
            .filter(|p| p.is_file())
            .map(Self::load)
            .collect()
    }

    /// Converts a time in ns into this library's time unit (as used by OpenSTA).
    pub fn ns_to_lib_time(&self, ns: f64) -> f64 {
        ns / self.time_unit_ns
    }

    fn from_scan(scan: Scan, path: PathBuf, source: PathBuf) -> Result<Self, SynthError> {
        let bad = |what: &str| SynthError::LibertyParse {
            path: source.clone(),
            what: what.to_string(),
        };
        let name = scan.name.ok_or_else(|| bad("a `library (name) {` group"))?;
        let time_unit_ns = match scan.time_unit.as_deref() {
            None => 1.0, // liberty default is 1ns
            Some(t) => parse_time_unit(t).ok_or_else(|| bad("time_unit like \"1ns\""))?,
        };
        let cap_unit_pf = scan.cap_unit_pf.unwrap_or(1.0);
        let pick = NAND2_PREFERRED
            .iter()
            .find_map(|p| scan.cells.iter().find(|c| c.name == *p))
            .or_else(|| scan.cells.iter().find(|c| is_nand2_x1(&c.name)))
            .ok_or_else(|| bad("a NAND2 reference cell (NAND2X1, NAND2_X1, *nand2*1*)"))?;
        let nand2_area_um2 = pick
            .area
            .filter(|a| *a > 0.0)
            .ok_or_else(|| bad(&format!("a positive area for cell {}", pick.name)))?;
        let cell_count = scan.cells.len();
        let flop_cells = scan
            .cells
            .iter()
            .filter(|c| c.kind == CellKind::Flop)
            .map(|c| c.name.clone())
            .collect();
        let latch_cells = scan
            .cells
            .iter()
            .filter(|c| c.kind == CellKind::Latch)
            .map(|c| c.name.clone())
            .collect();
        let output_pins = scan
            .cells
            .iter()
            .map(|c| {
                let outs = c
                    .pins
                    .iter()
                    .filter(|p| p.direction.as_deref() == Some("output"))
                    .map(|p| p.name.clone())
                    .collect();
                (c.name.clone(), outs)
            })
            .collect();
        let buffer = pick_buffer(&scan.cells);
        Ok(Self {
            name,
            path,
            source,
            output_pins,
            buffer,
            nand2_cell: pick.name.clone(),
            nand2_area_um2,
            time_unit_ns,
            cap_unit_pf,
            cell_count,
            flop_cells,
            latch_cells,
            excluded_cells: Vec::new(),
        })
    }
}

/// The buffer for fan-out trees: a combinational cell with one input `A` and one output whose
/// function is `A`, not a clock or delay cell; the drive-4 size when there is one (`BUFX4`,
/// `BUF_X4`, `buf_4`), else the middle size by area.
fn pick_buffer(cells: &[ScanCell]) -> Option<BufferCell> {
    let mut bufs: Vec<BufferCell> = cells
        .iter()
        .filter(|c| c.kind == CellKind::Comb)
        .filter(|c| {
            let n = c.name.to_ascii_lowercase();
            !n.contains("clk") && !n.contains("dly") && !n.contains("lpflow")
        })
        .filter_map(|c| {
            let ins: Vec<&ScanPin> = c
                .pins
                .iter()
                .filter(|p| p.direction.as_deref() == Some("input"))
                .collect();
            let outs: Vec<&ScanPin> = c
                .pins
                .iter()
                .filter(|p| p.direction.as_deref() == Some("output"))
                .collect();
            let (i, o) = match (ins.as_slice(), outs.as_slice()) {
                ([i], [o]) => (i, o),
                _ => return None,
            };
            let f = o.function.as_deref()?;
            let f = f
                .strip_prefix('(')
                .and_then(|f| f.strip_suffix(')'))
                .unwrap_or(f)
                .trim();
            (f == i.name && c.area.is_some_and(|a| a > 0.0)).then(|| BufferCell {
                name: c.name.clone(),
                input: i.name.clone(),
                output: o.name.clone(),
                area_um2: c.area.unwrap_or(0.0),
            })
        })
        .collect();
    bufs.sort_by(|a, b| a.area_um2.total_cmp(&b.area_um2).then(a.name.cmp(&b.name)));
    let four = bufs.iter().position(|b| {
        let n = b.name.to_ascii_lowercase();
        n.ends_with("x4") || n.ends_with("_4")
    });
    let at = four.unwrap_or(bufs.len() / 2);
    (!bufs.is_empty()).then(|| bufs.swap_remove(at))
}

/// Cells that are not for general synthesis: marked `dont_use : true`, or sky130's
/// low-power/isolation (`lpflow_*`) and probe cells.
fn is_dont_use(name: &str, body: &str) -> bool {
    name.contains("__lpflow_")
        || name.contains("__probe")
        || body
            .chars()
            .filter(|c| !c.is_whitespace())
            .collect::<String>()
            .contains("dont_use:true")
}

/// Removes the `cell (name) { ... }` groups for which `drop(name, body)` holds. Returns the
/// filtered text and the removed cell names. Braces inside quoted strings are ignored.
fn remove_cells(text: &str, drop: impl Fn(&str, &str) -> bool) -> (String, Vec<String>) {
    let bytes = text.as_bytes();
    let mut out = String::with_capacity(text.len());
    let mut removed = Vec::new();
    let mut pos = 0;
    while let Some(off) = text[pos..].find("cell") {
        let start = pos + off;
        let word_start =
            start == 0 || !(bytes[start - 1].is_ascii_alphanumeric() || bytes[start - 1] == b'_');
        let rest = text[start + 4..].trim_start();
        if !word_start || !rest.starts_with('(') {
            out.push_str(&text[pos..start + 4]);
            pos = start + 4;
            continue;
        }
        let open_paren = text.len() - rest.len();
        let Some(close_rel) = text[open_paren..].find(')') else {
            break;
        };
        let name = text[open_paren + 1..open_paren + close_rel]
            .trim()
            .trim_matches('"')
            .to_string();
        let Some(brace_rel) = text[open_paren + close_rel..].find('{') else {
            break;
        };
        let body_start = open_paren + close_rel + brace_rel;
        // Find the matching closing brace.
        let (mut depth, mut i, mut in_str) = (0i64, body_start, false);
        while i < bytes.len() {
            match bytes[i] {
                b'"' => in_str = !in_str,
                b'{' if !in_str => depth += 1,
                b'}' if !in_str => {
                    depth -= 1;
                    if depth == 0 {
                        break;
                    }
                }
                _ => {}
            }
            i += 1;
        }
        let end = (i + 1).min(bytes.len());
        out.push_str(&text[pos..start]);
        if drop(&name, &text[body_start..end]) {
            removed.push(name);
        } else {
            out.push_str(&text[start..end]);
        }
        pos = end;
    }
    out.push_str(&text[pos..]);
    (out, removed)
}

/// Cache directory for decompressed liberty files: `<cache root>/liberty`
/// (`crate::cache_dir`).
pub fn cache_dir() -> PathBuf {
    crate::cache_dir::cache_dir("liberty")
}

fn shared_pdk_dir(root: &Path) -> Option<PathBuf> {
    if let Some(d) = std::env::var_os("HWZIP_PDK_DIR") {
        let d = PathBuf::from(d);
        return d.is_dir().then_some(d);
    }
    // `root/../shared/pdk` is the documented location; worktrees sit one level deeper.
    root.ancestors()
        .skip(1)
        .map(|a| a.join("shared").join("pdk"))
        .find(|d| d.is_dir())
}

fn decompress_cached(gz: &Path) -> Result<PathBuf, SynthError> {
    let compressed = input::read(gz, Purpose::Liberty).map_err(|e| SynthError::io(gz, e))?;
    let digest = Sha256::digest(&compressed);
    let key: String = digest.iter().take(12).map(|b| format!("{b:02x}")).collect();
    let mut dir = cache_dir();
    if fs::create_dir_all(&dir).is_err() {
        dir = std::env::temp_dir().join("hwzip-cache").join("liberty");
        fs::create_dir_all(&dir).map_err(|e| SynthError::io(&dir, e))?;
    }
    let out = dir.join(format!("{key}.lib"));
    if fs::metadata(&out).is_ok_and(|m| m.len() > 0) {
        return Ok(out);
    }
    let text =
        input::gunzip(&compressed, Purpose::Liberty).map_err(|e| SynthError::LibertyParse {
            path: gz.to_path_buf(),
            what: format!("a valid gzip stream within limits ({e})"),
        })?;
    // Write to a unique temporary file and rename, so concurrent loaders never see a partial file.
    let mut tmp = tempfile::NamedTempFile::new_in(&dir).map_err(|e| SynthError::io(&dir, e))?;
    tmp.write_all(&text).map_err(|e| SynthError::io(&out, e))?;
    tmp.persist(&out)
        .map_err(|e| SynthError::io(&out, e.error))?;
    Ok(out)
}

fn is_nand2_x1(name: &str) -> bool {
    let l = name.to_ascii_lowercase();
    l.find("nand2").is_some_and(|i| l[i + 5..].contains('1'))
}

/// `"1ns"`, `"1ps"`, `"10ps"`, `"1.0ns"` → value in ns.
pub(crate) fn parse_time_unit(s: &str) -> Option<f64> {
    let s = s.trim().to_ascii_lowercase();
    let split = s.find(|c: char| c.is_ascii_alphabetic())?;
    let (num, unit) = s.split_at(split);
    let v: f64 = if num.trim().is_empty() {
        1.0
    } else {
        num.trim().parse().ok()?
    };
    let scale = match unit.trim() {
        "s" => 1e9,
        "ms" => 1e6,
        "us" => 1e3,
        "ns" => 1.0,
        "ps" => 1e-3,
        "fs" => 1e-6,
        _ => return None,
    };
    Some(v * scale)
}

fn cap_unit_to_pf(num: &str, unit: &str) -> Option<f64> {
    let v: f64 = num.trim().parse().ok()?;
    let scale = match unit.trim().to_ascii_lowercase().as_str() {
        "pf" => 1.0,
        "ff" => 1e-3,
        "nf" => 1e3,
        _ => return None,
    };
    Some(v * scale)
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum CellKind {
    Comb,
    Flop,
    Latch,
}

#[derive(Debug)]
struct ScanCell {
    name: String,
    area: Option<f64>,
    kind: CellKind,
    /// `pin` groups: (name, direction, function).
    pins: Vec<ScanPin>,
}

#[derive(Debug, Default)]
struct ScanPin {
    name: String,
    direction: Option<String>,
    function: Option<String>,
}

#[derive(Debug, Default)]
struct Scan {
    name: Option<String>,
    time_unit: Option<String>,
    cap_unit_pf: Option<f64>,
    cells: Vec<ScanCell>,
}

#[derive(Debug, Clone, PartialEq)]
enum Tok<'a> {
    Word(&'a str),
    Str(&'a str),
    Punct(u8),
}

/// Tokenizer: words, quoted strings and `(){}:;,`; skips comments and line continuations.
struct Lexer<'a> {
    s: &'a str,
    i: usize,
}

impl<'a> Iterator for Lexer<'a> {
    type Item = Tok<'a>;
    fn next(&mut self) -> Option<Tok<'a>> {
        let b = self.s.as_bytes();
        loop {
            while self.i < b.len() && (b[self.i].is_ascii_whitespace() || b[self.i] == b'\\') {
                self.i += 1;
            }
            if self.i + 1 < b.len() && b[self.i] == b'/' && b[self.i + 1] == b'*' {
                self.i = match self.s[self.i + 2..].find("*/") {
                    Some(k) => self.i + 2 + k + 2,
                    None => b.len(),
                };
                continue;
            }
            if self.i + 1 < b.len() && b[self.i] == b'/' && b[self.i + 1] == b'/' {
                self.i = match self.s[self.i..].find('\n') {
                    Some(k) => self.i + k,
                    None => b.len(),
                };
                continue;
            }
            break;
        }
        if self.i >= b.len() {
            return None;
        }
        let c = b[self.i];
        match c {
            b'(' | b')' | b'{' | b'}' | b':' | b';' | b',' => {
                self.i += 1;
                Some(Tok::Punct(c))
            }
            b'"' => {
                let start = self.i + 1;
                let mut j = start;
                while j < b.len() && b[j] != b'"' {
                    j += if b[j] == b'\\' { 2 } else { 1 };
                }
                let end = j.min(b.len());
                self.i = (j + 1).min(b.len());
                Some(Tok::Str(&self.s[start..end]))
            }
            _ => {
                let start = self.i;
                while self.i < b.len() {
                    let d = b[self.i];
                    if d.is_ascii_whitespace()
                        || matches!(d, b'(' | b')' | b'{' | b'}' | b':' | b';' | b',' | b'"')
                    {
                        break;
                    }
                    self.i += 1;
                }
                Some(Tok::Word(&self.s[start..self.i]))
            }
        }
    }
}

fn tok_text<'a>(t: &Tok<'a>) -> Option<&'a str> {
    match t {
        Tok::Word(w) | Tok::Str(w) => Some(w),
        Tok::Punct(_) => None,
    }
}

/// Scans liberty text. Tolerant: unknown constructs are skipped, never fatal.
fn scan(text: &str) -> Scan {
    let toks: Vec<Tok<'_>> = Lexer { s: text, i: 0 }.collect();
    let mut out = Scan::default();
    // Stack of open groups: (group keyword, first argument).
    let mut stack: Vec<(&str, String)> = Vec::new();
    let mut current_cell: Option<usize> = None;
    let mut i = 0;
    while i < toks.len() {
        match &toks[i] {
            Tok::Punct(b'}') => {
                if let Some((kw, _)) = stack.pop() {
                    if kw == "cell" {
                        current_cell = None;
                    }
                }
                i += 1;
            }
            Tok::Word(w) if matches!(toks.get(i + 1), Some(Tok::Punct(b'('))) => {
                // Group header or complex attribute: `w ( args ) {` or `w ( args ) ;`
                let mut args: Vec<&str> = Vec::new();
                let mut j = i + 2;
                while j < toks.len() && toks[j] != Tok::Punct(b')') {
                    if let Some(a) = tok_text(&toks[j]) {
                        args.push(a);
                    }
                    j += 1;
                }
                j += 1; // past ')'
                let first = args.first().map(|a| a.to_string()).unwrap_or_default();
                if toks.get(j) == Some(&Tok::Punct(b'{')) {
                    let parent = stack.last().map(|(k, _)| *k);
                    match (*w, parent) {
                        ("library", None) => out.name = Some(first.clone()),
                        ("cell", Some("library")) => {
                            out.cells.push(ScanCell {
                                name: first.clone(),
                                area: None,
                                kind: CellKind::Comb,
                                pins: Vec::new(),
                            });
                            current_cell = Some(out.cells.len() - 1);
                        }
                        ("pin", Some("cell")) => {
                            if let Some(c) = current_cell.and_then(|k| out.cells.get_mut(k)) {
                                c.pins.push(ScanPin {
                                    name: first.clone(),
                                    ..ScanPin::default()
                                });
                            }
                        }
                        ("ff" | "ff_bank", Some("cell")) => {
                            if let Some(c) = current_cell.and_then(|k| out.cells.get_mut(k)) {
                                c.kind = CellKind::Flop;
                            }
                        }
                        ("latch" | "latch_bank", Some("cell")) => {
                            if let Some(c) = current_cell.and_then(|k| out.cells.get_mut(k)) {
                                if c.kind == CellKind::Comb {
                                    c.kind = CellKind::Latch;
                                }
                            }
                        }
                        _ => {}
                    }
                    stack.push((w, first));
                    j += 1;
                } else {
                    if *w == "capacitive_load_unit" && stack.len() == 1 && args.len() >= 2 {
                        out.cap_unit_pf = cap_unit_to_pf(args[0], args[1]);
                    }
                    if toks.get(j) == Some(&Tok::Punct(b';')) {
                        j += 1;
                    }
                }
                i = j;
            }
            Tok::Word(w) if matches!(toks.get(i + 1), Some(Tok::Punct(b':'))) => {
                let value = toks.get(i + 2).and_then(tok_text);
                let parent = stack.last().map(|(k, _)| *k);
                match (*w, parent, value) {
                    ("time_unit", Some("library"), Some(v)) => out.time_unit = Some(v.to_string()),
                    ("area", Some("cell"), Some(v)) => {
                        if let Some(c) = current_cell.and_then(|k| out.cells.get_mut(k)) {
                            c.area = v.trim().parse().ok();
                        }
                    }
                    ("direction" | "function", Some("pin"), Some(v)) => {
                        let pin = current_cell
                            .and_then(|k| out.cells.get_mut(k))
                            .and_then(|c| c.pins.last_mut());
                        if let Some(pin) = pin {
                            let v = Some(v.trim().trim_matches('"').trim().to_string());
                            if *w == "direction" {
                                pin.direction = v;
                            } else {
                                pin.function = v;
                            }
                        }
                    }
                    _ => {}
                }
                i += 3;
                if toks.get(i) == Some(&Tok::Punct(b';')) {
                    i += 1;
                }
            }
            _ => i += 1,
        }
    }
    out
}

#[cfg(test)]
mod dont_use_tests {
    use super::remove_cells;

    #[test]
    fn removes_only_matching_cell_groups() {
        let lib = "library (x) {\n  cell (A) { area : 1; pin (Y) { function : \"{}\"; } }\n  cell (\"sky130_fd_sc_hd__lpflow_isobufsrc_1\") { area : 2; }\n  cell (B) { dont_use : true; area : 3; }\n  cellx : 1;\n}\n";
        let (out, removed) = remove_cells(lib, super::is_dont_use);
        assert_eq!(
            removed,
            vec![
                "sky130_fd_sc_hd__lpflow_isobufsrc_1".to_string(),
                "B".to_string()
            ]
        );
        assert!(out.contains("cell (A)") && out.contains("cellx : 1;"));
        assert!(!out.contains("lpflow") && !out.contains("area : 3"));
        assert_eq!(out.matches('{').count(), out.matches('}').count());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MINI: &str = r#"
/* comment with cell (FAKE) { area : 99; } */
library (mini) {
  time_unit : "1ps";
  capacitive_load_unit (1,ff);
  cell (INV_X1) { area : 0.5; pin(A) { direction : input; } }
  cell ("my_nand2_1") { area : 1.25 ; pin(Y) { function : "!(A&B)"; } }
  cell (DFF_X1) { area : 4.5; ff (IQ, IQN) { next_state : "D"; clocked_on : "CK"; } }
  cell (LAT_X1) { area : 3; latch (IQ, IQN) { enable : "G"; data_in : "D"; } }
}
"#;

    #[test]
    fn scans_minimal_library() {
        let s = scan(MINI);
        assert_eq!(s.name.as_deref(), Some("mini"));
        assert_eq!(s.time_unit.as_deref(), Some("1ps"));
        assert_eq!(s.cap_unit_pf, Some(1e-3));
        assert_eq!(s.cells.len(), 4);
        let lib = Liberty::from_scan(s, "x.lib".into(), "x.lib".into()).expect("parse");
        assert_eq!(lib.nand2_cell, "my_nand2_1");
        assert!((lib.nand2_area_um2 - 1.25).abs() < 1e-12);
        assert!((lib.time_unit_ns - 0.001).abs() < 1e-12);
        assert!(lib.flop_cells.contains("DFF_X1"));
        assert!(lib.latch_cells.contains("LAT_X1"));
    }

    #[test]
    fn missing_nand2_is_a_parse_error() {
        let s = scan("library (x) { cell (INV) { area : 1; } }");
        let e = Liberty::from_scan(s, "x.lib".into(), "x.lib".into()).unwrap_err();
        assert!(matches!(e, SynthError::LibertyParse { .. }), "{e}");
    }

    #[test]
    fn time_units() {
        assert_eq!(parse_time_unit("1ns"), Some(1.0));
        assert_eq!(parse_time_unit("10ps"), Some(0.01));
        assert_eq!(parse_time_unit("furlong"), None);
    }

    #[test]
    fn missing_file_is_reported() {
        let e = Liberty::load("/nonexistent/x.lib").unwrap_err();
        assert!(matches!(e, SynthError::LibertyNotFound { .. }), "{e}");
    }

    #[test]
    fn osu018_loads() {
        let Ok(lib) = Liberty::osu018() else {
            eprintln!("osu018 not installed; skipping");
            return;
        };
        assert_eq!(lib.name, "osu018_stdcells");
        assert_eq!(lib.nand2_cell, "NAND2X1");
        assert!((lib.nand2_area_um2 - 24.0).abs() < 1e-9);
        assert!((lib.time_unit_ns - 1.0).abs() < 1e-12);
        assert!(lib.flop_cells.contains("DFFPOSX1"));
        assert!(lib.flop_cells.contains("DFFSR"));
        assert!(lib.latch_cells.contains("LATCH"));
        let b = lib.buffer.as_ref().expect("a buffer cell");
        assert_eq!(
            (b.name.as_str(), b.input.as_str(), b.output.as_str()),
            ("BUFX4", "A", "Y")
        );
        assert!(lib.output_pins["DFFPOSX1"].contains("Q"));
        assert!(!lib.output_pins["DFFPOSX1"].contains("D"));
    }

    #[test]
    fn gz_liberty_loads_and_is_cached() {
        let Ok(osu) = Liberty::osu018() else {
            eprintln!("osu018 not installed; skipping");
            return;
        };
        let tmp = tempfile::tempdir().expect("tempdir");
        let gz = tmp.path().join("osu018.lib.gz");
        let raw = fs::read(&osu.path).expect("read osu018");
        let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        enc.write_all(&raw).expect("gzip");
        fs::write(&gz, enc.finish().expect("gzip")).expect("write gz");
        let a = Liberty::load(&gz).expect("load gz");
        assert_eq!(a.name, osu.name);
        assert_eq!(a.nand2_area_um2, osu.nand2_area_um2);
        assert!(
            a.path.extension().is_some_and(|e| e == "lib"),
            "{:?}",
            a.path
        );
        assert_eq!(fs::read(&a.path).expect("cached"), raw);
        let b = Liberty::load(&gz).expect("reload gz");
        assert_eq!(a.path, b.path, "cache entry must be reused");
    }

    #[test]
    fn shared_reference_areas() {
        let refs = Liberty::shared_refs().expect("shared refs parse");
        if refs.is_empty() {
            eprintln!("no shared/pdk reference libraries; skipping");
        }
        for lib in &refs {
            eprintln!(
                "{}: {} = {} um2, time unit {} ns, {} cells, {} flops, {} latches",
                lib.name,
                lib.nand2_cell,
                lib.nand2_area_um2,
                lib.time_unit_ns,
                lib.cell_count,
                lib.flop_cells.len(),
                lib.latch_cells.len()
            );
            let buf = lib.buffer.as_ref().map(|b| b.name.as_str());
            match lib.nand2_cell.as_str() {
                "NAND2_X1" => {
                    assert!((lib.nand2_area_um2 - 0.798).abs() < 1e-9);
                    assert_eq!(buf, Some("BUF_X4"));
                }
                "sky130_fd_sc_hd__nand2_1" => {
                    assert!((lib.nand2_area_um2 - 3.7536).abs() < 1e-9);
                    assert_eq!(buf, Some("sky130_fd_sc_hd__buf_4"));
                }
                other => panic!("unexpected reference cell {other} in {}", lib.name),
            }
        }
    }
}
