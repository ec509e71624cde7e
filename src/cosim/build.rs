//! Verilate + compile + cache + load.

use std::collections::HashMap;
use std::fmt::Write as _;
use std::fs;
use std::io::ErrorKind;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Instant, SystemTime, UNIX_EPOCH};

use sha2::{Digest, Sha256};

use super::model::{Library, SO_NAME};
use super::{BuildSpec, CosimError, PortDir, PortSpec};

const SHIM_TMPL: &str = include_str!("../../verif/shim.cpp.tmpl");
/// Bump when the build recipe changes in a way the hashed inputs do not capture.
/// Bumped when the build recipe changes (v2: `__Slow.cpp` files compiled at `-O0`).
const RECIPE: &str = "hwzip-cosim-v2";

/// Toolchain facts, probed once per process.
#[derive(Debug)]
pub(crate) struct Tools {
    pub verilator: String,
    pub verilator_version: String,
    pub include: PathBuf,
    pub cxx: String,
    pub cxx_version: String,
}

/// Probe result: tools, or (missing tool name if not installed, message).
type ToolsProbe = Result<Tools, (Option<String>, String)>;
static TOOLS: OnceLock<ToolsProbe> = OnceLock::new();

/// Run `bin args` and return its stdout, mapping "not found" to [`CosimError::ToolMissing`].
pub(crate) fn tool_output(bin: &str, args: &[&str]) -> Result<String, CosimError> {
    match crate::proc::output(Command::new(bin).args(args).stdin(Stdio::null())) {
        Ok(o) if o.status.success() => Ok(String::from_utf8_lossy(&o.stdout).trim().to_string()),
        Ok(o) => Err(CosimError::ToolFailed {
            tool: format!("{bin} {}", args.join(" ")),
            code: o.status.code(),
            log_tail: tail(&String::from_utf8_lossy(&o.stderr), 20),
            log_path: PathBuf::new(),
        }),
        Err(e) if e.kind() == ErrorKind::NotFound => Err(CosimError::ToolMissing {
            tool: bin.to_string(),
            detail: e.to_string(),
        }),
        Err(e) => Err(CosimError::io(format!("running {bin}"), e)),
    }
}

fn probe_tools() -> Result<Tools, CosimError> {
    let verilator = std::env::var("HWZIP_VERILATOR").unwrap_or_else(|_| "verilator".into());
    let cxx = std::env::var("CXX").unwrap_or_else(|_| "g++".into());
    let verilator_version = tool_output(&verilator, &["--version"])?;
    let root = tool_output(&verilator, &["--getenv", "VERILATOR_ROOT"])?;
    let cxx_version = tool_output(&cxx, &["--version"])?;
    let include = PathBuf::from(root.lines().last().unwrap_or("").trim()).join("include");
    if !include.join("verilated.cpp").exists() {
        return Err(CosimError::Spec(format!(
            "Verilator runtime sources not found under {}",
            include.display()
        )));
    }
    Ok(Tools {
        verilator,
        verilator_version,
        include,
        cxx,
        cxx_version: cxx_version.lines().next().unwrap_or("").to_string(),
    })
}

pub(crate) fn tools() -> Result<&'static Tools, CosimError> {
    let r = TOOLS.get_or_init(|| {
        probe_tools().map_err(|e| match e {
            CosimError::ToolMissing { tool, detail } => (Some(tool), detail),
            e => (None, e.to_string()),
        })
    });
    match r {
        Ok(t) => Ok(t),
        Err((Some(tool), detail)) => Err(CosimError::ToolMissing {
            tool: tool.clone(),
            detail: detail.clone(),
        }),
        Err((None, msg)) => Err(CosimError::Spec(format!("toolchain probe failed: {msg}"))),
    }
}

/// Root of the Verilator build cache: `<cache root>/verilator` (`crate::cache_dir`).
pub fn cache_root() -> PathBuf {
    crate::cache_dir::cache_dir("verilator")
}

/// Optimization level of the Verilated C++ (0-3); 0 means "not set" (then `$HWZIP_CXX_OPT`
/// or 1).
static OPT_LEVEL: std::sync::atomic::AtomicU8 = std::sync::atomic::AtomicU8::new(0);

/// Sets the `-O` level of every later Verilator build (0-3). `-O1` (the default) compiles a
/// large unit in about half the time of `-O2` and simulates somewhat slower: the right trade
/// for short runs (tests, the quick flow); long runs and benchmarks use `-O2`
/// (`docs/TOOLCHAIN.md`). The level is part of the cache key. `$HWZIP_CXX_OPT` overrides
/// the default.
pub fn set_opt_level(level: u8) {
    OPT_LEVEL.store(level.min(3) + 1, Ordering::Relaxed);
}

thread_local! {
    /// A level for the builds of this thread only ([`with_opt_level`]).
    static THREAD_OPT_LEVEL: std::cell::Cell<Option<u8>> = const { std::cell::Cell::new(None) };
}

/// Runs `f` with every Verilator build it starts on this thread at `-O<level>`: e.g. `-O0`
/// for a model that runs a few thousand cycles (a fault-injected copy), where the compile
/// time is all that counts.
pub fn with_opt_level<T>(level: u8, f: impl FnOnce() -> T) -> T {
    let old = THREAD_OPT_LEVEL.with(|c| c.replace(Some(level.min(3))));
    let r = f();
    THREAD_OPT_LEVEL.with(|c| c.set(old));
    r
}

