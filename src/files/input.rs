//! Bounded input: every file hwzip reads on behalf of a user goes through here.
//!
//! * The **kind** is checked first: a regular file, or for traces and containers a stream
//!   (pipe, FIFO, socket). Directories and devices such as `/dev/zero` are refused before a
//!   byte is read.
//! * A regular file's **size** is checked against the limit of its [`Purpose`] before it is
//!   read; a stream is read through a [`Read::take`] of one byte more than the limit.
//! * **gzip** is inflated in chunks with an output limit (the purpose's limit) and, beyond
//!   64 MiB of output, a ratio guard of at most 1,024 bytes out per byte in (the DEFLATE
//!   maximum is 1,032:1; a gzip bomb nests or repeats members to go beyond it).
//! * Errors are [`io::Error`]s whose text names the limit and the flag that raises it; callers
//!   add the file name.
//!
//! Limits (see docs/RELIABILITY.md): configs 1 MiB; trace descriptions 1 MiB;
//! traces and containers 1 GiB; Liberty and Verilog sources 256 MiB. `--max-input SIZE` raises
//! or lowers the trace and container limit (and turns the gzip ratio guard off).

use std::fs::File;
use std::io::{self, Read};
use std::path::Path;
use std::sync::OnceLock;

/// What a file is read for; it sets the size limit and whether streams are accepted.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Purpose {
    /// A YAML configuration.
    Config,
    /// A YAML trace description.
    TraceDesc,
    /// Trace data (raw, `.npy`, gzip).
    Trace,
    /// An `hwzip compress` input or an `hwzip decompress` container.
    Container,
    /// A Liberty library.
    Liberty,
    /// A Verilog source given to `synth --verilog`.
    Verilog,
}

/// The default limit of traces and containers (1 GiB).
pub const DEFAULT_DATA_LIMIT: u64 = 1 << 30;
/// gzip output beyond which the ratio guard applies.
const RATIO_FLOOR: u64 = 64 << 20;
/// Largest output per input byte of gzip beyond [`RATIO_FLOOR`].
const MAX_RATIO: u64 = 1024;

static DATA_LIMIT: OnceLock<u64> = OnceLock::new();

/// Sets the trace and container limit (`--max-input`); the first call wins.
pub fn set_data_limit(bytes: u64) {
    let _ = DATA_LIMIT.set(bytes);
}

fn data_limit_overridden() -> bool {
    DATA_LIMIT.get().is_some()
}

impl Purpose {
    /// The largest number of bytes read (after gunzip) for this purpose.
    pub fn limit(self) -> u64 {
        match self {
            Purpose::Config | Purpose::TraceDesc => 1 << 20,
            Purpose::Trace | Purpose::Container => {
                DATA_LIMIT.get().copied().unwrap_or(DEFAULT_DATA_LIMIT)
            }
            Purpose::Liberty | Purpose::Verilog => 256 << 20,
        }
    }

    /// Human name used in messages.
    pub fn name(self) -> &'static str {
        match self {
            Purpose::Config => "configs",
            Purpose::TraceDesc => "trace descriptions",
            Purpose::Trace => "traces",
            Purpose::Container => "compress/decompress inputs",
            Purpose::Liberty => "Liberty files",
            Purpose::Verilog => "Verilog sources",
        }
    }

    fn streams_ok(self) -> bool {
        matches!(self, Purpose::Trace | Purpose::Container)
    }

    fn hint(self) -> &'static str {
        match self {
            Purpose::Trace | Purpose::Container => " (raise it with --max-input)",
            _ => "",
        }
    }

    fn too_big(self, what: &str) -> io::Error {
        io::Error::new(
            io::ErrorKind::InvalidData,
            format!(
                "{} more than the {} limit for {}{}",
                what,
                human(self.limit()),
                self.name(),
                self.hint()
            ),
        )
    }
}

