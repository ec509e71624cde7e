//! SIGTERM and SIGINT at random points of `hwzip synth` and `hwzip flow`: hwzip exits with
//! 128 + the signal, and no process it started (Yosys, OpenSTA, Verilator, g++ and their
//! children) is left, nor a temporary file or build folder of it.
//!
//! Each run gets a unique `HWZIP_SIGNAL_TOKEN` in its environment; every descendant inherits
//! it, so survivors are found by scanning `/proc/*/environ` after hwzip has exited. The kill
//! points are drawn from `HWZIP_SIGNAL_SEED` (default 1) and printed.

use rand::{Rng, SeedableRng};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

fn tools_present() -> bool {
    ["yosys", "sta", "verilator"].iter().all(|t| {
        Command::new(t)
            .arg("-V")
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .is_ok()
    })
}

/// Command lines of live processes carrying `token` in their environment.
fn survivors(token: &str) -> Vec<String> {
    let needle = format!("HWZIP_SIGNAL_TOKEN={token}");
    let mut v = Vec::new();
    for e in std::fs::read_dir("/proc").into_iter().flatten().flatten() {
        let p = e.path();
        let Ok(env) = std::fs::read(p.join("environ")) else {
            continue;
        };
        if env.split(|&b| b == 0).any(|kv| kv == needle.as_bytes()) {
            let state = std::fs::read_to_string(p.join("stat")).unwrap_or_default();
            // A zombie has exited; only its parent's wait is missing.
            if state.split_whitespace().nth(2) == Some("Z") {
                continue;
            }
            // A process with SIGKILL pending is already dead to user space; under load the
            // kernel may list it for a while (CI at bcd3592: a cc1plus after a group kill).
            if sigkill_pending(&p) {
                continue;
            }
            let cmd = std::fs::read(p.join("cmdline")).unwrap_or_default();
            v.push(String::from_utf8_lossy(&cmd).replace('\0', " "));
        }
    }
    v
}

/// Whether SIGKILL (signal 9, mask bit 8) is pending for the process at `proc_dir`.
fn sigkill_pending(proc_dir: &Path) -> bool {
    let status = std::fs::read_to_string(proc_dir.join("status")).unwrap_or_default();
    status.lines().any(|l| {
        (l.starts_with("SigPnd:") || l.starts_with("ShdPnd:"))
            && l.split_whitespace()
                .nth(1)
                .and_then(|h| u64::from_str_radix(h, 16).ok())
                .is_some_and(|m| m & (1 << 8) != 0)
    })
}

/// Temporaries hwzip writes: `.<name>.hwzip-tmp-<pid>-<n>` files and `.tmp-*-<pid>-*` folders.
fn leftovers(dir: &Path, pid: u32) -> Vec<String> {
    let mut v = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).into_iter().flatten().flatten() {
            let name = e.file_name().to_string_lossy().to_string();
            if name.contains(&format!("hwzip-tmp-{pid}")) || name.contains(&format!("-{pid}-")) {
                v.push(e.path().display().to_string());
            }
            if e.path().is_dir() {
                stack.push(e.path());
            }
        }
    }
    v
}

struct Outcome {
    code: Option<i32>,
    finished_first: bool,
    /// How long hwzip ran before it exited on its own (meaningful when `finished_first`).
    took: Duration,
}

/// Runs a short co-simulation on the same cache (the Verilator model is then cached) and
/// checks that it reclaims the build folders of the killed run `pid`.
fn next_run_reclaims(work: &Path, pid: u32, left: &[String]) {
    let st = Command::new(env!("CARGO_BIN_EXE_hwzip"))
        .args([
            "cosim",
            "--engine",
            "zvc",
            "--unit",
            "compressor",
            "--lines",
            "10",
        ])
        .env("HWZIP_CACHE_DIR", work.join("cache"))
        .env("HWZIP_CXX_OPT", "0") // quicker model builds; the level does not matter here
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .expect("hwzip starts");
    assert!(st.success(), "the next cosim run failed: {st:?}");
    let after = leftovers(work, pid);
    assert!(
        after.is_empty(),
        "the next run did not reclaim {after:?} (left by a second signal: {left:?})"
    );
    eprintln!(
        "a second signal left {} temporaries; the next run reclaimed them",
        left.len()
    );
}