/// The `-O` level in effect ([`with_opt_level`], else [`set_opt_level`], else
/// `$HWZIP_CXX_OPT`, else 1).
pub fn opt_level() -> u8 {
    if let Some(l) = THREAD_OPT_LEVEL.with(|c| c.get()) {
        return l;
    }
    match OPT_LEVEL.load(Ordering::Relaxed) {
        BY_SIZE => 1,
        0 => std::env::var("HWZIP_CXX_OPT")
            .ok()
            .and_then(|s| s.trim().parse::<u8>().ok())
            .filter(|l| *l <= 3)
            .unwrap_or(1),
        l => l - 1,
    }
}

/// Verilog (the whole hierarchy) below which a model builds at `-O0` under the size rule
/// ([`set_opt_level_by_size`]): such a model compiles in a third to a half of its `-O1` time
/// (with the precompiled header) and a test-length run (10^3-10^4 lines) stays within a few
/// seconds. Larger ones (the MC tops, 1.3 MB with their codecs and cache) build at `-O1`:
/// their 10^4 requests are 10^5-10^6 cycles, which run about 4 times slower at `-O0`.
pub const O0_BELOW_BYTES: usize = 1_000_000;

/// [`OPT_LEVEL`]'s value for the size rule.
const BY_SIZE: u8 = u8::MAX;

/// From now on, every model whose level is not set otherwise ([`with_opt_level`]) builds at
/// `-O0` when its Verilog is under [`O0_BELOW_BYTES`], at `-O1` above: the choice for test
/// suites, whose runs are short. The library's own tests use it unless a level is set.
pub fn set_opt_level_by_size() {
    OPT_LEVEL.store(BY_SIZE, Ordering::Relaxed);
}

/// The level the size rule gives `spec`, when the rule is in effect and no level is set for
/// this thread.
fn level_by_size(spec: &BuildSpec) -> Option<u8> {
    if THREAD_OPT_LEVEL.with(|c| c.get()).is_some() {
        return None;
    }
    let rule = match OPT_LEVEL.load(Ordering::Relaxed) {
        BY_SIZE => true,
        // The library's own tests, unless `$HWZIP_CXX_OPT` sets a level.
        0 => cfg!(test) && std::env::var_os("HWZIP_CXX_OPT").is_none(),
        _ => false,
    };
    let bytes: usize = spec.sources.iter().map(|(_, t)| t.len()).sum();
    rule.then_some(if bytes < O0_BELOW_BYTES { 0 } else { 1 })
}

/// Compiler flags for every translation unit (model, shim, runtime, bench main). At `-O1`
/// (tests, the quick flow) GCC's value numbering may follow at most 100 alias queries per
/// memory access instead of 1,000: on the huge functions Verilator writes for a large model
/// that walk took 38 % of the compile time (`docs/TOOLCHAIN.md`).
pub(crate) fn cxx_flags(trace: bool) -> Vec<String> {
    let t = if trace { "1" } else { "0" };
    let level = opt_level();
    [format!("-O{}", level)]
        .into_iter()
        .chain((level == 1).then(|| "--param=sccvn-max-alias-queries-per-access=100".to_string()))
        .chain(
            [
                "-fPIC",
                "-std=gnu++17",
                "-faligned-new",
                "-fcf-protection=none",
                "-w",
                "-DVM_COVERAGE=0",
                "-DVM_SC=0",
                "-DVL_USER_FATAL",
                "-DVL_USER_FINISH",
            ]
            .iter()
            .map(|s| s.to_string()),
        )
        .chain([
            format!("-DVM_TRACE={t}"),
            format!("-DVM_TRACE_VCD={t}"),
            "-DVM_TRACE_FST=0".to_string(),
        ])
        .collect()
}

pub(crate) const LINK_LIBS: &[&str] = &["-pthread", "-latomic"];

fn hex(bytes: &[u8]) -> String {
    bytes.iter().fold(String::new(), |mut s, b| {
        let _ = write!(s, "{b:02x}");
        s
    })
}

/// Length-prefixed SHA-256 over a list of fields.
pub(crate) fn hash_fields<'a>(fields: impl IntoIterator<Item = &'a [u8]>) -> String {
    let mut h = Sha256::new();
    for f in fields {
        h.update((f.len() as u64).to_le_bytes());
        h.update(f);
    }
    hex(&h.finalize())
}

fn validate(spec: &BuildSpec) -> Result<(), CosimError> {
    let ident = |s: &str| {
        !s.is_empty()
            && s.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
            && !s.starts_with(|c: char| c.is_ascii_digit())
    };
    if !ident(&spec.top) {
        return Err(CosimError::Spec(format!(
            "bad top module name `{}`",
            spec.top
        )));
    }
    if spec.sources.is_empty() {
        return Err(CosimError::Spec("no Verilog sources".into()));
    }
    let mut names = std::collections::HashSet::new();
    for (name, _) in &spec.sources {
        if name.is_empty()
            || name.contains('/')
            || name.contains('\\')
            || name.starts_with('.')
            || !names.insert(name.as_str())
        {
            return Err(CosimError::Spec(format!(
                "bad or duplicate source file name `{name}`"
            )));
        }
    }
    let mut pnames = std::collections::HashSet::new();
    for p in &spec.ports {
        if !ident(&p.name) || !pnames.insert(p.name.as_str()) {
            return Err(CosimError::Spec(format!(
                "bad or duplicate port name `{}`",
                p.name
            )));
        }
        if p.width == 0 {
            return Err(CosimError::Spec(format!("port `{}` has width 0", p.name)));
        }
        if (p.name == "clk_i" || p.name == "rst_ni") && (p.width != 1 || p.dir != PortDir::In) {
            return Err(CosimError::Spec(format!(
                "`{}` must be a 1-bit input",
                p.name
            )));
        }
    }
    Ok(())
}

