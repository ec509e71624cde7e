//! Progress display for long steps: one spinner line per running step (what it is doing and
//! for how long) on a terminal, plain lines when standard output or standard error is not a
//! terminal (CI logs, pipes): the start and the end of each step, and for a step that runs
//! longer than a minute a heartbeat once a minute (the step, its time so far and what it is
//! doing: a synthesis' CPU time against its budget, a co-simulation's lines), whether or not
//! the step reports anything. `HWZIP_HEARTBEAT_S` sets the interval in seconds.

use indicatif::{MultiProgress, ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::io::IsTerminal;
use std::sync::{Arc, Mutex, OnceLock, Weak};
use std::time::{Duration, Instant};

/// In plain mode, a running step prints a heartbeat this often (`HWZIP_HEARTBEAT_S`, else
/// 60 s).
fn heartbeat() -> Duration {
    static H: OnceLock<Duration> = OnceLock::new();
    *H.get_or_init(|| {
        let s = std::env::var("HWZIP_HEARTBEAT_S")
            .ok()
            .and_then(|v| v.parse::<u64>().ok())
            .filter(|&s| (1..=3600).contains(&s))
            .unwrap_or(60);
        Duration::from_secs(s)
    })
}

/// A running step in plain mode, as the heartbeat thread sees it.
struct Running {
    label: String,
    start: Instant,
    /// When the step last printed a line.
    last: Instant,
    /// What the step last said it was doing.
    msg: String,
    finished: bool,
}

impl Running {
    /// Prints the heartbeat line when one is due.
    fn beat(&mut self) {
        if !self.finished && self.last.elapsed() >= heartbeat() {
            self.last = Instant::now();
            let doing = if self.msg.is_empty() {
                "running".to_string()
            } else {
                self.msg.clone()
            };
            eprintln!(
                "   ...    {} ({:.0} s): {}",
                self.label,
                self.start.elapsed().as_secs_f64(),
                doing
            );
        }
    }
}

/// The running plain-mode steps, and the thread that prints their heartbeats (started with
/// the first such step).
fn watch(r: &Arc<Mutex<Running>>) {
    static STEPS: Mutex<Vec<Weak<Mutex<Running>>>> = Mutex::new(Vec::new());
    static THREAD: OnceLock<()> = OnceLock::new();
    let lock = || STEPS.lock().unwrap_or_else(|e| e.into_inner());
    lock().push(Arc::downgrade(r));
    THREAD.get_or_init(|| {
        let _ = std::thread::Builder::new()
            .name("hwzip-heartbeat".into())
            .spawn(move || loop {
                std::thread::sleep(Duration::from_secs(1).min(heartbeat()));
                let mut steps = lock();
                steps.retain(|w| match w.upgrade() {
                    Some(r) => {
                        let mut r = r.lock().unwrap_or_else(|e| e.into_inner());
                        r.beat();
                        !r.finished
                    }
                    None => false,
                });
            });
    });
}

/// How a [`Ui`] shows progress.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Mode {
    /// Spinners on a terminal.
    Live,
    /// Start and end lines on standard error.
    Plain,
    /// Nothing.
    Quiet,
}

/// The display of one run (shared by all its steps; cheap to clone).
#[derive(Clone)]
pub struct Ui {
    mp: MultiProgress,
    mode: Mode,
}

impl Default for Ui {
    fn default() -> Self {
        Ui::new()
    }
}

impl Ui {
    /// Live spinners when standard output and standard error are terminals, plain lines
    /// otherwise.
    pub fn new() -> Ui {
        let live = std::io::stdout().is_terminal() && std::io::stderr().is_terminal();
        Ui {
            mp: MultiProgress::with_draw_target(if live {
                ProgressDrawTarget::stderr_with_hz(5)
            } else {
                ProgressDrawTarget::hidden()
            }),
            mode: if live { Mode::Live } else { Mode::Plain },
        }
    }

