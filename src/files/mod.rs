//! Files: bounded input ([`input`]: kind, size and gzip limits for everything read on a
//! user's behalf) and atomic output. Outputs are written through a temporary file in the
//! destination folder, flushed to disk, then renamed over the destination, so an error, a full
//! disk or a signal never leaves a partial file; an output that is the same file as an input is
//! refused (compared by device and inode, so through symlinks and hard links too).

pub mod input;

use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};

/// [`write_atomic`] with a one-line message naming the file.
pub fn write(path: &Path, data: impl AsRef<[u8]>) -> Result<(), String> {
    write_atomic(path, data.as_ref()).map_err(|e| format!("cannot write {}: {}", path.display(), e))
}

/// Whether `path` exists and is not a regular file or a folder (a device, a FIFO, a socket;
/// through symlinks): such an output is written in place, never replaced.
pub fn is_special(path: &Path) -> bool {
    fs::metadata(path).is_ok_and(|m| !m.is_file() && !m.is_dir())
}

/// Writes `data` to `path` atomically: into `.<name>.hwzip-tmp-<pid>-<n>` beside it, `fsync`,
/// then `rename`. On any error the temporary file is removed and `path` is untouched.
///
/// A special file ([`is_special`]: `/dev/null`, a terminal, a FIFO) is written in place, as
/// `cp` does: renaming over it would replace the device node with a regular file. A symlink
/// to a regular file is kept: the file it points to is replaced. A folder is an error.
pub fn write_atomic(path: &Path, data: &[u8]) -> std::io::Result<()> {
    if let Ok(m) = fs::metadata(path) {
        if m.is_dir() {
            return Err(std::io::Error::new(
                std::io::ErrorKind::IsADirectory,
                "is a folder",
            ));
        }
        if !m.is_file() {
            let mut f = fs::OpenOptions::new().write(true).open(path)?;
            f.write_all(data)?;
            return f.flush();
        }
    }
    let is_link = fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_symlink());
    if is_link {
        if let Ok(target) = fs::canonicalize(path) {
            return write_atomic(&target, data);
        }
    }
    let registered = write_temp_beside(path, data)?;
    let result = fs::rename(registered.path(), path);
    if result.is_err() {
        let _ = fs::remove_file(registered.path());
    }
    result
}

/// The folder of `path` (`.` for a bare name).
fn folder_of(path: &Path) -> PathBuf {
    match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => PathBuf::from("."),
    }
}

/// Writes `data` to `.<name>.hwzip-tmp-<pid>-<n>` beside `path` and flushes it to disk; the
/// temporary is registered for removal on a signal, and removed on an error. `n` counts the
/// process's writes, so two threads writing the same file (two synthesis runs of one design
/// on two libraries write its Verilog) each rename their own complete copy.
fn write_temp_beside(path: &Path, data: &[u8]) -> std::io::Result<crate::proc::Temp> {
    static WRITES: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let name = path
        .file_name()
        .ok_or_else(|| std::io::Error::new(std::io::ErrorKind::InvalidInput, "not a file path"))?;
    let tmp = folder_of(path).join(format!(
        ".{}.hwzip-tmp-{}-{}",
        name.to_string_lossy(),
        std::process::id(),
        WRITES.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
    ));
    let (mut f, temp) = crate::proc::create_temp_file(&tmp)?;
    let written = f.write_all(data).and_then(|()| f.sync_all());
    if let Err(e) = written {
        drop(f);
        let _ = fs::remove_file(&tmp);
        return Err(e);
    }
    Ok(temp)
}

/// Files written together, whole or not at all (a report set: `report.md`, `.csv`, `.json`,
/// `.html`, ...). [`FileSet::commit`] first writes every file to a temporary beside its
/// destination and flushes it; only when all are on disk are they renamed into place. A full
/// disk or any other failure before the renames removes the temporaries and changes nothing;
/// a rename failing (no data is written then) names the files already in place.
#[derive(Debug, Default)]
pub struct FileSet {
    files: Vec<(PathBuf, Vec<u8>)>,
}

impl FileSet {
    /// An empty set.
    pub fn new() -> FileSet {
        FileSet::default()
    }

    /// Adds a file (a later one with the same path replaces it).
    pub fn add(&mut self, path: impl Into<PathBuf>, data: impl Into<Vec<u8>>) {
        let path = path.into();
        self.files.retain(|(p, _)| *p != path);
        self.files.push((path, data.into()));
    }