/// C++ storage of a port ≤ 64 bits.
fn ctype(width: u32) -> &'static str {
    match width {
        0..=8 => "CData",
        9..=16 => "SData",
        17..=32 => "IData",
        _ => "QData",
    }
}

fn mask64(width: u32) -> String {
    if width >= 64 {
        "0xFFFFFFFFFFFFFFFFULL".into()
    } else {
        format!("0x{:X}ULL", (1u64 << width) - 1)
    }
}

/// Mask of the top (possibly partial) 32-bit word.
fn top_mask(width: u32) -> String {
    let r = width % 32;
    if r == 0 {
        "0xFFFFFFFFu".into()
    } else {
        format!("0x{:X}u", (1u32 << r) - 1)
    }
}

/// C++ statement assigning random words from xorshift state `s` to input port `p`.
pub(crate) fn cpp_drive_random(p: &PortSpec) -> String {
    let n = &p.name;
    if p.width <= 64 {
        format!(
            "        top->{n} = ({})(hz_xorshift(s) & {});",
            ctype(p.width),
            mask64(p.width)
        )
    } else {
        let w = p.words();
        format!(
            "        for (int i = 0; i < {w}; ++i) top->{n}[i] = (uint32_t)hz_xorshift(s) & (i == {last} ? {m} : 0xFFFFFFFFu);",
            last = w - 1,
            m = top_mask(p.width)
        )
    }
}

/// C++ statement folding port `p` into checksum `acc`.
pub(crate) fn cpp_sample(p: &PortSpec) -> String {
    let n = &p.name;
    if p.width <= 64 {
        format!("        acc = (acc ^ (uint64_t)top->{n}) * 0x100000001B3ULL;")
    } else {
        format!(
            "        for (int i = 0; i < {}; ++i) acc = (acc ^ (uint64_t)top->{n}[i]) * 0x100000001B3ULL;",
            p.words()
        )
    }
}

fn has_port(spec: &BuildSpec, name: &str) -> bool {
    spec.ports.iter().any(|p| p.name == name)
}

/// `(clk low, clk high)` statements, empty for a combinational module.
pub(crate) fn clk_lines(spec: &BuildSpec) -> (String, String) {
    if has_port(spec, "clk_i") {
        (
            "            top->clk_i = 0;".into(),
            "            top->clk_i = 1;".into(),
        )
    } else {
        (String::new(), String::new())
    }
}

/// Generate the extern "C" shim for `spec` from `verif/shim.cpp.tmpl`.
pub(crate) fn gen_shim(spec: &BuildSpec) -> String {
    let (mut set, mut get, mut set64, mut get64, mut ptr) = (
        String::new(),
        String::new(),
        String::new(),
        String::new(),
        String::new(),
    );
    for (i, p) in spec.ports.iter().enumerate() {
        let n = &p.name;
        let ct = ctype(p.width);
        if p.width <= 32 {
            let m = top_mask(p.width);
            if p.dir == PortDir::In {
                let _ = writeln!(set, "    case {i}: top->{n} = ({ct})(w[0] & {m}); break;");
            }
            let _ = writeln!(get, "    case {i}: w[0] = (uint32_t)top->{n} & {m}; break;");
        } else if p.width <= 64 {
            let m = mask64(p.width);
            if p.dir == PortDir::In {
                let _ = writeln!(
                    set,
                    "    case {i}: top->{n} = ((uint64_t)w[0] | ((uint64_t)w[1] << 32)) & {m}; break;"
                );
            }
            let _ = writeln!(
                get,
                "    case {i}: {{ uint64_t v = (uint64_t)top->{n} & {m}; w[0] = (uint32_t)v; w[1] = (uint32_t)(v >> 32); }} break;"
            );
        } else {
            let words = p.words();
            let last = words - 1;
            let m = top_mask(p.width);
            if p.dir == PortDir::In {
                let _ = writeln!(
                    set,
                    "    case {i}: for (int k = 0; k < {last}; ++k) top->{n}[k] = w[k]; top->{n}[{last}] = w[{last}] & {m}; break;"
                );
            }
            let _ = writeln!(
                get,
                "    case {i}: for (int k = 0; k < {last}; ++k) w[k] = top->{n}[k]; w[{last}] = top->{n}[{last}] & {m}; break;"
            );
        }
        if p.width <= 64 {
            let _ = writeln!(ptr, "    case {i}: return (void*)&top->{n};");
        } else {
            let _ = writeln!(ptr, "    case {i}: return (void*)top->{n}.data();");
        }
        if p.width <= 64 {
            let m = mask64(p.width);
            if p.dir == PortDir::In {
                let _ = writeln!(set64, "    case {i}: top->{n} = ({ct})(v & {m}); break;");
            }
            let _ = writeln!(get64, "    case {i}: return (uint64_t)top->{n} & {m};");
        }
    }
    let (lo, hi) = clk_lines(spec);
    SHIM_TMPL
        .replace("{{TOP}}", &spec.top)
        .replace("{{TRACE}}", if spec.trace { "1" } else { "0" })
        .replace("{{NPORTS}}", &spec.ports.len().to_string())
        .replace("{{CLK_LOW}}", &lo)
        .replace("{{CLK_HIGH}}", &hi)
        .replace("{{SET_CASES}}", &set)
        .replace("{{GET_CASES}}", &get)
        .replace("{{SET_U64_CASES}}", &set64)
        .replace("{{GET_U64_CASES}}", &get64)
        .replace("{{PTR_CASES}}", &ptr)
}

