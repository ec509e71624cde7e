//! Loaded shared object ([`Library`]) and the safe per-instance wrapper ([`Model`]).

use std::collections::HashMap;
use std::ffi::{c_char, c_int, c_void, CStr, CString};
use std::path::{Path, PathBuf};
use std::ptr::NonNull;
use std::sync::Arc;
use std::time::Duration;

use super::{BuildSpec, CosimError, PortDir, PortSpec};

/// File name of a built model in its cache entry.
pub(crate) const SO_NAME: &str = "libmodel.so";

/// Seconds recorded in a cache entry's `build-info.txt` (`total_s`), if any.
pub(crate) fn recorded_build_time(dir: &Path) -> Option<Duration> {
    let s = std::fs::read_to_string(dir.join("build-info.txt")).ok()?;
    let v = s.lines().find_map(|l| l.strip_prefix("total_s="))?;
    v.parse::<f64>().ok().map(Duration::from_secs_f64)
}

type FnNew = unsafe extern "C" fn(c_int, c_int) -> *mut c_void;
type FnH = unsafe extern "C" fn(*mut c_void);
type FnHInt = unsafe extern "C" fn(*mut c_void) -> c_int;
type FnHU64 = unsafe extern "C" fn(*mut c_void) -> u64;
type FnU32 = unsafe extern "C" fn() -> u32;
type FnInt = unsafe extern "C" fn() -> c_int;
type FnErr = unsafe extern "C" fn(*mut c_void) -> *const c_char;
type FnTick = unsafe extern "C" fn(*mut c_void, u64) -> c_int;
type FnTraceOpen = unsafe extern "C" fn(*mut c_void, *const c_char) -> c_int;
type FnTracePause = unsafe extern "C" fn(*mut c_void, c_int) -> c_int;
type FnSet = unsafe extern "C" fn(*mut c_void, u32, *const u32) -> c_int;
type FnGet = unsafe extern "C" fn(*mut c_void, u32, *mut u32) -> c_int;
type FnSetU64 = unsafe extern "C" fn(*mut c_void, u32, u64) -> c_int;
type FnGetU64 = unsafe extern "C" fn(*mut c_void, u32) -> u64;
type FnPortPtr = unsafe extern "C" fn(*mut c_void, u32) -> *mut c_void;

/// Resolved shim entry points (valid while the owning `libloading::Library` is loaded).
struct Api {
    new: FnNew,
    free: FnH,
    last_error: FnErr,
    finished: FnHInt,
    time: FnHU64,
    eval: FnHInt,
    settle: FnHInt,
    rise: FnHInt,
    tick: FnTick,
    trace_open: FnTraceOpen,
    trace_pause: FnTracePause,
    trace_close: FnHInt,
    port_ptr: FnPortPtr,
    // The index-based accessors of the C API; `Model` uses direct pointers instead, the tests
    // cross-check both.
    #[cfg_attr(not(test), allow(dead_code))]
    set: FnSet,
    #[cfg_attr(not(test), allow(dead_code))]
    get: FnGet,
    #[cfg_attr(not(test), allow(dead_code))]
    set_u64: FnSetU64,
    #[cfg_attr(not(test), allow(dead_code))]
    get_u64: FnGetU64,
}

/// How a port is stored in the Verilated model.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Storage {
    U8,
    U16,
    U32,
    U64,
    /// `n` 32-bit words.
    Words(usize),
}

/// Static per-port access info (shared by all models of a library).
#[derive(Clone, Copy, Debug)]
struct PortInfo {
    storage: Storage,
    input: bool,
    /// Value mask for ports ≤ 64 bits.
    mask: u64,
    /// Mask of the top word for wide ports.
    top_mask: u32,
}

impl PortInfo {
    fn new(p: &PortSpec) -> PortInfo {
        let storage = match p.width {
            0..=8 => Storage::U8,
            9..=16 => Storage::U16,
            17..=32 => Storage::U32,
            33..=64 => Storage::U64,
            _ => Storage::Words(p.words()),
        };
        PortInfo {
            storage,
            input: p.dir == PortDir::In,
            mask: if p.width >= 64 {
                u64::MAX
            } else {
                (1u64 << p.width) - 1
            },
            top_mask: if p.width.is_multiple_of(32) {
                u32::MAX
            } else {
                (1u32 << (p.width % 32)) - 1
            },
        }
    }
}