    /// The paths in the set, in the order they were added.
    pub fn paths(&self) -> Vec<&Path> {
        self.files.iter().map(|(p, _)| p.as_path()).collect()
    }

    /// Writes every file (creating their folders), all or none; see [`FileSet`].
    pub fn commit(self) -> Result<(), String> {
        let mut staged = Vec::new();
        let mut in_place = Vec::new();
        for (path, data) in &self.files {
            match stage(path, data) {
                Ok(Some(t)) => staged.push((path, t)),
                Ok(None) => in_place.push((path, data)),
                Err(e) => {
                    for (_, t) in &staged {
                        let _ = fs::remove_file(t.path());
                    }
                    return Err(format!(
                        "cannot write {}: {}; no file of its report set was written",
                        path.display(),
                        e
                    ));
                }
            }
        }
        let mut done: Vec<String> = Vec::new();
        let mut result = Ok(());
        for (path, t) in &staged {
            if result.is_ok() {
                match fs::rename(t.path(), path) {
                    Ok(()) => done.push(path.display().to_string()),
                    Err(e) => result = Err((path.display().to_string(), e.to_string())),
                }
            } else {
                let _ = fs::remove_file(t.path());
            }
        }
        for (path, data) in in_place {
            if result.is_ok() {
                match write_atomic(path, data) {
                    Ok(()) => done.push(path.display().to_string()),
                    Err(e) => result = Err((path.display().to_string(), e.to_string())),
                }
            }
        }
        result.map_err(|(path, e)| {
            let written = if done.is_empty() {
                "none".to_string()
            } else {
                done.join(", ")
            };
            format!("cannot write {path}: {e}; already written: {written}")
        })
    }
}

/// Writes `data` to a flushed temporary beside `path` (registered for removal on a signal),
/// or `None` when `path` is a special file or a symlink, which [`write_atomic`] writes.
fn stage(path: &Path, data: &[u8]) -> std::io::Result<Option<crate::proc::Temp>> {
    if let Ok(m) = fs::metadata(path) {
        if m.is_dir() {
            return Err(std::io::Error::new(
                std::io::ErrorKind::IsADirectory,
                "is a folder",
            ));
        }
    }
    if is_special(path) || fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_symlink()) {
        return Ok(None);
    }
    fs::create_dir_all(folder_of(path))?;
    write_temp_beside(path, data).map(Some)
}

/// Whether `a` and `b` name the same existing file (same device and inode).
pub fn same_file(a: &Path, b: &Path) -> bool {
    use std::os::unix::fs::MetadataExt;
    match (fs::metadata(a), fs::metadata(b)) {
        (Ok(x), Ok(y)) => x.dev() == y.dev() && x.ino() == y.ino(),
        _ => false,
    }
}

/// An error when `output` is the same file as `input` (writing it would destroy the input).
pub fn refuse_same(input: &Path, output: &Path) -> Result<(), String> {
    if same_file(input, output) {
        return Err(format!(
            "output {} is the input file {}: choose another output",
            output.display(),
            input.display()
        ));
    }
    Ok(())
}

/// An error when standard input is the regular file `output` (`hwzip compress - f < f`):
/// compared by device and inode, as [`refuse_same`] does for named inputs.
pub fn refuse_stdin_same(output: &Path) -> Result<(), String> {
    use std::os::unix::fs::MetadataExt;
    let Ok(out) = fs::metadata(output) else {
        return Ok(());
    };
    // SAFETY: fstat(2) of descriptor 0 into a zeroed, properly sized struct.
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    if !out.is_file() || unsafe { libc::fstat(0, &mut st) } != 0 {
        return Ok(());
    }
    if st.st_dev == out.dev() && st.st_ino == out.ino() {
        return Err(format!(
            "output {} is the file on standard input: choose another output",
            output.display()
        ));
    }
    Ok(())
}

/// The member of `all` called `s` (by `name`); the error names `what` it looked for and
/// lists the known names.
pub fn by_name<U: Copy>(
    what: &str,
    all: &[U],
    name: fn(U) -> &'static str,
    s: &str,
) -> Result<U, String> {
    all.iter().copied().find(|&u| name(u) == s).ok_or_else(|| {
        let known: Vec<&str> = all.iter().map(|&u| name(u)).collect();
        format!(
            "unknown {what} `{}` (known: {})",
            quote(s),
            known.join(", ")
        )
    })
}

/// The most bytes of user input [`quote`] echoes in a message.
pub const QUOTE_MAX: usize = 80;

