//! Synthesis result cache: a run is redone only when something that can change its result
//! changed.
//!
//! The key hashes the Verilog sources, the netlists of reused children (hierarchical jobs), the liberty file, the Yosys/ABC/OpenSTA script templates, the top, the clock period
//! and port, and the versions of `yosys` and `sta`.
//! An entry is a directory `<root>/<top>-<library>-<key>/` holding the whole work directory
//! (scripts, logs, netlist) and `result.json`, written last: a directory without it (a run
//! that was interrupted or failed) is redone. Failures are not cached.
//!
//! Root: `<cache root>/synth` (`crate::cache_dir`: `$HWZIP_CACHE_DIR`, else
//! `$XDG_CACHE_HOME/hwzip`, else `~/.cache/hwzip`).

use super::{run_job, SynthError, SynthJob, SynthResult};
use sha2::{Digest, Sha256};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};

const RESULT: &str = "result.json";

/// Root directory of the synthesis cache.
pub fn cache_root() -> PathBuf {
    crate::cache_dir::cache_dir("synth")
}

fn tool_versions() -> &'static str {
    static V: OnceLock<String> = OnceLock::new();
    V.get_or_init(|| {
        let out = |prog: &str, arg: &str| {
            crate::proc::output(
                std::process::Command::new(super::run::tool_program(prog))
                    .arg(arg)
                    .stdin(std::process::Stdio::null()),
            )
            .map(|o| String::from_utf8_lossy(&o.stdout).into_owned())
            .unwrap_or_default()
        };
        format!("{}|{}", out("yosys", "-V"), out("sta", "-version"))
    })
}

/// The cache key of `job` (hex SHA-256).
pub fn key(job: &SynthJob) -> Result<String, SynthError> {
    let mut h = Sha256::new();
    let mut field = |b: &[u8]| {
        h.update((b.len() as u64).to_le_bytes());
        h.update(b);
    };
    field(b"hwzip-synth-v4");
    field(
        format!(
            "fan-out buffers max {}, child ports buffered, child inputs above {} isolated",
            super::buffer::MAX_FANOUT,
            super::buffer::PORT_ROOT_FANOUT
        )
        .as_bytes(),
    );
    field(job.top.as_bytes());
    field(job.effort.name().as_bytes());
    field(format!("abc buffer -N {}", job.buffer_fanout).as_bytes());
    field(format!("{:.6}", job.clock_ns).as_bytes());
    field(job.clock_port.as_deref().unwrap_or("").as_bytes());
    let mut sources = job.verilog.clone();
    sources.sort();
    for v in &sources {
        let text = crate::files::input::read(v, crate::files::input::Purpose::Verilog)
            .map_err(|e| SynthError::io(v, e))?;
        field(v.file_name().map_or(&[][..], |n| n.as_encoded_bytes()));
        field(&text);
    }
    let mut reuse: Vec<_> = job.reuse.iter().collect();
    reuse.sort_by(|a, b| a.module.cmp(&b.module));
    for c in reuse {
        let n = &c.result.netlist;
        let text = std::fs::read(n).map_err(|e| SynthError::io(n, e))?;
        field(b"reused child");
        field(c.module.as_bytes());
        field(&text);
    }
    for m in &job.macros {
        let text = std::fs::read(&m.liberty).map_err(|e| SynthError::io(&m.liberty, e))?;
        field(b"memory macro");
        field(format!("{} {}x{} {:?}", m.cell, m.words, m.width, m.mask_bits).as_bytes());
        field(&text);
    }
    let lib = std::fs::read(&job.liberty.path).map_err(|e| SynthError::io(&job.liberty.path, e))?;
    field(&lib);
    for t in super::templates() {
        field(t.as_bytes());
    }
    field(tool_versions().as_bytes());
    Ok(h.finalize().iter().map(|b| format!("{:02x}", b)).collect())
}

fn key_lock(key: &str) -> Arc<Mutex<()>> {
    static LOCKS: OnceLock<Mutex<HashMap<String, Arc<Mutex<()>>>>> = OnceLock::new();
    let mut m = LOCKS
        .get_or_init(Default::default)
        .lock()
        .unwrap_or_else(|e| e.into_inner());
    m.entry(key.to_string()).or_default().clone()
}

/// [`super::synthesize`] through the cache: returns the stored result when the key matches (and
/// `true`), otherwise runs the job in the entry directory (`job.work_dir` is replaced) and
/// stores the result. Concurrent calls with the same key run once, in one process or in
/// several sharing the cache.
pub fn synthesize_cached(job: &SynthJob) -> Result<(SynthResult, bool), SynthError> {
    synthesize_in(job, &cache_root())
}

/// [`synthesize_cached`] with the cache at `root`.
pub fn synthesize_in(job: &SynthJob, root: &Path) -> Result<(SynthResult, bool), SynthError> {
    super::validate(job)?;
    let key = key(job)?;
    let lib = job
        .liberty
        .source
        .file_name()
        .map(|n| {
            n.to_string_lossy()
                .split('.')
                .next()
                .unwrap_or("")
                .to_string()
        })
        .unwrap_or_default();
    let dir = root.join(format!("{}-{}-{}", job.top, lib, &key[..20]));
    let lock = key_lock(&key);
    let _guard = lock.lock().unwrap_or_else(|e| e.into_inner());
    let result = dir.join(RESULT);
    let stored = || {
        let text = std::fs::read_to_string(&result).ok()?;
        let r = serde_json::from_str::<SynthResult>(&text).ok()?;
        r.files_exist().then_some(r)
    };
    if let Some(r) = stored() {
        return Ok((r, true));
    }
    // Another process (a second `hwzip`, a shard, a parallel test) may be running the same
    // job in this entry: an advisory file lock makes it run once; the waiter then finds the
    // stored result.
    let _file_lock =
        crate::cache_dir::lock_entry(root, &dir.file_name().unwrap_or_default().to_string_lossy())
            .map_err(|(p, e)| SynthError::io(&p, e))?;
    if let Some(r) = stored() {
        return Ok((r, true));
    }
    if dir.exists() {
        std::fs::remove_dir_all(&dir).map_err(|e| SynthError::io(&dir, e))?;
    }
    let mut j = job.clone();
    j.work_dir = dir.clone();
    j.use_cache = false;
    let r = run_job(&j)?;
    let text = serde_json::to_string_pretty(&r).map_err(|e| SynthError::Parse {
        what: "a serializable result".into(),
        found: e.to_string(),
        log: result.clone(),
    })?;
    let tmp = dir.join(format!("{}.tmp", RESULT));
    std::fs::write(&tmp, text).map_err(|e| SynthError::io(&tmp, e))?;
    std::fs::rename(&tmp, &result).map_err(|e| SynthError::io(&result, e))?;
    Ok((r, false))
}