/// Sends `signals` to hwzip `args` after `delay`. After one signal nothing may be left;
/// after a second one (which exits without cleaning up) temporaries may be left, and the
/// next run must reclaim them.
fn run_and_signal(args: &[&str], work: &Path, delay: Duration, signals: &[i32]) -> Outcome {
    let token = format!("{}-{}", std::process::id(), rand::random::<u64>());
    let mut child = Command::new(env!("CARGO_BIN_EXE_hwzip"))
        .args(args)
        .env("HWZIP_SIGNAL_TOKEN", &token)
        .env("HWZIP_CACHE_DIR", work.join("cache"))
        .env("HWZIP_CXX_OPT", "0")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("hwzip starts");
    let pid = child.id();
    let t0 = Instant::now();
    while t0.elapsed() < delay {
        if child.try_wait().expect("poll").is_some() {
            break;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let finished_first = child.try_wait().expect("poll").is_some();
    let took = t0.elapsed();
    if !finished_first {
        for &s in signals {
            // SAFETY: kill(2) on our own child.
            unsafe {
                libc::kill(pid as i32, s);
            }
            std::thread::sleep(Duration::from_millis(5));
        }
    }
    let t1 = Instant::now();
    let status = loop {
        if let Some(s) = child.try_wait().expect("poll") {
            break s;
        }
        assert!(
            t1.elapsed() < Duration::from_secs(10),
            "hwzip {args:?} did not exit within 10 s of the signal"
        );
        std::thread::sleep(Duration::from_millis(10));
    };
    let stopped = t1.elapsed();
    // SIGKILLed groups vanish at once; allow the kernel up to 5 s to reap them under load.
    let mut left = survivors(&token);
    for _ in 0..250 {
        if left.is_empty() {
            break;
        }
        std::thread::sleep(Duration::from_millis(20));
        left = survivors(&token);
    }
    assert!(left.is_empty(), "processes left after {args:?}: {left:?}");
    let files = leftovers(work, pid);
    if signals.len() > 1 && !files.is_empty() {
        next_run_reclaims(work, pid, &files);
    } else {
        assert!(
            files.is_empty(),
            "temporaries left after {args:?}: {files:?}"
        );
    }
    use std::os::unix::process::ExitStatusExt;
    let code = status.code().or(status.signal().map(|s| 128 + s));
    eprintln!(
        "{:?} signal {:?} after {:.2} s: exit {:?}, stopped in {} ms{}",
        args,
        signals,
        delay.as_secs_f64(),
        code,
        stopped.as_millis(),
        if finished_first {
            " (finished first)"
        } else {
            ""
        }
    );
    Outcome {
        code,
        finished_first,
        took,
    }
}

#[test]
fn no_process_or_temporary_survives_a_signal() {
    if !tools_present() {
        eprintln!("yosys/sta/verilator not installed; skipping (run scripts/setup.sh)");
        return;
    }
    let seed: u64 = std::env::var("HWZIP_SIGNAL_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(1);
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
    eprintln!("kill points from HWZIP_SIGNAL_SEED={seed}");
    let d = tempfile::tempdir().unwrap();
    let w = d.path();
    let (term, int) = (libc::SIGTERM, libc::SIGINT);
    let mut killed = 0;
    // synth: Yosys and OpenSTA running (about a minute for all ZVC units).
    for i in 0..2 {
        let args = |o: &str| -> Vec<String> {
            ["synth", "--engine", "zvc", "--no-cache", "--out", o]
                .map(String::from)
                .to_vec()
        };
        let r = signal_while_running(&args, w, &format!("synth{i}"), &mut rng, 15.0, &[term]);
        assert!(
            r.finished_first || r.code == Some(128 + term),
            "exit {:?}",
            r.code
        );
        killed += usize::from(!r.finished_first);
    }
    // flow: Verilator and g++ on a cold model cache, then co-simulation and synthesis.
    for (i, sigs) in [vec![term], vec![term], vec![int, int]].iter().enumerate() {
        let args = |o: &str| -> Vec<String> {
            let a = [
                "flow",
                "--engine",
                "zvc",
                "--lines",
                "200",
                "--no-cache",
                "--out",
                o,
            ];
            a.map(String::from).to_vec()
        };
        let r = signal_while_running(&args, w, &format!("flow{i}"), &mut rng, 12.0, sigs);
        let want = 128 + sigs[0];
        assert!(
            r.finished_first || r.code == Some(want),
            "exit {:?}",
            r.code
        );
        killed += usize::from(!r.finished_first);
    }
    assert!(
        killed >= 3,
        "only {killed} of 5 runs were still running at their kill point"
    );
}

/// Runs `args(out)` and signals it at a point drawn from 0.3 s up to `max_s`. A run that
/// finishes before its kill point has shown how long it takes where the test runs (warm model
/// caches make later runs quicker), so it is repeated with a point drawn from the first
/// 10-80% of that time, up to three more times.
fn signal_while_running(
    args: &dyn Fn(&str) -> Vec<String>,
    w: &Path,
    name: &str,
    rng: &mut rand_chacha::ChaCha8Rng,
    max_s: f64,
    sigs: &[i32],
) -> Outcome {
    let mut delay = Duration::from_secs_f64(rng.gen_range(0.3..max_s));
    let mut attempt = 0;
    loop {
        let o = w
            .join(format!("{name}-{attempt}"))
            .to_string_lossy()
            .to_string();
        let a = args(&o);
        let a: Vec<&str> = a.iter().map(String::as_str).collect();
        let r = run_and_signal(&a, w, delay, sigs);
        if !r.finished_first || attempt == 3 {
            return r;
        }
        let took = r.took.as_secs_f64().max(0.05);
        delay = Duration::from_secs_f64(rng.gen_range(0.1 * took..0.8 * took));
        attempt += 1;
    }
}

/// What a second signal leaves (build folders of a dead hwzip) goes on the next run's first
/// model lookup, even when its model is cached.
#[test]
fn a_later_run_reclaims_build_folders_of_a_dead_process() {
    if !tools_present() {
        eprintln!("yosys/sta/verilator not installed; skipping (run scripts/setup.sh)");
        return;
    }
    let d = tempfile::tempdir().unwrap();
    let mut dead = Command::new("true").spawn().unwrap();
    let pid = dead.id();
    dead.wait().unwrap();
    let stale = d
        .path()
        .join("cache")
        .join("verilator")
        .join(format!(".tmp-runtime-{pid}-1-1"));
    std::fs::create_dir_all(stale.join("obj")).unwrap();
    std::fs::write(stale.join("obj/x.o"), b"partial").unwrap();
    // Twice: the first run builds (or finds) the model, the second finds it cached.
    for _ in 0..2 {
        std::fs::create_dir_all(&stale).unwrap();
        next_run_reclaims(d.path(), pid, &[stale.display().to_string()]);
        assert!(!stale.exists());
    }
}