/// A built and loaded Verilated model (one `libmodel.so`). Create instances with
/// [`Model::new`]; share it between threads through the `Arc` that [`super::build`] returns.
pub struct Library {
    api: Api,
    ports: Vec<PortSpec>,
    info: Vec<PortInfo>,
    index: HashMap<String, PortId>,
    top: String,
    trace: bool,
    dir: PathBuf,
    cached: bool,
    load_time: Duration,
    // Keep last: the function pointers in `api` point into this object.
    _so: libloading::Library,
}

impl std::fmt::Debug for Library {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Library")
            .field("top", &self.top)
            .field("trace", &self.trace)
            .field("dir", &self.dir)
            .field("cached", &self.cached)
            .finish_non_exhaustive()
    }
}

macro_rules! sym {
    ($so:expr, $path:expr, $name:literal) => {{
        // SAFETY: the symbol is defined by our generated shim with exactly this signature.
        let s =
            unsafe { $so.get(concat!($name, "\0").as_bytes()) }.map_err(|e| CosimError::Load {
                path: $path.to_path_buf(),
                msg: format!("symbol {}: {e}", $name),
            })?;
        *s
    }};
}

impl Library {
    pub(crate) fn load(
        spec: &BuildSpec,
        dir: &Path,
        cached: bool,
        load_time: Duration,
    ) -> Result<Library, CosimError> {
        let path = dir.join(SO_NAME);
        // SAFETY: loading our own shared object; its static initialisers are Verilator's.
        let so = unsafe { libloading::Library::new(&path) }.map_err(|e| CosimError::Load {
            path: path.clone(),
            msg: e.to_string(),
        })?;
        let port_count: FnU32 = sym!(so, &path, "hz_port_count");
        let trace_supported: FnInt = sym!(so, &path, "hz_trace_supported");
        // SAFETY: plain getters without arguments.
        let (n, tr) = unsafe { (port_count(), trace_supported()) };
        if n as usize != spec.ports.len() || (tr != 0) != spec.trace {
            return Err(CosimError::Load {
                path,
                msg: format!("shim mismatch: {n} ports / trace {tr} in the library"),
            });
        }
        let api = Api {
            new: sym!(so, &path, "hz_new"),
            free: sym!(so, &path, "hz_free"),
            last_error: sym!(so, &path, "hz_last_error"),
            finished: sym!(so, &path, "hz_finished"),
            time: sym!(so, &path, "hz_time"),
            eval: sym!(so, &path, "hz_eval"),
            settle: sym!(so, &path, "hz_settle"),
            rise: sym!(so, &path, "hz_rise"),
            tick: sym!(so, &path, "hz_tick"),
            trace_open: sym!(so, &path, "hz_trace_open"),
            trace_pause: sym!(so, &path, "hz_trace_pause"),
            trace_close: sym!(so, &path, "hz_trace_close"),
            port_ptr: sym!(so, &path, "hz_port_ptr"),
            set: sym!(so, &path, "hz_set"),
            get: sym!(so, &path, "hz_get"),
            set_u64: sym!(so, &path, "hz_set_u64"),
            get_u64: sym!(so, &path, "hz_get_u64"),
        };
        let index = spec
            .ports
            .iter()
            .enumerate()
            .map(|(i, p)| (p.name.clone(), PortId(i as u32)))
            .collect();
        Ok(Library {
            api,
            ports: spec.ports.clone(),
            info: spec.ports.iter().map(PortInfo::new).collect(),
            index,
            top: spec.top.clone(),
            trace: spec.trace,
            dir: dir.to_path_buf(),
            cached,
            load_time,
            _so: so,
        })
    }

    /// Top module name.
    pub fn top(&self) -> &str {
        &self.top
    }

    /// Ports in index order (as in the [`BuildSpec`]).
    pub fn ports(&self) -> &[PortSpec] {
        &self.ports
    }

    /// Whether the library was built with `--trace`.
    pub fn trace_enabled(&self) -> bool {
        self.trace
    }