/// `1073741824` → `1 GiB`; exact binary units when they divide, bytes otherwise.
pub fn human(bytes: u64) -> String {
    for (shift, unit) in [(40, "TiB"), (30, "GiB"), (20, "MiB"), (10, "KiB")] {
        if bytes >= 1 << shift && bytes.is_multiple_of(1 << shift) {
            return format!("{} {}", bytes >> shift, unit);
        }
    }
    format!("{} bytes", bytes)
}

/// Parses a size such as `4096`, `64K`, `512M`, `2G` or `1T` (binary units; an optional
/// trailing `B` or `iB`), between 1 byte and 1 TiB.
pub fn parse_size(s: &str) -> Result<u64, String> {
    let t = s.trim();
    let t = t
        .strip_suffix("iB")
        .or_else(|| t.strip_suffix('B'))
        .unwrap_or(t);
    let (num, shift) = match t.char_indices().last() {
        Some((i, c)) if c.is_ascii_alphabetic() => {
            let sh = match c.to_ascii_uppercase() {
                'K' => 10,
                'M' => 20,
                'G' => 30,
                'T' => 40,
                _ => return Err(bad_size(s)),
            };
            (&t[..i], sh)
        }
        _ => (t, 0),
    };
    let n: u64 = num.trim().parse().map_err(|_| bad_size(s))?;
    n.checked_shl(shift)
        .filter(|&v| v >> shift == n && (1..=1u64 << 40).contains(&v))
        .ok_or_else(|| bad_size(s))
}

fn bad_size(s: &str) -> String {
    format!(
        "size `{}` is not a number of bytes in 1..=1T (e.g. 4096, 64K, 512M, 2G)",
        crate::files::quote(s)
    )
}

/// Opens `path` for `purpose` after checking its kind; returns the file and, for a regular
/// file, its length (already checked against the limit).
pub fn open(path: &Path, purpose: Purpose) -> io::Result<(File, Option<u64>)> {
    use std::os::unix::fs::FileTypeExt;
    let meta = std::fs::metadata(path)?;
    let ft = meta.file_type();
    let len = if ft.is_file() {
        if meta.len() > purpose.limit() {
            return Err(purpose.too_big(&format!("is {} bytes,", meta.len())));
        }
        Some(meta.len())
    } else if ft.is_dir() {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            "is a directory, not a file",
        ));
    } else if (ft.is_fifo() || ft.is_socket()) && purpose.streams_ok() {
        None
    } else {
        let kind = if ft.is_char_device() || ft.is_block_device() {
            "a device"
        } else if ft.is_fifo() || ft.is_socket() {
            "a pipe"
        } else {
            "not a regular file"
        };
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("is {}; {} must be regular files", kind, purpose.name()),
        ));
    };
    Ok((File::open(path)?, len))
}

/// Reads at most the purpose's limit from `r`; more is an error.
pub fn read_limited(r: impl Read, purpose: Purpose, hint_len: Option<u64>) -> io::Result<Vec<u8>> {
    let limit = purpose.limit();
    let mut out = Vec::with_capacity(hint_len.unwrap_or(0).min(limit) as usize);
    r.take(limit.saturating_add(1)).read_to_end(&mut out)?;
    if out.len() as u64 > limit {
        return Err(purpose.too_big("has"));
    }
    Ok(out)
}

/// Reads the whole of `path` for `purpose` (kind and size checked first).
pub fn read(path: &Path, purpose: Purpose) -> io::Result<Vec<u8>> {
    let (f, len) = open(path, purpose)?;
    read_limited(f, purpose, len)
}

/// [`read`] as UTF-8 text.
pub fn read_to_string(path: &Path, purpose: Purpose) -> io::Result<String> {
    String::from_utf8(read(path, purpose)?).map_err(|e| {
        io::Error::new(
            io::ErrorKind::InvalidData,
            format!("is not UTF-8 text (byte {})", e.utf8_error().valid_up_to()),
        )
    })
}

