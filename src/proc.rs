//! Child processes, temporary files and signals.
//!
//! Every tool hwzip runs (Verilator, the C++ compiler, Yosys, OpenSTA, version probes) is
//! started through [`spawn`], [`status`] or [`output`]: in a process group of its own (so a
//! group kill reaches `g++`'s `cc1plus` and Yosys' `yosys-abc`), registered while it runs, and
//! with `PR_SET_PDEATHSIG` so it dies if hwzip is killed outright. Temporary files and build
//! folders are created through [`create_temp_file`] and [`create_temp_dir`] and registered
//! until they are renamed into place or removed.
//!
//! [`install_signal_handlers`] (called by `main`) makes SIGINT, SIGTERM and SIGHUP stop
//! hwzip cleanly: every registered process group gets SIGKILL, every registered temporary is
//! removed, and hwzip exits with 128 + the signal number. Registration and cleanup share a
//! lock, and nothing new is started once a signal arrived, so no child or temporary escapes.
//! A second signal during that cleanup terminates hwzip at once.

use std::io;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Output};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

static GROUPS: Mutex<Vec<u32>> = Mutex::new(Vec::new());
static TEMPS: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());
static STOPPING: AtomicBool = AtomicBool::new(false);

fn lock<T>(m: &'static Mutex<T>) -> MutexGuard<'static, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

fn stopping() -> io::Error {
    io::Error::new(io::ErrorKind::Interrupted, "hwzip is stopping on a signal")
}

/// Unregisters a process group when dropped.
struct Registration(u32);

impl Drop for Registration {
    fn drop(&mut self) {
        lock(&GROUPS).retain(|&g| g != self.0);
    }
}

/// A running child in its own process group. Dropping it while the child runs kills the
/// group (an early return never leaves a tool behind); either way it is unregistered.
pub struct Supervised {
    child: Child,
    reg: Registration,
}

impl Supervised {
    /// The child (to poll, wait on or read from).
    pub fn child(&mut self) -> &mut Child {
        &mut self.child
    }

    /// Kills the child's whole process group, then reaps the child.
    pub fn kill_group(&mut self) {
        kill_group(self.reg.0);
        let _ = self.child.kill();
        let _ = self.child.wait();
    }

    /// Waits for the child.
    pub fn wait(mut self) -> io::Result<ExitStatus> {
        self.child.wait()
    }
}

impl Drop for Supervised {
    fn drop(&mut self) {
        if matches!(self.child.try_wait(), Ok(None)) {
            self.kill_group();
        }
    }
}

fn kill_group(pgid: u32) {
    if let Ok(p) = i32::try_from(pgid) {
        // SAFETY: kill(2) with a negative pid signals a process group; no memory is shared.
        unsafe {
            libc::kill(-p, libc::SIGKILL);
        }
    }
}

/// Starts `cmd` in a new process group, registered for the signal handler.
pub fn spawn(cmd: &mut Command) -> io::Result<Supervised> {
    cmd.process_group(0);
    // SAFETY: prctl(2) is async-signal-safe; it only sets the parent-death signal.
    unsafe {
        cmd.pre_exec(|| {
            libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL);
            Ok(())
        });
    }
    let mut groups = lock(&GROUPS);
    if STOPPING.load(Ordering::SeqCst) {
        return Err(stopping());
    }
    let child = cmd.spawn()?;
    groups.push(child.id());
    Ok(Supervised {
        reg: Registration(child.id()),
        child,
    })
}

/// [`spawn`], then wait: the child's exit status.
pub fn status(cmd: &mut Command) -> io::Result<ExitStatus> {
    spawn(cmd)?.wait()
}

/// [`spawn`] with stdout and stderr captured, then wait.
pub fn output(cmd: &mut Command) -> io::Result<Output> {
    cmd.stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped());
    let mut s = spawn(cmd)?;
    // Read both pipes while the child runs (as `Child::wait_with_output` does), keeping the
    // registration until it has exited.
    let mut stdout = s.child.stdout.take();
    let mut stderr = s.child.stderr.take();
    let err_reader = std::thread::spawn(move || {
        let mut v = Vec::new();
        if let Some(e) = stderr.as_mut() {
            let _ = std::io::Read::read_to_end(e, &mut v);
        }
        v
    });
    let mut out = Vec::new();
    if let Some(o) = stdout.as_mut() {
        std::io::Read::read_to_end(o, &mut out)?;
    }
    let err = err_reader.join().unwrap_or_default();
    let status = s.child.wait()?;
    Ok(Output {
        status,
        stdout: out,
        stderr: err,
    })
}

/// A registered temporary path; unregistered (not removed) on drop.
pub struct Temp {
    path: PathBuf,
}

impl Temp {
    /// The temporary path.
    pub fn path(&self) -> &Path {
        &self.path
    }
}

impl Drop for Temp {
    fn drop(&mut self) {
        let mut t = lock(&TEMPS);
        if let Some(i) = t.iter().position(|p| *p == self.path) {
            t.swap_remove(i);
        }
    }
}

fn create_temp(path: &Path, make: impl FnOnce(&Path) -> io::Result<()>) -> io::Result<Temp> {
    let mut temps = lock(&TEMPS);
    if STOPPING.load(Ordering::SeqCst) {
        return Err(stopping());
    }
    make(path)?;
    temps.push(path.to_path_buf());
    Ok(Temp {
        path: path.to_path_buf(),
    })
}