    /// Cache directory of this build (holds `libmodel.so`, logs, `build-info.txt`).
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// `true` when [`super::build`] found `libmodel.so` in the cache and compiled nothing.
    pub fn was_cached(&self) -> bool {
        self.cached
    }

    /// Wall time of the [`super::build`] call that produced this handle (hash, compile if
    /// needed, load).
    pub fn build_call_time(&self) -> Duration {
        self.load_time
    }

    /// Wall time of the original compilation, from `build-info.txt`.
    pub fn compile_time(&self) -> Option<Duration> {
        recorded_build_time(&self.dir)
    }
}

/// Index of a port in the [`BuildSpec::ports`] list. Only meaningful for models of the library
/// it was looked up in.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct PortId(u32);

impl PortId {
    /// Position in [`BuildSpec::ports`].
    pub fn index(self) -> usize {
        self.0 as usize
    }
}

/// One instance of a Verilated model with its own `VerilatedContext`.
///
/// `Send` (move it to a test thread) but not `Sync`: a model is driven from one thread at a time.
pub struct Model {
    lib: Arc<Library>,
    h: NonNull<c_void>,
    /// Storage address of every port (index = PortId), valid while `h` lives.
    ptrs: Vec<*mut u8>,
    clk: bool,
    rst: Option<PortId>,
    trace_open: bool,
}

// SAFETY: the C++ model is only reachable through `&mut self` / `&self` of this wrapper, which is
// not `Sync` (raw pointer field), and each model has its own VerilatedContext; the shim re-binds
// Verilator's thread-local context on every eval/tick, so moving it between threads is sound.
unsafe impl Send for Model {}

impl Model {
    /// Instantiate a fresh model (every variable 0, time 0).
    pub fn new(lib: &Arc<Library>) -> Result<Model, CosimError> {
        Model::instantiate(lib, 0, 0)
    }

    /// Instantiate a fresh model whose every variable (registers, memories, inputs) starts
    /// at a random value drawn from `seed`; in a library built with [`BuildSpec::x_random`],
    /// every X assignment of the design is a random value too. A design that is correct
    /// after reset gives the same outputs for every seed.
    pub fn new_random(lib: &Arc<Library>, seed: u32) -> Result<Model, CosimError> {
        // Verilator treats seed 0 as "pick one from the clock": keep runs reproducible.
        Model::instantiate(lib, 2, seed.max(1) as c_int)
    }

    fn instantiate(
        lib: &Arc<Library>,
        rand_reset: c_int,
        seed: c_int,
    ) -> Result<Model, CosimError> {
        // SAFETY: hz_new has no preconditions; returns null on failure.
        let h = unsafe { (lib.api.new)(rand_reset, seed) };
        let h =
            NonNull::new(h).ok_or_else(|| CosimError::Sim("model construction failed".into()))?;
        let ptrs = (0..lib.ports.len() as u32)
            // SAFETY: valid handle and index; the shim returns the member's address.
            .map(|i| unsafe { (lib.api.port_ptr)(h.as_ptr(), i) }.cast::<u8>())
            .collect::<Vec<_>>();
        if ptrs.iter().any(|p| p.is_null()) {
            // SAFETY: valid handle, freed once.
            unsafe { (lib.api.free)(h.as_ptr()) };
            return Err(CosimError::Sim(
                "shim returned no address for a port".into(),
            ));
        }
        Ok(Model {
            lib: lib.clone(),
            h,
            ptrs,
            clk: lib.index.contains_key("clk_i"),
            rst: lib.index.get("rst_ni").copied(),
            trace_open: false,
        })
    }

    /// The library this model was instantiated from.
    pub fn library(&self) -> &Arc<Library> {
        &self.lib
    }

    /// Look a port up by name (do it once, then use the [`PortId`]).
    pub fn port(&self, name: &str) -> Result<PortId, CosimError> {
        self.lib
            .index
            .get(name)
            .copied()
            .ok_or_else(|| CosimError::UnknownPort(name.to_string()))
    }

    /// Spec of a port.
    pub fn port_spec(&self, p: PortId) -> &PortSpec {
        &self.lib.ports[p.index()]
    }

    fn err_text(&self) -> String {
        // SAFETY: returns a NUL-terminated string owned by the model, valid until the next call.
        unsafe { CStr::from_ptr((self.lib.api.last_error)(self.h.as_ptr())) }
            .to_string_lossy()
            .into_owned()
    }

