//! Where hwzip keeps its caches (Verilator models, synthesis results).

use std::path::PathBuf;

/// The cache directory `kind` (e.g. `verilator`, `synth`): `$<env>` when set and not empty,
/// else `<$CARGO_TARGET_DIR or ./target>/hwzip-cache/<kind>`, made absolute.
pub fn cache_dir(env: &str, kind: &str) -> PathBuf {
    let p = match std::env::var_os(env) {
        Some(p) if !p.is_empty() => PathBuf::from(p),
        _ => std::env::var_os("CARGO_TARGET_DIR")
            .filter(|p| !p.is_empty())
            .map(PathBuf::from)
            .unwrap_or_else(|| PathBuf::from("target"))
            .join("hwzip-cache")
            .join(kind),
    };
    if p.is_absolute() {
        p
    } else {
        std::env::current_dir().map(|d| d.join(&p)).unwrap_or(p)
    }
}