/// Creates (truncates) a temporary file, registered for removal on a signal.
pub fn create_temp_file(path: &Path) -> io::Result<(std::fs::File, Temp)> {
    let mut file = None;
    let t = create_temp(path, |p| {
        file = Some(std::fs::File::create(p)?);
        Ok(())
    })?;
    Ok((file.ok_or_else(stopping)?, t))
}

/// Creates a temporary folder (and its parents), registered for removal on a signal.
pub fn create_temp_dir(path: &Path) -> io::Result<Temp> {
    create_temp(path, |p| std::fs::create_dir_all(p))
}

/// Runs `f` (a rename that settles a temporary) unless hwzip is stopping on a signal, in which
/// case it waits for the exit: the signal handler holds the same lock from the moment it
/// starts removing temporaries, so a settled temporary never escapes that cleanup.
pub fn unless_stopping<R>(f: impl FnOnce() -> R) -> R {
    let _temps = lock(&TEMPS);
    f()
}

/// Whether process `pid` exists (a stale temporary of a dead process can be reclaimed).
pub fn pid_alive(pid: u32) -> bool {
    let Ok(p) = i32::try_from(pid) else {
        return false;
    };
    // SAFETY: signal 0 only checks for existence and permission.
    let r = unsafe { libc::kill(p, 0) };
    r == 0 || io::Error::last_os_error().raw_os_error() == Some(libc::EPERM)
}

/// Kills every registered group and removes every registered temporary; afterwards nothing
/// new can be started. Returns the numbers of groups and temporaries.
pub fn stop_everything() -> (usize, usize) {
    let groups = lock(&GROUPS);
    let temps = lock(&TEMPS);
    STOPPING.store(true, Ordering::SeqCst);
    for &g in groups.iter() {
        kill_group(g);
    }
    for t in temps.iter() {
        if t.is_dir() {
            let _ = std::fs::remove_dir_all(t);
        } else {
            let _ = std::fs::remove_file(t);
        }
    }
    let n = (groups.len(), temps.len());
    // Both locks stay held until the process exits: the caller exits next.
    std::mem::forget(groups);
    std::mem::forget(temps);
    n
}

/// Installs the SIGINT/SIGTERM/SIGHUP handling described in the module docs.
pub fn install_signal_handlers() -> io::Result<()> {
    use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM};
    let second = Arc::new(AtomicBool::new(false));
    for sig in [SIGINT, SIGTERM, SIGHUP] {
        // Order matters: the first checks the flag the second sets.
        signal_hook::flag::register_conditional_default(sig, Arc::clone(&second))?;
        signal_hook::flag::register(sig, Arc::clone(&second))?;
    }
    let mut signals = signal_hook::iterator::Signals::new([SIGINT, SIGTERM, SIGHUP])?;
    std::thread::Builder::new()
        .name("hwzip-signals".into())
        .spawn(move || {
            if let Some(sig) = signals.forever().next() {
                let (g, t) = stop_everything();
                let name = match sig {
                    SIGINT => "SIGINT",
                    SIGTERM => "SIGTERM",
                    _ => "SIGHUP",
                };
                eprintln!(
                    "\nhwzip: stopped by {name}: killed {g} child process group(s), \
                     removed {t} temporary file(s)"
                );
                // SAFETY: _exit ends the process without running destructors or atexit
                // handlers, which may be in use by the threads still running.
                unsafe { libc::_exit(128 + sig) }
            }
        })?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Processes of group `pgid` that have not exited (zombies wait only for a reaper).
    fn live_members(pgid: u32) -> usize {
        let mut n = 0;
        for e in std::fs::read_dir("/proc").unwrap().flatten() {
            let stat = std::fs::read_to_string(e.path().join("stat")).unwrap_or_default();
            // pid (comm) state ppid pgrp ...: split after the last ')'.
            let Some(rest) = stat.rsplit_once(')').map(|(_, r)| r) else {
                continue;
            };
            let f: Vec<&str> = rest.split_whitespace().collect();
            if f.len() > 2 && f[2] == pgid.to_string() && f[0] != "Z" {
                n += 1;
            }
        }
        n
    }

    #[test]
    fn children_are_registered_and_group_killed() {
        let mut s = spawn(Command::new("sh").args(["-c", "sleep 30 & sleep 30"])).unwrap();
        let pgid = s.reg.0;
        assert!(lock(&GROUPS).contains(&pgid));
        std::thread::sleep(std::time::Duration::from_millis(100));
        s.kill_group();
        drop(s);
        assert!(!lock(&GROUPS).contains(&pgid));
        // SIGKILL is delivered asynchronously: on a loaded machine a member can still be
        // listed for a moment (CI saw it once). Allow 2 s.
        let mut left = live_members(pgid);
        for _ in 0..100 {
            if left == 0 {
                break;
            }
            std::thread::sleep(std::time::Duration::from_millis(20));
            left = live_members(pgid);
        }
        assert_eq!(left, 0, "a process of the group survived");
        let out = output(Command::new("sh").args(["-c", "echo hi; echo err >&2"])).unwrap();
        assert_eq!(
            (&out.stdout[..], &out.stderr[..]),
            (&b"hi\n"[..], &b"err\n"[..])
        );
        assert!(pid_alive(std::process::id()));
    }

    #[test]
    fn temporaries_are_registered_until_dropped() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("t");
        let t = create_temp_dir(&p).unwrap();
        assert!(p.is_dir() && lock(&TEMPS).contains(&p));
        drop(t);
        assert!(!lock(&TEMPS).contains(&p));
    }
}