    fn check_words(&self, p: PortId, n: usize) -> Result<PortInfo, CosimError> {
        let spec = self
            .lib
            .ports
            .get(p.index())
            .ok_or_else(|| CosimError::UnknownPort(format!("#{}", p.0)))?;
        if n != spec.words() {
            return Err(CosimError::WidthMismatch {
                port: spec.name.clone(),
                width: spec.width,
                expected: spec.words(),
                got: n,
            });
        }
        Ok(self.lib.info[p.index()])
    }

    /// Drive an input port with `width.div_ceil(32)` words (word 0 = bits 31:0). Bits above the
    /// port width are ignored.
    pub fn set(&mut self, p: PortId, words: &[u32]) -> Result<(), CosimError> {
        let info = self.check_words(p, words.len())?;
        if !info.input {
            return Err(CosimError::NotAnInput(
                self.lib.ports[p.index()].name.clone(),
            ));
        }
        match info.storage {
            Storage::Words(n) => {
                let dst = self.ptrs[p.index()].cast::<u32>();
                // SAFETY: the port storage holds exactly `n` == words.len() aligned u32 words.
                unsafe {
                    std::ptr::copy_nonoverlapping(words.as_ptr(), dst, n);
                    *dst.add(n - 1) &= info.top_mask;
                }
            }
            _ => {
                let v = u64::from(words[0]) | words.get(1).map_or(0, |&w| u64::from(w) << 32);
                self.write_narrow(p.index(), info, v);
            }
        }
        Ok(())
    }

    /// Read any port into `width.div_ceil(32)` words.
    pub fn get(&self, p: PortId, words: &mut [u32]) -> Result<(), CosimError> {
        let info = self.check_words(p, words.len())?;
        match info.storage {
            Storage::Words(n) => {
                let src = self.ptrs[p.index()].cast::<u32>();
                // SAFETY: the port storage holds exactly `n` == words.len() aligned u32 words.
                unsafe { std::ptr::copy_nonoverlapping(src, words.as_mut_ptr(), n) };
                words[n - 1] &= info.top_mask;
            }
            _ => {
                let v = self.read_narrow(p.index(), info);
                words[0] = v as u32;
                if let Some(w) = words.get_mut(1) {
                    *w = (v >> 32) as u32;
                }
            }
        }
        Ok(())
    }

    /// Read any port into a fresh vector of words.
    pub fn get_vec(&self, p: PortId) -> Vec<u32> {
        let mut v = vec![0; self.port_spec(p).words()];
        self.get(p, &mut v)
            .expect("word count matches by construction");
        v
    }

    #[inline]
    fn write_narrow(&mut self, i: usize, info: PortInfo, v: u64) {
        let ptr = self.ptrs[i];
        let v = v & info.mask;
        // SAFETY: `ptr` is the address of this port's CData/SData/IData/QData member, which has
        // exactly the size and alignment matched here; the model is not running (we hold &mut).
        unsafe {
            match info.storage {
                Storage::U8 => *ptr = v as u8,
                Storage::U16 => *ptr.cast::<u16>() = v as u16,
                Storage::U32 => *ptr.cast::<u32>() = v as u32,
                Storage::U64 => *ptr.cast::<u64>() = v,
                Storage::Words(_) => unreachable!("checked by the caller"),
            }
        }
    }

    #[inline]
    fn read_narrow(&self, i: usize, info: PortInfo) -> u64 {
        let ptr = self.ptrs[i];
        // SAFETY: as in `write_narrow`.
        let v = unsafe {
            match info.storage {
                Storage::U8 => u64::from(*ptr),
                Storage::U16 => u64::from(*ptr.cast::<u16>()),
                Storage::U32 => u64::from(*ptr.cast::<u32>()),
                Storage::U64 => *ptr.cast::<u64>(),
                Storage::Words(_) => unreachable!("checked by the caller"),
            }
        };
        v & info.mask
    }