/// Last `n` lines of `s`.
pub(crate) fn tail(s: &str, n: usize) -> String {
    let lines: Vec<&str> = s.lines().collect();
    lines[lines.len().saturating_sub(n)..].join("\n")
}

/// Run a command with stdout+stderr to `log`; error with the log tail on failure.
pub(crate) fn run_logged(mut cmd: Command, tool: &str, log: &Path) -> Result<(), CosimError> {
    let f = fs::File::create(log)
        .map_err(|e| CosimError::io(format!("creating {}", log.display()), e))?;
    let f2 = f
        .try_clone()
        .map_err(|e| CosimError::io("dup log handle", e))?;
    let status =
        crate::proc::status(cmd.stdin(Stdio::null()).stdout(f).stderr(f2)).map_err(|e| {
            if e.kind() == ErrorKind::NotFound {
                CosimError::ToolMissing {
                    tool: tool.to_string(),
                    detail: e.to_string(),
                }
            } else {
                CosimError::io(format!("running {tool}"), e)
            }
        })?;
    if status.success() {
        Ok(())
    } else {
        let text = fs::read_to_string(log).unwrap_or_default();
        Err(CosimError::ToolFailed {
            tool: tool.to_string(),
            code: status.code(),
            log_tail: tail(&text, 30),
            log_path: log.to_path_buf(),
        })
    }
}

/// Creates a registered temporary build folder ([`crate::proc::create_temp_dir`]).
fn temp_dir(p: &Path) -> Result<crate::proc::Temp, CosimError> {
    crate::proc::create_temp_dir(p)
        .map_err(|e| CosimError::io(format!("creating {}", p.display()), e))
}

/// Removes `.tmp-*` build folders in `root` left by processes that no longer exist (killed
/// with SIGKILL, or a crash); once per process. Folders of live processes are left alone.
pub(crate) fn reclaim_stale(root: &Path) {
    static DONE: std::sync::Once = std::sync::Once::new();
    DONE.call_once(|| {
        reclaim_in(root);
    });
}

fn reclaim_in(root: &Path) -> usize {
    let Ok(entries) = fs::read_dir(root) else {
        return 0;
    };
    let mut n = 0;
    for e in entries.flatten() {
        let name = e.file_name().to_string_lossy().to_string();
        if let Some(pid) = stale_pid(&name) {
            if !crate::proc::pid_alive(pid) && fs::remove_dir_all(e.path()).is_ok() {
                n += 1;
            }
        }
    }
    n
}

/// The pid in a `.tmp-<name>-<pid>-<nanos>-<n>` folder name ([`unique_suffix`]).
fn stale_pid(name: &str) -> Option<u32> {
    let rest = name.strip_prefix(".tmp-")?;
    let mut parts = rest.rsplitn(4, '-');
    let (_n, _nanos, pid) = (parts.next()?, parts.next()?, parts.next()?);
    parts.next()?;
    pid.parse().ok()
}

/// One g++ -c job.
pub(crate) struct CompileJob {
    pub src: PathBuf,
    pub obj: PathBuf,
    pub includes: Vec<PathBuf>,
    /// Flags appended after the common ones (a later `-O` wins).
    pub extra: Vec<String>,
}

fn jobs_limit() -> usize {
    std::env::var("HWZIP_JOBS")
        .ok()
        .and_then(|s| s.parse().ok())
        .filter(|&n: &usize| n > 0)
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(2, |n| n.get()))
}

/// Compile all jobs, `jobs_limit()` at a time; first error wins.
pub(crate) fn compile_parallel(
    tools: &Tools,
    flags: &[String],
    jobs: &[CompileJob],
) -> Result<(), CosimError> {
    let next = AtomicUsize::new(0);
    let first_err: Mutex<Option<CosimError>> = Mutex::new(None);
    let workers = jobs_limit().min(jobs.len()).max(1);
    std::thread::scope(|s| {
        for _ in 0..workers {
            s.spawn(|| loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                if i >= jobs.len() || first_err.lock().unwrap().is_some() {
                    break;
                }
                let j = &jobs[i];
                let mut cmd = Command::new(&tools.cxx);
                cmd.args(flags).args(&j.extra);
                for inc in &j.includes {
                    cmd.arg("-I").arg(inc);
                }
                cmd.arg("-c").arg(&j.src).arg("-o").arg(&j.obj);
                let log = j.obj.with_extension("log");
                let name = j.src.file_name().unwrap_or_default().to_string_lossy();
                if let Err(e) = run_logged(cmd, &format!("{} ({name})", tools.cxx), &log) {
                    first_err.lock().unwrap().get_or_insert(e);
                }
            });
        }
    });
    match first_err.into_inner().unwrap() {
        Some(e) => Err(e),
        None => Ok(()),
    }
}

pub(crate) fn unique_suffix() -> String {
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    static N: AtomicUsize = AtomicUsize::new(0);
    format!(
        "{}-{}-{}",
        std::process::id(),
        nanos,
        N.fetch_add(1, Ordering::Relaxed)
    )
}