/// Reads `path` after `check` accepted its first `head` bytes (or the whole file when it is
/// shorter): a container's magic is checked before its body is read.
pub fn read_after_head(
    path: &Path,
    purpose: Purpose,
    head: usize,
    check: impl FnOnce(&[u8]) -> Result<(), String>,
) -> io::Result<Vec<u8>> {
    let (f, len) = open(path, purpose)?;
    let mut first = Vec::with_capacity(head);
    let mut r = f;
    (&mut r).take(head as u64).read_to_end(&mut first)?;
    check(&first).map_err(|m| io::Error::new(io::ErrorKind::InvalidData, m))?;
    let rest = read_limited(r, purpose, len.map(|l| l.saturating_sub(head as u64)))?;
    if (first.len() + rest.len()) as u64 > purpose.limit() {
        return Err(purpose.too_big("has"));
    }
    first.extend_from_slice(&rest);
    Ok(first)
}

/// Inflates gzip data (all members) with the purpose's output limit and the ratio guard.
pub fn gunzip(compressed: &[u8], purpose: Purpose) -> io::Result<Vec<u8>> {
    let limit = purpose.limit();
    let ratio_guard = !data_limit_overridden() || !purpose.streams_ok();
    let mut dec = flate2::read::MultiGzDecoder::new(compressed);
    let mut out = Vec::new();
    let mut buf = vec![0u8; 1 << 16];
    loop {
        let n = dec.read(&mut buf).map_err(|e| {
            io::Error::new(
                io::ErrorKind::InvalidData,
                format!("not a valid gzip file: {}", e),
            )
        })?;
        if n == 0 {
            return Ok(out);
        }
        if (out.len() + n) as u64 > limit {
            return Err(purpose.too_big("inflates to"));
        }
        out.extend_from_slice(&buf[..n]);
        let total = out.len() as u64;
        if ratio_guard && total > RATIO_FLOOR && total > MAX_RATIO * compressed.len() as u64 {
            return Err(io::Error::new(
                io::ErrorKind::InvalidData,
                format!(
                    "gzip expands more than {}:1 beyond {} (a gzip bomb?); \
                     an explicit --max-input turns this guard off",
                    MAX_RATIO,
                    human(RATIO_FLOOR)
                ),
            ));
        }
    }
}

/// Deepest YAML nesting accepted: flow brackets (`[`, `{`) and block indentation columns.
pub const MAX_YAML_DEPTH: usize = 32;
/// Widest block indentation accepted, in columns.
pub const MAX_YAML_INDENT: usize = 256;