/// User input as it may appear in a one-line message: control characters escaped, at most
/// [`QUOTE_MAX`] bytes (cut at a character boundary and marked with the full length).
pub fn quote(s: &str) -> String {
    let mut out = String::new();
    for (i, c) in s.char_indices() {
        let piece: String = if c.is_control() {
            c.escape_default().collect()
        } else {
            c.to_string()
        };
        if out.len() + piece.len() > QUOTE_MAX {
            return format!("{}... ({} bytes)", out, s.len().max(i));
        }
        out.push_str(&piece);
    }
    out
}

/// A message with every span between double quotes or backticks longer than [`QUOTE_MAX`]
/// bytes shortened (a parser echoing a huge scalar or a number of 300 digits), and the whole
/// kept to one line.
pub fn clip(msg: &str) -> String {
    let one_line = msg.replace(['\n', '\r'], " ");
    let mut out = String::new();
    let mut rest = one_line.as_str();
    let mut unclosed = false;
    while let Some(open) = rest.find(['"', '`']) {
        let delim = &rest[open..=open];
        out.push_str(&rest[..=open]);
        rest = &rest[open + 1..];
        let Some(close) = rest.find(delim) else {
            unclosed = true;
            break;
        };
        let span = &rest[..close];
        if span.len() > QUOTE_MAX {
            out.push_str(&quote(span));
        } else {
            out.push_str(span);
        }
        out.push_str(delim);
        rest = &rest[close + 1..];
    }
    if unclosed && rest.len() > QUOTE_MAX {
        // An unclosed quote: its text is user input too.
        out.push_str(&quote(rest));
    } else {
        out.push_str(rest);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A set with one file that cannot be written changes nothing; a good set is written
    /// whole, replacing the older files.
    #[test]
    fn file_sets_are_all_or_nothing() {
        let d = tempfile::tempdir().unwrap();
        let a = d.path().join("r/a.md");
        let mut set = FileSet::new();
        set.add(&a, "one");
        set.add(d.path().join("r/b.json"), "two");
        set.commit().unwrap();
        let mut bad = FileSet::new();
        bad.add(&a, "new");
        bad.add(d.path().join("r/a.md/inside"), "x");
        let e = bad.commit().unwrap_err();
        assert!(e.contains("no file of its report set was written"), "{e}");
        assert_eq!(fs::read(&a).unwrap(), b"one");
        let left: Vec<_> = fs::read_dir(d.path().join("r")).unwrap().collect();
        assert_eq!(left.len(), 2, "temporaries left");
        let mut good = FileSet::new();
        good.add(&a, "new");
        assert_eq!(good.paths(), vec![a.as_path()]);
        good.commit().unwrap();
        assert_eq!(fs::read(&a).unwrap(), b"new");
    }

    #[test]
    fn quotes_are_short_and_on_one_line() {
        assert_eq!(quote("zvc"), "zvc");
        assert_eq!(quote("a\nb"), "a\\nb");
        let long = "x".repeat(100_000_000);
        let q = quote(&long);
        assert!(
            q.len() < 120 && q.ends_with("(100000000 bytes)"),
            "{}",
            q.len()
        );
        let big = format!(
            "invalid type: floating point `1{}.0`, expected u32",
            "0".repeat(300)
        );
        let c = clip(&big);
        assert!(c.len() < 160 && c.ends_with("`, expected u32"), "{c}");
        assert_eq!(
            clip("unknown field `k`, expected \"a\""),
            "unknown field `k`, expected \"a\""
        );
        let plain = "a long message without any quote in it ".repeat(5);
        assert_eq!(clip(&plain), plain);
        let q = quote(&"é".repeat(60));
        assert!(q.len() <= QUOTE_MAX + 20 && q.is_char_boundary(q.len()));
    }

    #[test]
    fn clipped_messages_keep_their_context() {
        let m = format!(
            "zvc.lanes: invalid type: string \"{}\", expected u32",
            "x".repeat(1000)
        );
        let c = clip(&m);
        assert!(c.len() < 160 && c.ends_with("expected u32"), "{c}");
        assert_eq!(clip("a\nb \"ok\""), "a b \"ok\"");
    }

    #[test]
    fn atomic_write_replaces_and_leaves_no_temporary() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("out.bin");
        write(&p, b"first").unwrap();
        write(&p, b"second").unwrap();
        assert_eq!(fs::read(&p).unwrap(), b"second");
        let names: Vec<_> = fs::read_dir(d.path()).unwrap().collect();
        assert_eq!(names.len(), 1, "temporary file left behind");
        // A destination in a missing folder fails and creates nothing.
        let bad = d.path().join("missing").join("x.bin");
        let e = write(&bad, b"x").unwrap_err();
        assert!(e.starts_with("cannot write"), "{e}");
        assert_eq!(fs::read_dir(d.path()).unwrap().count(), 1);
    }

    /// Threads of one process writing the same file at once (the flow synthesizes a design on
    /// several libraries in parallel, each run writing its Verilog) all succeed, and the file
    /// is one writer's whole data.
    #[test]
    fn concurrent_writes_of_one_file_all_succeed() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("same.v");
        let datas: Vec<Vec<u8>> = (0..8u8).map(|i| vec![b'a' + i; 1 << 16]).collect();
        for _ in 0..20 {
            std::thread::scope(|s| {
                for data in &datas {
                    let p = &p;
                    s.spawn(move || write(p, data).unwrap());
                }
            });
            assert!(datas.contains(&fs::read(&p).unwrap()));
        }
        assert_eq!(fs::read_dir(d.path()).unwrap().count(), 1);
    }

    #[test]
    fn special_files_are_written_in_place_and_symlinks_kept() {
        use std::ffi::CString;
        use std::os::unix::fs::FileTypeExt;
        let d = tempfile::tempdir().unwrap();
        let c = |p: &Path| CString::new(p.to_str().unwrap()).unwrap();
        // Character devices (the null and full devices' numbers) where mknod is permitted.
        let null = d.path().join("null");
        let full = d.path().join("full");
        // SAFETY: mknod(2) on paths in our own temporary folder.
        let made = unsafe {
            libc::mknod(
                c(&null).as_ptr(),
                libc::S_IFCHR | 0o666,
                libc::makedev(1, 3),
            ) == 0
                && libc::mknod(
                    c(&full).as_ptr(),
                    libc::S_IFCHR | 0o666,
                    libc::makedev(1, 7),
                ) == 0
        };
        if made {
            write(&null, b"data").unwrap();
            let e = write(&full, b"data").unwrap_err();
            assert!(e.contains("No space left"), "{e}");
            for p in [&null, &full] {
                assert!(fs::metadata(p).unwrap().file_type().is_char_device());
            }
        } else {
            eprintln!("mknod not permitted here; the FIFO case below still runs");
        }
        // A FIFO: the data reaches the reader, the FIFO stays.
        let fifo = d.path().join("fifo");
        // SAFETY: mkfifo(3) on a path in our own temporary folder.
        assert_eq!(unsafe { libc::mkfifo(c(&fifo).as_ptr(), 0o600) }, 0);
        let reader = {
            let fifo = fifo.clone();
            std::thread::spawn(move || fs::read(&fifo).unwrap())
        };
        write(&fifo, b"through the fifo").unwrap();
        assert_eq!(reader.join().unwrap(), b"through the fifo");
        assert!(fs::metadata(&fifo).unwrap().file_type().is_fifo());
        assert!(is_special(&fifo) && !is_special(d.path()));
        // No temporary beside any of them.
        let names: Vec<String> = fs::read_dir(d.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().to_string())
            .collect();
        assert!(names.iter().all(|n| !n.contains("hwzip-tmp")), "{names:?}");
        // A symlink to a regular file stays a symlink; its target gets the data.
        let target = d.path().join("target.bin");
        fs::write(&target, b"old").unwrap();
        let link = d.path().join("link.bin");
        std::os::unix::fs::symlink(&target, &link).unwrap();
        write(&link, b"new").unwrap();
        assert!(fs::symlink_metadata(&link)
            .unwrap()
            .file_type()
            .is_symlink());
        assert_eq!(fs::read(&target).unwrap(), b"new");
        // A folder is an error.
        assert!(write(d.path(), b"x").unwrap_err().contains("is a folder"));
    }

    #[test]
    fn same_file_through_symlink_and_hard_link() {
        let d = tempfile::tempdir().unwrap();
        let a = d.path().join("a");
        fs::write(&a, b"x").unwrap();
        let s = d.path().join("s");
        std::os::unix::fs::symlink(&a, &s).unwrap();
        let h = d.path().join("h");
        fs::hard_link(&a, &h).unwrap();
        assert!(refuse_same(&a, &s).is_err());
        assert!(refuse_same(&a, &h).is_err());
        assert!(refuse_same(&a, &d.path().join("new")).is_ok());
        let b = d.path().join("b");
        fs::write(&b, b"x").unwrap();
        assert!(refuse_same(&a, &b).is_ok());
    }
}