/// Per-key in-process lock so test threads do not build the same entry twice.
fn key_lock(key: &str) -> Arc<Mutex<()>> {
    static LOCKS: OnceLock<Mutex<HashMap<String, Arc<Mutex<()>>>>> = OnceLock::new();
    let mut m = LOCKS.get_or_init(Default::default).lock().unwrap();
    m.entry(key.to_string()).or_default().clone()
}

/// Move a finished temp dir into place. Losing the race to another builder is fine.
fn publish(tmp: &Path, dst: &Path, marker: &str) -> Result<(), CosimError> {
    match fs::rename(tmp, dst) {
        Ok(()) => Ok(()),
        Err(_) if dst.join(marker).exists() => {
            let _ = fs::remove_dir_all(tmp);
            Ok(())
        }
        Err(e) => Err(CosimError::io(
            format!("renaming {} to {}", tmp.display(), dst.display()),
            e,
        )),
    }
}

/// Keep a failed build's directory (for its logs) under `<root>/failed/<name>`.
fn keep_failed(tmp: &Path, root: &Path, name: &str, err: CosimError) -> CosimError {
    let failed = root.join("failed").join(name);
    let _ = fs::create_dir_all(root.join("failed"));
    let _ = fs::remove_dir_all(&failed);
    if crate::proc::unless_stopping(|| fs::rename(tmp, &failed)).is_err() {
        return err;
    }
    match err {
        CosimError::ToolFailed {
            tool,
            code,
            log_tail,
            log_path,
        } => CosimError::ToolFailed {
            tool,
            code,
            log_tail,
            log_path: log_path
                .strip_prefix(tmp)
                .map(|rel| failed.join(rel))
                .unwrap_or(log_path),
        },
        e => e,
    }
}

fn runtime_sources(trace: bool) -> Vec<&'static str> {
    let mut v = vec!["verilated.cpp", "verilated_threads.cpp"];
    if trace {
        v.push("verilated_vcd_c.cpp");
    }
    v
}

/// Move freshly compiled runtime objects into `rt_dir` (which may already hold some).
fn install_runtime(rt_tmp: &Path, rt_dir: &Path, trace: bool) -> Result<(), CosimError> {
    if !rt_dir.exists() {
        publish(rt_tmp, rt_dir, "verilated.o")?;
    }
    for o in runtime_objects(rt_tmp, trace) {
        let dst = rt_dir.join(o.file_name().unwrap());
        if o.exists() && !dst.exists() {
            fs::rename(&o, &dst)
                .map_err(|e| CosimError::io(format!("installing {}", dst.display()), e))?;
        }
    }
    let _ = fs::remove_dir_all(rt_tmp);
    Ok(())
}

/// Directory of the cached Verilator runtime objects for these flags.
pub(crate) fn runtime_dir(root: &Path, tools: &Tools, trace: bool) -> PathBuf {
    let flags = cxx_flags(trace).join(" ");
    let key = hash_fields([
        RECIPE.as_bytes(),
        b"runtime",
        tools.verilator_version.as_bytes(),
        tools.cxx_version.as_bytes(),
        flags.as_bytes(),
    ]);
    root.join(format!("runtime-{}", &key[..16]))
}

/// The precompiled `verilated.h` for one set of compiler flags, built once per cache (like
/// the runtime) into `<root>/pch-<hash>/hz_pch.h.gch`; `None` when it cannot be built (the
/// units then parse the header as usual). Only `-O0` units use it: parsing `verilated.h`
/// is about 1 s of each unit's 1.2-1.7 s at `-O0`, and GCC gains little from it at `-O1`.
/// GCC checks that the flags match and otherwise ignores the file.
fn precompiled_header(
    root: &Path,
    tools: &Tools,
    flags: &[String],
    includes: &[PathBuf],
) -> Option<PathBuf> {
    let key = hash_fields(
        [
            RECIPE.as_bytes(),
            b"pch".as_slice(),
            tools.cxx_version.as_bytes(),
            tools.verilator_version.as_bytes(),
        ]
        .into_iter()
        .chain(flags.iter().map(|f| f.as_bytes())),
    );
    let dir = root.join(format!("pch-{}", &key[..16]));
    let header = dir.join("hz_pch.h");
    let gch = dir.join("hz_pch.h.gch");
    if gch.exists() {
        return Some(header);
    }
    let lock = key_lock(&dir.to_string_lossy());
    let _g = lock.lock().unwrap_or_else(|e| e.into_inner());
    if gch.exists() {
        return Some(header);
    }
    let tmp = root.join(format!(".tmp-pch-{}", unique_suffix()));
    let _registered = temp_dir(&tmp).ok()?;
    fs::write(tmp.join("hz_pch.h"), "#include \"verilated.h\"\n").ok()?;
    let mut cmd = Command::new(&tools.cxx);
    cmd.args(flags);
    for inc in includes {
        cmd.arg("-I").arg(inc);
    }
    cmd.args(["-x", "c++-header"])
        .arg(tmp.join("hz_pch.h"))
        .arg("-o")
        .arg(tmp.join("hz_pch.h.gch"));
    run_logged(cmd, "g++ (precompiled header)", &tmp.join("pch.log")).ok()?;
    publish(&tmp, &dir, "hz_pch.h.gch").ok()?;
    gch.exists().then_some(header)
}

