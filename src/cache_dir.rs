//! Where hwzip keeps its caches (Verilator models, synthesis results, decompressed liberty
//! files): one root with a directory per kind.
//!
//! Root: `$HWZIP_CACHE_DIR` when set and not empty; else `$XDG_CACHE_HOME/hwzip` when that
//! is an absolute path (the XDG base-directory rule); else `$HOME/.cache/hwzip`; else
//! `<temp>/hwzip-cache`. Never the current directory's `target/` or the source tree. Every
//! entry is keyed by a hash of what can change it, so one root is shared safely by
//! checkouts, test runs and the installed binary.

use std::path::{Path, PathBuf};

/// The environment variable that overrides the cache root.
pub const ENV: &str = "HWZIP_CACHE_DIR";

/// The cache root (see the module documentation), made absolute.
pub fn cache_root() -> PathBuf {
    let var = |k: &str| {
        std::env::var_os(k)
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
    };
    root_from(
        var(ENV),
        var("XDG_CACHE_HOME"),
        var("HOME"),
        &std::env::temp_dir(),
    )
}

/// The cache directory for `kind` (`verilator`, `synth`, `liberty`): `<root>/<kind>`.
pub fn cache_dir(kind: &str) -> PathBuf {
    cache_root().join(kind)
}

/// Takes the advisory file lock of cache entry `name` under `root` (`<root>/.lock-<name>`),
/// held until the returned file is dropped, so that processes sharing the cache (a second
/// `hwzip`, shards, parallel tests) fill an entry once. An error names the lock file.
pub fn lock_entry(root: &Path, name: &str) -> Result<std::fs::File, (PathBuf, std::io::Error)> {
    let path = root.join(format!(".lock-{name}"));
    let f = std::fs::create_dir_all(root)
        .and_then(|_| std::fs::File::create(&path))
        .map_err(|e| (path.clone(), e))?;
    f.lock().map_err(|e| (path.clone(), e))?;
    Ok(f)
}

fn root_from(
    over: Option<PathBuf>,
    xdg: Option<PathBuf>,
    home: Option<PathBuf>,
    tmp: &Path,
) -> PathBuf {
    let p = over
        .or_else(|| xdg.filter(|x| x.is_absolute()).map(|x| x.join("hwzip")))
        .or_else(|| {
            home.filter(|h| h.is_absolute())
                .map(|h| h.join(".cache").join("hwzip"))
        })
        .unwrap_or_else(|| tmp.join("hwzip-cache"));
    if p.is_absolute() {
        p
    } else {
        std::env::current_dir().map(|d| d.join(&p)).unwrap_or(p)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn root_follows_override_then_xdg_then_home() {
        let tmp = Path::new("/tmp");
        let p = |s: &str| Some(PathBuf::from(s));
        assert_eq!(
            root_from(p("/c/x"), p("/xdg"), p("/home/u"), tmp),
            PathBuf::from("/c/x")
        );
        assert_eq!(
            root_from(None, p("/xdg"), p("/home/u"), tmp),
            PathBuf::from("/xdg/hwzip")
        );
        // A relative XDG_CACHE_HOME is invalid and ignored.
        assert_eq!(
            root_from(None, p("rel"), p("/home/u"), tmp),
            PathBuf::from("/home/u/.cache/hwzip")
        );
        assert_eq!(
            root_from(None, None, None, tmp),
            PathBuf::from("/tmp/hwzip-cache")
        );
        // A relative override is taken from the current directory.
        assert!(root_from(p("rel/c"), None, None, tmp).is_absolute());
    }
}
