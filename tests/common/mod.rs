//! Helpers shared by the integration tests.

use hwzip::config::Config;

/// The smallest configuration of every engine that still builds each unit (quick Verilator
/// builds and synthesis), with MC queues of `queue_beats` beats (0: none).
#[allow(dead_code)]
pub fn small_config(queue_beats: u32) -> Config {
    Config::from_yaml(&format!(
        "zvc: {{word_bits: 8, lanes: 4, window: 8}}\n\
         base_xor: {{t_bytes: 16}}\n\
         adaptive: {{line_bytes: 32}}\n\
         cpack_lossy: {{codec: {{block_bytes: 32, t_table: [0, 8, 16, 16]}}, \
         md_cache: {{sets: 2, line_bytes: 16, mshrs: 2}}, \
         queues: {{req_beats: {queue_beats}, rsp_beats: {queue_beats}}}}}\n\
         buddy: {{bpc: {{entry_bytes: 32, dec_tokens: 2}}, \
         meta: {{size_bytes: 1024, mshrs: 2, mshr_slots: 2}}}}\n"
    ))
    .expect("the small configuration parses")
}

/// A process's standard output and standard error, as text.
#[allow(dead_code)]
pub fn output_text(o: &std::process::Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

/// Loads `html` in Debian's headless Chromium (installed by `scripts/setup.sh`), saves a
/// screenshot to `png`, and returns the `data-plots` attribute the page's own check writes
/// once loaded (`ok N` when all N charts rendered, `missing N`, or `error: …` after a script
/// error). Panics with a hint when Chromium is missing.
#[allow(dead_code)]
pub fn render_in_chromium(html: &std::path::Path, png: &std::path::Path) -> String {
    use std::process::Command;
    let url = format!(
        "file://{}",
        html.canonicalize().expect("report exists").display()
    );
    let profile = tempfile::tempdir().expect("temp dir");
    let args = |extra: &[String]| {
        let mut a: Vec<String> = [
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--window-size=1100,1600",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        a.push(format!("--user-data-dir={}", profile.path().display()));
        a.extend_from_slice(extra);
        a.push(url.clone());
        a
    };
    let run = |extra: &[String]| {
        Command::new("chromium")
            .args(args(extra))
            .output()
            .unwrap_or_else(|e| panic!("chromium does not run ({e}); run scripts/setup.sh"))
    };
    let shot = run(&[format!("--screenshot={}", png.display())]);
    assert!(
        shot.status.success(),
        "chromium --screenshot failed: {:?}",
        shot
    );
    assert!(png.is_file(), "no screenshot written");
    let dom = run(&["--dump-dom".to_string()]);
    assert!(
        dom.status.success(),
        "chromium --dump-dom failed: {:?}",
        dom
    );
    let text = String::from_utf8_lossy(&dom.stdout).to_string();
    let at = text
        .find("data-plots=\"")
        .expect("the page's body carries data-plots");
    let rest = &text[at + 12..];
    rest[..rest.find('"').unwrap_or(0)].to_string()
}

/// Whether `tool` runs (`tool --version`), for tests that skip without it.
#[allow(dead_code)]
pub fn have(tool: &str) -> bool {
    std::process::Command::new(tool)
        .arg("--version")
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .status()
        .is_ok()
}