/// Checks YAML text before it is parsed: the parser takes time quadratic in the nesting depth
/// (500,000 `[` took six minutes), so deeper flow nesting than [`MAX_YAML_DEPTH`] or wider
/// indentation than [`MAX_YAML_INDENT`] is refused at once. Quoted scalars and comments are
/// skipped.
pub fn check_yaml_nesting(text: &str) -> Result<(), String> {
    let (mut depth, mut max) = (0usize, 0usize);
    for (no, line) in text.lines().enumerate() {
        let indent = line.len() - line.trim_start_matches(' ').len();
        if indent > MAX_YAML_INDENT {
            return Err(format!(
                "line {}: indented {} columns, more than {}",
                no + 1,
                indent,
                MAX_YAML_INDENT
            ));
        }
        let mut prev = ' ';
        let mut quote: Option<char> = None;
        for c in line.chars() {
            let token_start = matches!(prev, ' ' | '\t' | '[' | '{' | ',' | ':');
            prev = c;
            match (quote, c) {
                (Some(q), c) if c == q => quote = None,
                (Some(_), _) => {}
                (None, '\'' | '"') if token_start => quote = Some(c),
                (None, '#') => break,
                (None, '[' | '{') => {
                    depth += 1;
                    max = max.max(depth);
                }
                (None, ']' | '}') => depth = depth.saturating_sub(1),
                _ => {}
            }
            if max > MAX_YAML_DEPTH {
                return Err(format!(
                    "line {}: brackets nest deeper than {} levels",
                    no + 1,
                    MAX_YAML_DEPTH
                ));
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    #[test]
    fn deep_yaml_is_refused_before_parsing() {
        assert!(check_yaml_nesting("zvc: {lanes: 8}\nsynth:\n  libraries: [a, b]\n").is_ok());
        assert!(check_yaml_nesting("a: '[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[['\n").is_ok());
        assert!(check_yaml_nesting("# [[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[\n").is_ok());
        let e = check_yaml_nesting(&format!("zvc: {}", "[".repeat(500_000))).unwrap_err();
        assert!(e.contains("deeper than 32"), "{e}");
        let e = check_yaml_nesting(&format!("a: don't {}", "[".repeat(40))).unwrap_err();
        assert!(e.contains("deeper than 32"), "{e}");
        let e = check_yaml_nesting(&format!("a:\n{}b: 1\n", " ".repeat(300))).unwrap_err();
        assert!(e.contains("indented 300"), "{e}");
    }

    #[test]
    fn sizes_parse_with_units_and_bounds() {
        assert_eq!(parse_size("4096").unwrap(), 4096);
        assert_eq!(parse_size("64K").unwrap(), 64 << 10);
        assert_eq!(parse_size("512MiB").unwrap(), 512 << 20);
        assert_eq!(parse_size("2g").unwrap(), 2 << 30);
        assert_eq!(parse_size("1T").unwrap(), 1 << 40);
        for bad in [
            "",
            "0",
            "-1",
            "2X",
            "2T",
            "99999999999999999999",
            "1.5G",
            "G",
        ] {
            assert!(parse_size(bad).is_err(), "{bad}");
        }
        assert_eq!(human(1 << 30), "1 GiB");
        assert_eq!(human(1000), "1000 bytes");
    }

    #[test]
    fn kinds_and_limits_are_checked_before_reading() {
        let d = tempfile::tempdir().unwrap();
        let e = read(d.path(), Purpose::Trace).unwrap_err().to_string();
        assert!(e.contains("directory"), "{e}");
        let e = read(Path::new("/dev/zero"), Purpose::Container)
            .unwrap_err()
            .to_string();
        assert!(e.contains("a device"), "{e}");
        let big = d.path().join("big.yaml");
        let f = File::create(&big).unwrap();
        f.set_len(2 << 20).unwrap(); // sparse: 2 MiB, no data written
        let e = read(&big, Purpose::Config).unwrap_err().to_string();
        assert!(e.contains("1 MiB limit for configs"), "{e}");
        let e = read_after_head(&big, Purpose::Container, 4, |h| {
            if h == b"HWZP" {
                Ok(())
            } else {
                Err("bad magic".into())
            }
        })
        .unwrap_err()
        .to_string();
        assert_eq!(e, "bad magic");
    }

    #[test]
    fn streams_are_read_through_a_limit() {
        let r = io::repeat(0).take((1 << 20) + 10);
        let e = read_limited(r, Purpose::TraceDesc, None).unwrap_err();
        assert!(e.to_string().contains("1 MiB limit"), "{e}");
        let ok = read_limited(io::repeat(7).take(100), Purpose::Config, None).unwrap();
        assert_eq!(ok, vec![7; 100]);
    }

    #[test]
    fn gzip_has_an_output_limit_and_a_ratio_guard() {
        // 80 MiB of zeros compress to about 80 KiB: over 1,024:1 past the 64 MiB floor.
        let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
        let zeros = vec![0u8; 1 << 20];
        for _ in 0..80 {
            enc.write_all(&zeros).unwrap();
        }
        let bomb = enc.finish().unwrap();
        let e = gunzip(&bomb, Purpose::Trace).unwrap_err().to_string();
        assert!(e.contains("gzip bomb"), "{e}");
        let e = gunzip(&bomb, Purpose::Liberty).unwrap_err().to_string();
        assert!(e.contains("gzip bomb"), "{e}");
        let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        enc.write_all(b"hello").unwrap();
        assert_eq!(
            gunzip(&enc.finish().unwrap(), Purpose::Trace).unwrap(),
            b"hello"
        );
        let e = gunzip(b"not gzip", Purpose::Trace).unwrap_err().to_string();
        assert!(e.contains("gzip"), "{e}");
    }
}