/// `-include <pch>` for a unit compiled with `flags` + `extra`, when the effective level is
/// `-O0` and the precompiled header builds ([`precompiled_header`]).
fn pch_args(
    root: &Path,
    tools: &Tools,
    flags: &[String],
    extra: &[String],
    includes: &[PathBuf],
) -> Vec<String> {
    let all: Vec<String> = flags.iter().chain(extra).cloned().collect();
    let level0 = all
        .iter()
        .rev()
        .find(|f| f.starts_with("-O"))
        .is_some_and(|f| f == "-O0");
    if !level0 {
        return Vec::new();
    }
    match precompiled_header(root, tools, &all, includes) {
        Some(h) => vec!["-include".into(), h.to_string_lossy().into_owned()],
        None => Vec::new(),
    }
}

/// Object files of the runtime (for linking).
pub(crate) fn runtime_objects(dir: &Path, trace: bool) -> Vec<PathBuf> {
    runtime_sources(trace)
        .iter()
        .map(|s| dir.join(s).with_extension("o"))
        .collect()
}

/// Object files of a cache entry (model units + shim).
pub(crate) fn entry_objects(dir: &Path) -> Result<Vec<PathBuf>, CosimError> {
    let mut v: Vec<PathBuf> = fs::read_dir(dir)
        .map_err(|e| CosimError::io(format!("listing {}", dir.display()), e))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "o"))
        .collect();
    v.sort();
    Ok(v)
}

/// Whether `spec` needs Verilator's `--x-assign unique`: asked for ([`BuildSpec::x_random`])
/// and the sources hold an X literal. Without one the option changes nothing (initial values
/// are already drawn from the model's seed, Verilator's default `--x-initial unique`), so the
/// plain build, the same cache entry, serves both.
fn x_assign_unique(spec: &BuildSpec) -> bool {
    spec.x_random && spec.sources.iter().any(|(_, t)| has_x_literal(t))
}

/// Whether `verilog` may hold an X (or Z, `?`) literal: `'x`, `4'bx01`, `'hX`, ... Errs on
/// the side of yes (an apostrophe in a comment followed by such a letter counts).
fn has_x_literal(verilog: &str) -> bool {
    let b = verilog.as_bytes();
    b.iter()
        .enumerate()
        .filter(|(_, &c)| c == b'\'')
        .any(|(i, _)| {
            let mut j = i + 1;
            if matches!(b.get(j), Some(b's' | b'S')) {
                j += 1;
            }
            if matches!(
                b.get(j),
                Some(b'b' | b'B' | b'o' | b'O' | b'd' | b'D' | b'h' | b'H')
            ) {
                j += 1;
            }
            b[j.min(b.len())..]
                .iter()
                .take_while(|c| c.is_ascii_alphanumeric() || **c == b'_' || **c == b'?')
                .any(|c| matches!(c, b'x' | b'X' | b'z' | b'Z' | b'?'))
        })
}

/// Cache key of a spec: all inputs that influence the shared object.
pub(crate) fn spec_key(spec: &BuildSpec, shim: &str, tools: &Tools) -> String {
    let flags = cxx_flags(spec.trace).join(" ");
    let mut fields: Vec<&[u8]> = vec![
        RECIPE.as_bytes(),
        spec.top.as_bytes(),
        if spec.trace {
            b"trace-underscore"
        } else {
            b"fast"
        },
        if x_assign_unique(spec) {
            b"x-unique"
        } else {
            b"x-default"
        },
        shim.as_bytes(),
        tools.verilator_version.as_bytes(),
        tools.cxx_version.as_bytes(),
        flags.as_bytes(),
    ];
    for (n, t) in &spec.sources {
        fields.push(n.as_bytes());
        fields.push(t.as_bytes());
    }
    hash_fields(fields)
}

/// Cache directory name of `spec`.
pub(crate) fn entry_dir(spec: &BuildSpec, tools: &Tools) -> PathBuf {
    let shim = gen_shim(spec);
    let key = spec_key(spec, &shim, tools);
    let mode = match (spec.trace, x_assign_unique(spec)) {
        (false, false) => "fast",
        (true, false) => "trace",
        (false, true) => "xrand",
        (true, true) => "trace-xrand",
    };
    cache_root().join(format!("{}-{mode}-{}", spec.top, &key[..20]))
}

/// Verilate, compile and load `spec` (cached; see the module docs).
///
/// Returns the loaded library; instantiate models with [`super::Model::new`]. Errors: tool
/// missing ([`CosimError::ToolMissing`], points at `scripts/setup.sh`), Verilator or g++
/// failure ([`CosimError::ToolFailed`] with exit code, log tail and log path), bad spec.
pub fn build(spec: &BuildSpec) -> Result<Arc<Library>, CosimError> {
    validate(spec)?;
    if let Some(level) = level_by_size(spec) {
        return with_opt_level(level, || build(spec));
    }
    let tools = tools()?;
    let t0 = Instant::now();
    let root = cache_root();
    let dir = entry_dir(spec, tools);
    let name = dir.file_name().unwrap().to_string_lossy().to_string();
    let lock = key_lock(&name);
    let _guard = lock.lock().unwrap_or_else(|e| e.into_inner());
    let so = dir.join(SO_NAME);
    // Leftovers of a killed run (a second Ctrl-C exits without cleaning up) go on the next
    // run's first model lookup, cached or not.
    reclaim_stale(&root);
    let mut cached = so.exists();
    // Another process (a parallel test runner, a second `hwzip`) may be building the same
    // entry: an advisory file lock makes it build once; the waiter then finds it cached.
    let _file_lock = if cached {
        None
    } else {
        let f = crate::cache_dir::lock_entry(&root, &name)
            .map_err(|(p, e)| CosimError::io(format!("locking {}", p.display()), e))?;
        cached = so.exists();
        Some(f)
    };
    if !cached {
        if dir.exists() {
            // Incomplete entry (should not happen with rename publishing): start over.
            let _ = fs::remove_dir_all(&dir);
        }
        fs::create_dir_all(&root)
            .map_err(|e| CosimError::io(format!("creating {}", root.display()), e))?;
        let tmp = root.join(format!(".tmp-{name}-{}", unique_suffix()));
        let _registered = crate::proc::create_temp_dir(&tmp)
            .map_err(|e| CosimError::io(format!("creating {}", tmp.display()), e))?;
        match build_entry(spec, tools, &root, &tmp) {
            Ok(()) => publish(&tmp, &dir, SO_NAME)?,
            Err(e) => return Err(keep_failed(&tmp, &root, &name, e)),
        }
    }
    let lib = Library::load(spec, &dir, cached, t0.elapsed())?;
    Ok(Arc::new(lib))
}

