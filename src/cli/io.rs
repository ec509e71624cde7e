//! Files and standard streams of `compress` and `decompress`: `-` for stdin/stdout, an
//! input never overwritten, outputs written whole.

use hwzip::files::input;
use std::path::Path;

/// A compress input file, bounded by `--max-input`.
pub fn read(p: &Path) -> Result<Vec<u8>, String> {
    input::read(p, input::Purpose::Container)
        .map_err(|e| format!("cannot read {}: {}", p.display(), e))
}

/// Whether `p` is `-` (standard input or output).
pub fn is_std(p: &Path) -> bool {
    p.as_os_str() == "-"
}

/// Refuses an output that is the input (or the file behind standard input).
pub fn refuse_same_unless_std(input: &Path, output: &Path) -> Result<(), String> {
    if is_std(output) {
        return Ok(());
    }
    if is_std(input) {
        return hwzip::files::refuse_stdin_same(output);
    }
    hwzip::files::refuse_same(input, output)
}

/// Reads `p` (`-`: standard input, bounded like a file); a container is refused by its
/// magic.
pub fn read_input(p: &Path, container: bool) -> Result<Vec<u8>, String> {
    use hwzip::model::container::MAGIC;
    use std::io::Read;
    if !is_std(p) {
        return if container {
            read_container(p)
        } else {
            read(p)
        };
    }
    let not_container =
        || "standard input: not an hwzip container (the first bytes are not \"HWZP\")".to_string();
    let mut stdin = std::io::stdin().lock();
    // A container's first bytes are checked before the rest is read (`decompress - <
    // /dev/zero` fails at once, not after the input limit).
    let mut head = Vec::with_capacity(MAGIC.len());
    if container {
        (&mut stdin)
            .take(MAGIC.len() as u64)
            .read_to_end(&mut head)
            .map_err(|e| format!("cannot read standard input: {e}"))?;
        if head.is_empty() || !MAGIC.starts_with(&head) {
            return Err(not_container());
        }
    }
    let data = input::read_limited(
        std::io::Cursor::new(head).chain(stdin),
        input::Purpose::Container,
        None,
    )
    .map_err(|e| format!("cannot read standard input: {e}"))?;
    if container && !data.starts_with(&MAGIC) {
        return Err(not_container());
    }
    Ok(data)
}

/// Writes `data` to `p` whole (`-`: standard output, after everything was computed).
pub fn write_output(p: &Path, data: &[u8]) -> Result<(), String> {
    use std::io::Write;
    if !is_std(p) {
        return hwzip::files::write(p, data);
    }
    let mut out = std::io::stdout().lock();
    out.write_all(data)
        .and_then(|_| out.flush())
        .map_err(|e| format!("cannot write standard output: {e}"))
}

/// The one-line summary and the statistics: on standard error when the data goes to
/// standard output.
pub fn report(output: &Path, msg: &str, stats: Option<&String>) {
    let text = match stats {
        Some(s) if !s.is_empty() => format!("{msg}\n{s}"),
        _ => msg.to_string(),
    };
    if is_std(output) {
        eprintln!("{text}");
    } else {
        outln!("{text}");
    }
}

/// Reads a container, refusing it by its magic before the body is read.
pub fn read_container(p: &Path) -> Result<Vec<u8>, String> {
    use hwzip::model::container::MAGIC;
    input::read_after_head(p, input::Purpose::Container, MAGIC.len(), |head| {
        if head == MAGIC {
            Ok(())
        } else {
            Err("not an hwzip container (the first bytes are not \"HWZP\")".into())
        }
    })
    .map_err(|e| match e.kind() {
        // The content is wrong (magic, size): the file itself was readable.
        std::io::ErrorKind::InvalidData => format!("{}: {}", p.display(), e),
        _ => format!("cannot read {}: {}", p.display(), e),
    })
}