    /// Fast path: drive an input port of ≤ 64 bits (bits above the width are ignored). Writes
    /// the model's port storage directly (no FFI call).
    ///
    /// # Panics
    /// If the port is an output or wider than 64 bits.
    #[inline]
    pub fn set_u64(&mut self, p: PortId, v: u64) {
        let info = self.lib.info[p.index()];
        if !info.input || matches!(info.storage, Storage::Words(_)) {
            let spec = &self.lib.ports[p.index()];
            panic!("set_u64 on `{}` (needs an input of <= 64 bits)", spec.name);
        }
        self.write_narrow(p.index(), info, v);
    }

    /// Fast path: read a port of ≤ 64 bits (direct read, no FFI call).
    ///
    /// # Panics
    /// If the port is wider than 64 bits.
    #[inline]
    pub fn get_u64(&self, p: PortId) -> u64 {
        let info = self.lib.info[p.index()];
        if matches!(info.storage, Storage::Words(_)) {
            let spec = &self.lib.ports[p.index()];
            panic!("get_u64 on `{}` ({} bits)", spec.name, spec.width);
        }
        self.read_narrow(p.index(), info)
    }

    /// Test hook: the C API's index-based accessors (`hz_set`, `hz_get`, `hz_set_u64`,
    /// `hz_get_u64`), without checks.
    #[cfg(test)]
    pub(crate) fn ffi_set(&mut self, p: PortId, words: &[u32]) {
        assert_eq!(words.len(), self.port_spec(p).words());
        // SAFETY: valid handle; word count checked.
        unsafe { (self.lib.api.set)(self.h.as_ptr(), p.0, words.as_ptr()) };
    }

    #[cfg(test)]
    pub(crate) fn ffi_get(&self, p: PortId) -> Vec<u32> {
        let mut v = vec![0; self.port_spec(p).words()];
        // SAFETY: valid handle; buffer sized to the port.
        unsafe { (self.lib.api.get)(self.h.as_ptr(), p.0, v.as_mut_ptr()) };
        v
    }

    #[cfg(test)]
    pub(crate) fn ffi_set_u64(&mut self, p: PortId, v: u64) {
        // SAFETY: valid handle; unknown/wide indices are ignored by the shim.
        unsafe { (self.lib.api.set_u64)(self.h.as_ptr(), p.0, v) };
    }

    #[cfg(test)]
    pub(crate) fn ffi_get_u64(&self, p: PortId) -> u64 {
        // SAFETY: valid handle; unknown/wide indices return 0.
        unsafe { (self.lib.api.get_u64)(self.h.as_ptr(), p.0) }
    }

    /// Evaluate combinational logic without a clock edge.
    ///
    /// # Panics
    /// On a simulation fatal error (`$fatal`, Verilator internal error); see [`Model::try_eval`].
    pub fn eval(&mut self) {
        if let Err(e) = self.try_eval() {
            panic!("{e}");
        }
    }

    /// [`Model::eval`] returning simulation errors.
    pub fn try_eval(&mut self) -> Result<(), CosimError> {
        // SAFETY: valid handle.
        if unsafe { (self.lib.api.eval)(self.h.as_ptr()) } != 0 {
            return Err(CosimError::Sim(self.err_text()));
        }
        Ok(())
    }

    /// One clock cycle: `clk_i`=0, eval (inputs settle), `clk_i`=1, eval (rising edge). Outputs
    /// read afterwards are the post-edge values. Dumps two trace samples when tracing. Without
    /// `clk_i` (combinational module) this evaluates and advances time/cycle count.
    ///
    /// # Panics
    /// On a simulation fatal error; see [`Model::try_ticks`].
    #[inline]
    pub fn tick(&mut self) {
        // SAFETY: valid handle.
        if unsafe { (self.lib.api.tick)(self.h.as_ptr(), 1) } != 0 {
            panic!("simulation fatal error: {}", self.err_text());
        }
    }

    /// The low phase of a cycle: `clk_i`=0, eval (inputs settle; outputs readable). Then
    /// [`Model::rise`] completes the cycle with one eval fewer than [`Model::tick`]; inputs
    /// must not change in between.
    ///
    /// # Panics
    /// On a simulation fatal error.
    #[inline]
    pub fn settle(&mut self) {
        // SAFETY: valid handle.
        if unsafe { (self.lib.api.settle)(self.h.as_ptr()) } != 0 {
            panic!("simulation fatal error: {}", self.err_text());
        }
    }

