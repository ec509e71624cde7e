//! Progress display for long steps: one spinner line per running step (what it is doing and
//! for how long) on a terminal, plain lines when standard output or standard error is not a
//! terminal (CI logs, pipes): the start and the end of each step, and for a step that runs
//! longer than a minute, what it is doing once a minute.

use indicatif::{MultiProgress, ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::io::IsTerminal;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// In plain mode, a running step says what it is doing at most this often.
const HEARTBEAT: Duration = Duration::from_secs(60);

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
        if self.mode == Mode::Plain {
            eprintln!("   ...    {}", label);
        }
        let start = Instant::now();
        Step {
            ui: self.clone(),
            reporter: Reporter {
                pb: pb.clone(),
                plain: (self.mode == Mode::Plain).then(|| Arc::new(Mutex::new(start))),
                label: label.to_string(),
                start,
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
    /// Plain mode: when the step last printed a line.
    plain: Option<Arc<Mutex<Instant>>>,
    label: String,
    start: Instant,
}

impl Reporter {
    /// What the step is doing now: beside its spinner on a terminal; in plain mode a line
    /// once a minute after the step's first minute.
    pub fn set(&self, msg: impl Into<String>) {
        if let Some(pb) = &self.pb {
            pb.set_message(msg.into());
        } else if let Some(last) = &self.plain {
            let mut last = last.lock().unwrap_or_else(|e| e.into_inner());
            if last.elapsed() >= HEARTBEAT {
                *last = Instant::now();
                eprintln!(
                    "   ...    {} ({:.0} s): {}",
                    self.label,
                    self.start.elapsed().as_secs_f64(),
                    msg.into()
                );
            }
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