    /// A display that prints nothing (library use, tests).
    pub fn quiet() -> Ui {
        Ui {
            mp: MultiProgress::with_draw_target(ProgressDrawTarget::hidden()),
            mode: Mode::Quiet,
        }
    }

    /// Prints a line above the spinners (or plainly to standard error).
    pub fn line(&self, msg: &str) {
        match self.mode {
            Mode::Live => {
                let _ = self.mp.println(msg);
            }
            Mode::Plain => eprintln!("{}", msg),
            Mode::Quiet => {}
        }
    }

    /// Starts a step called `label` (e.g. `synth adaptive tx on osu018`).
    pub fn step(&self, label: &str) -> Step {
        let pb = (self.mode == Mode::Live).then(|| {
            let pb = self.mp.add(ProgressBar::new_spinner());
            if let Ok(st) = ProgressStyle::with_template("{spinner} {elapsed:>4} {prefix} {msg}") {
                pb.set_style(st);
            }
            pb.set_prefix(label.to_string());
            pb.enable_steady_tick(Duration::from_millis(200));
            pb
        });
        let start = Instant::now();
        let plain = (self.mode == Mode::Plain).then(|| {
            eprintln!("   ...    {}", label);
            let r = Arc::new(Mutex::new(Running {
                label: label.to_string(),
                start,
                last: start,
                msg: String::new(),
                finished: false,
            }));
            watch(&r);
            r
        });
        Step {
            ui: self.clone(),
            reporter: Reporter {
                pb: pb.clone(),
                plain,
            },
            pb,
            label: label.to_string(),
            start,
            done: false,
        }
    }
}

/// A handle that tells a running step's progress line what the step is doing, from any
/// thread (e.g. a tool runner's poll loop).
#[derive(Clone)]
pub struct Reporter {
    pb: Option<ProgressBar>,
    /// Plain mode: the step as the heartbeat thread sees it.
    plain: Option<Arc<Mutex<Running>>>,
}

impl Reporter {
    /// What the step is doing now: beside its spinner on a terminal; in plain mode it is
    /// the text of the step's next heartbeat line.
    pub fn set(&self, msg: impl Into<String>) {
        if let Some(pb) = &self.pb {
            pb.set_message(msg.into());
        } else if let Some(r) = &self.plain {
            let mut r = r.lock().unwrap_or_else(|e| e.into_inner());
            r.msg = msg.into();
            r.beat();
        }
    }

    /// Marks the step finished: no more heartbeats.
    fn finish(&self) {
        if let Some(r) = &self.plain {
            r.lock().unwrap_or_else(|e| e.into_inner()).finished = true;
        }
    }
}

/// One running step of a [`Ui`]. Dropped without [`Step::done`] (an early return), its
/// spinner is removed.
pub struct Step {
    ui: Ui,
    reporter: Reporter,
    pb: Option<ProgressBar>,
    label: String,
    start: Instant,
    done: bool,
}

impl Drop for Step {
    fn drop(&mut self) {
        self.reporter.finish();
        if let (Some(pb), false) = (&self.pb, self.done) {
            pb.finish_and_clear();
        }
    }
}

impl Step {
    /// What the step is doing now (see [`Reporter::set`]).
    pub fn set(&self, msg: impl Into<String>) {
        self.reporter.set(msg);
    }

    /// A handle to [`Step::set`] from elsewhere.
    pub fn reporter(&self) -> Reporter {
        self.reporter.clone()
    }

    /// Seconds since the step started.
    pub fn elapsed(&self) -> f64 {
        self.start.elapsed().as_secs_f64()
    }

    /// Ends the step with a one-line summary (printed in both modes).
    pub fn done(mut self, summary: &str) {
        self.done = true;
        self.reporter.finish();
        if let Some(pb) = &self.pb {
            pb.finish_and_clear();
        }
        self.ui.line(&format!(
            "{:>6.1} s  {}: {}",
            self.start.elapsed().as_secs_f64(),
            self.label,
            summary
        ));
    }
}