    /// The rest of a cycle after [`Model::settle`]: `clk_i`=1, eval (rising edge), the same
    /// trace samples and cycle count as [`Model::tick`].
    ///
    /// # Panics
    /// On a simulation fatal error.
    #[inline]
    pub fn rise(&mut self) {
        // SAFETY: valid handle.
        if unsafe { (self.lib.api.rise)(self.h.as_ptr()) } != 0 {
            panic!("simulation fatal error: {}", self.err_text());
        }
    }

    /// `n` clock cycles in one FFI call, returning simulation errors.
    pub fn try_ticks(&mut self, n: u64) -> Result<(), CosimError> {
        // SAFETY: valid handle.
        if unsafe { (self.lib.api.tick)(self.h.as_ptr(), n) } != 0 {
            return Err(CosimError::Sim(self.err_text()));
        }
        Ok(())
    }

    /// Synchronous reset: `rst_ni`=0 for `cycles` cycles, then `rst_ni`=1 (settled with an eval).
    pub fn reset(&mut self, cycles: u64) -> Result<(), CosimError> {
        let r = self
            .rst
            .ok_or_else(|| CosimError::UnknownPort("rst_ni".into()))?;
        if !self.clk {
            return Err(CosimError::UnknownPort("clk_i".into()));
        }
        self.set_u64(r, 0);
        self.try_ticks(cycles)?;
        self.set_u64(r, 1);
        self.try_eval()
    }

    /// Clock cycles run so far (including reset cycles).
    pub fn cycle(&self) -> u64 {
        // SAFETY: valid handle.
        unsafe { (self.lib.api.time)(self.h.as_ptr()) / 10 }
    }

    /// Simulation time in trace units (10 per cycle; the rising edge is at `10*c + 5`).
    pub fn time(&self) -> u64 {
        // SAFETY: valid handle.
        unsafe { (self.lib.api.time)(self.h.as_ptr()) }
    }

    /// `$finish` was executed (or a fatal error occurred).
    pub fn finished(&self) -> bool {
        // SAFETY: valid handle.
        unsafe { (self.lib.api.finished)(self.h.as_ptr()) != 0 }
    }

    /// Start dumping a VCD to `path` (replaces an open one). Needs a `trace: true` build.
    pub fn trace_open(&mut self, path: impl AsRef<Path>) -> Result<(), CosimError> {
        if !self.lib.trace {
            return Err(CosimError::Trace(
                "model was built without `trace: true`".into(),
            ));
        }
        let path = path.as_ref();
        let c = CString::new(path.to_string_lossy().as_bytes())
            .map_err(|_| CosimError::Trace(format!("bad path {}", path.display())))?;
        // SAFETY: valid handle and NUL-terminated path.
        if unsafe { (self.lib.api.trace_open)(self.h.as_ptr(), c.as_ptr()) } != 0 {
            return Err(CosimError::Trace(self.err_text()));
        }
        self.trace_open = true;
        Ok(())
    }

    /// Pause (`false`) or resume (`true`) dumping without closing the VCD. Values that changed
    /// while paused appear at the first sample after resuming.
    pub fn set_tracing(&mut self, on: bool) -> Result<(), CosimError> {
        if !self.trace_open {
            return Err(CosimError::Trace("no trace open".into()));
        }
        // SAFETY: valid handle.
        unsafe { (self.lib.api.trace_pause)(self.h.as_ptr(), c_int::from(on)) };
        Ok(())
    }

    /// Flush and close the VCD.
    pub fn trace_close(&mut self) -> Result<(), CosimError> {
        if !self.trace_open {
            return Err(CosimError::Trace("no trace open".into()));
        }
        // SAFETY: valid handle.
        unsafe { (self.lib.api.trace_close)(self.h.as_ptr()) };
        self.trace_open = false;
        Ok(())
    }
}

impl Drop for Model {
    fn drop(&mut self) {
        // SAFETY: valid handle, freed exactly once; `lib` (the .so) outlives this call.
        unsafe { (self.lib.api.free)(self.h.as_ptr()) };
    }
}

impl std::fmt::Debug for Model {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Model")
            .field("top", &self.lib.top)
            .field("cycle", &self.cycle())
            .finish()
    }
}