fn build_entry(spec: &BuildSpec, tools: &Tools, root: &Path, tmp: &Path) -> Result<(), CosimError> {
    let mkdir = |p: &Path| {
        fs::create_dir_all(p).map_err(|e| CosimError::io(format!("creating {}", p.display()), e))
    };
    let write = |p: &Path, s: &str| {
        fs::write(p, s).map_err(|e| CosimError::io(format!("writing {}", p.display()), e))
    };
    let t_start = Instant::now();
    let src_dir = tmp.join("src");
    let obj_dir = tmp.join("obj");
    mkdir(&src_dir)?;
    for (n, text) in &spec.sources {
        write(&src_dir.join(n), text)?;
    }
    let shim = gen_shim(spec);
    write(&tmp.join("hz_shim.cpp"), &shim)?;

    // 1. Verilate.
    let mut cmd = Command::new(&tools.verilator);
    cmd.args([
        "--cc",
        "-Wno-fatal",
        "-Wno-lint",
        "-Wno-style",
        "--top-module",
    ])
    .arg(&spec.top)
    .args(["-Mdir", "obj"])
    .current_dir(tmp); // relative paths: messages say `src/<file>:<line>`
    if spec.trace {
        // Underscore names too: a gate-level netlist's nets are `_01234_` (energy step).
        cmd.args(["--trace", "--trace-underscore"]);
    }
    if x_assign_unique(spec) {
        cmd.args(["--x-assign", "unique", "--x-initial", "unique"]);
    }
    for (n, _) in &spec.sources {
        cmd.arg(Path::new("src").join(n));
    }
    run_logged(cmd, "verilator", &tmp.join("verilator.log"))?;
    let t_verilated = t_start.elapsed();

    // 2. Group the generated C++ into units per job slot (largest files first): the code
    // that runs every cycle at the configured level, Verilator's `__Slow.cpp` files
    // (construction and initial settling, run once) at `-O0`, which compiles them in about
    // 60 % of the time.
    let mut gen: Vec<(u64, PathBuf)> = fs::read_dir(&obj_dir)
        .map_err(|e| CosimError::io("listing verilator output", e))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "cpp"))
        .map(|p| (fs::metadata(&p).map_or(0, |m| m.len()), p))
        .collect();
    gen.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
    let is_slow = |p: &Path| p.to_string_lossy().ends_with("__Slow.cpp");
    let mut units: Vec<(bool, Vec<(u64, String)>)> = Vec::new();
    for slow in [false, true] {
        let files: Vec<&(u64, PathBuf)> = gen.iter().filter(|(_, p)| is_slow(p) == slow).collect();
        let n = jobs_limit().clamp(1, files.len().max(1));
        let mut group: Vec<(u64, String)> = vec![(0, String::new()); n];
        for (size, p) in files {
            let u = group.iter_mut().min_by_key(|u| u.0).unwrap();
            u.0 += size;
            let _ = writeln!(
                u.1,
                "#include \"{}\"",
                p.file_name().unwrap().to_string_lossy()
            );
        }
        units.push((slow, group));
    }
    let includes = vec![
        obj_dir.clone(),
        tools.include.clone(),
        tools.include.join("vltstd"),
    ];
    let mut jobs = Vec::new();

    // Runtime objects (shared by all models with the same flags). Whoever takes the runtime
    // lock first compiles them in the same job pool as its model; the others wait before linking.
    let rt_dir = runtime_dir(root, tools, spec.trace);
    let rt_ok = |d: &Path| runtime_objects(d, spec.trace).iter().all(|o| o.exists());
    let rt_lock = key_lock(&rt_dir.to_string_lossy());
    let mut rt_guard = match rt_lock.try_lock() {
        Ok(g) => Some(g),
        Err(std::sync::TryLockError::Poisoned(e)) => Some(e.into_inner()),
        Err(std::sync::TryLockError::WouldBlock) => None,
    };
    let rt_tmp = root.join(format!(".tmp-runtime-{}", unique_suffix()));
    let rt_building = rt_guard.is_some() && !rt_ok(&rt_dir);
    let mut _rt_registered = None;
    if rt_building {
        _rt_registered = Some(temp_dir(&rt_tmp)?);
        for s in runtime_sources(spec.trace) {
            jobs.push(CompileJob {
                src: tools.include.join(s),
                obj: rt_tmp.join(s).with_extension("o"),
                includes: includes.clone(),
                extra: Vec::new(),
            });
        }
    } else {
        rt_guard = None;
    }
    let flags = cxx_flags(spec.trace);
    // (At `-O0` already, the slow units share the fast units' flags and precompiled header.)
    let slow_extra: Vec<String> = if flags.iter().any(|f| f == "-O0") {
        Vec::new()
    } else {
        vec!["-O0".into()]
    };
    let pch_slow = pch_args(root, tools, &flags, &slow_extra, &includes[1..]);
    let pch_fast = pch_args(root, tools, &flags, &[], &includes[1..]);
    let mut k = 0;
    for (slow, group) in &units {
        for (_, text) in group {
            if text.is_empty() {
                continue;
            }
            let src = obj_dir.join(format!("hz_unit{k}.cpp"));
            write(&src, text)?;
            jobs.push(CompileJob {
                src,
                obj: tmp.join(format!("hz_unit{k}.o")),
                includes: includes.clone(),
                extra: if *slow {
                    slow_extra.iter().chain(&pch_slow).cloned().collect()
                } else {
                    pch_fast.clone()
                },
            });
            k += 1;
        }
    }
    jobs.push(CompileJob {
        src: tmp.join("hz_shim.cpp"),
        obj: tmp.join("hz_shim.o"),
        includes: includes.clone(),
        extra: pch_fast.clone(),
    });
    let compiled = compile_parallel(tools, &flags, &jobs);
    if rt_building {
        if compiled.is_ok() {
            install_runtime(&rt_tmp, &rt_dir, spec.trace)?;
        } else {
            let _ = fs::remove_dir_all(&rt_tmp);
        }
    }
    drop(rt_guard);
    compiled?;
    if !rt_ok(&rt_dir) {
        // Another thread was building the runtime: wait for it, or build it ourselves.
        let _g = rt_lock.lock().unwrap_or_else(|e| e.into_inner());
        if !rt_ok(&rt_dir) {
            let rt_tmp = root.join(format!(".tmp-runtime-{}", unique_suffix()));
            let _registered = temp_dir(&rt_tmp)?;
            let jobs: Vec<CompileJob> = runtime_sources(spec.trace)
                .iter()
                .map(|s| CompileJob {
                    src: tools.include.join(s),
                    obj: rt_tmp.join(s).with_extension("o"),
                    includes: includes.clone(),
                    extra: Vec::new(),
                })
                .collect();
            compile_parallel(tools, &flags, &jobs)?;
            install_runtime(&rt_tmp, &rt_dir, spec.trace)?;
        }
    }
    let rt_missing = rt_building;
    let t_compiled = t_start.elapsed();

    // 3. Link.
    let mut cmd = Command::new(&tools.cxx);
    cmd.args(["-shared", "-o"]).arg(tmp.join(SO_NAME));
    cmd.args(entry_objects(tmp)?);
    cmd.args(runtime_objects(&rt_dir, spec.trace));
    cmd.args(LINK_LIBS);
    run_logged(cmd, &format!("{} (link)", tools.cxx), &tmp.join("link.log"))?;
    let info = format!(
        "top={}\ntrace={}\nverilate_s={:.3}\ncompile_s={:.3}\ntotal_s={:.3}\nruntime_built={}\nverilator={}\ncxx={}\nflags={}\n",
        spec.top,
        spec.trace,
        t_verilated.as_secs_f64(),
        (t_compiled - t_verilated).as_secs_f64(),
        t_start.elapsed().as_secs_f64(),
        rt_missing,
        tools.verilator_version,
        tools.cxx_version,
        flags.join(" ")
    );
    write(&tmp.join("build-info.txt"), &info)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn x_literals_are_found_and_plain_designs_share_the_plain_build() {
        for v in [
            "y = 'x;",
            "y = 4'bx01z;",
            "y = 8'hX0;",
            "y = 'sb?;",
            "y = 'bz;",
        ] {
            assert!(has_x_literal(v), "{v}");
        }
        for v in [
            "y = 4'b0101;",
            "y = 8'hff; // the paper's table",
            "y = 'd9;",
            "y = x;",
        ] {
            assert!(!has_x_literal(v), "{v}");
        }
        let spec = |src: &str| BuildSpec {
            top: "t".into(),
            sources: vec![("t.v".into(), src.into())],
            ports: Vec::new(),
            trace: false,
            x_random: true,
        };
        assert!(!x_assign_unique(&spec("assign y = 1'b0;")));
        assert!(x_assign_unique(&spec("assign y = 1'bx;")));
    }

    #[test]
    fn stale_build_folders_of_dead_processes_are_reclaimed() {
        assert_eq!(stale_pid(".tmp-zvc_comp-fast-ab12-4242-1700-3"), Some(4242));
        assert_eq!(stale_pid(".tmp-runtime-77-1-0"), Some(77));
        assert_eq!(stale_pid("zvc-fast-ab12"), None);
        let d = tempfile::tempdir().unwrap();
        // A pid that cannot exist (above the kernel's pid_max of 2^22) and our own.
        let dead = d.path().join(".tmp-x-4194305-1-0");
        let live = d.path().join(format!(".tmp-x-{}", unique_suffix()));
        fs::create_dir_all(dead.join("obj")).unwrap();
        fs::create_dir_all(&live).unwrap();
        assert_eq!(reclaim_in(d.path()), 1);
        assert!(!dead.exists() && live.exists());
    }
}
