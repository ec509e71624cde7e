//! `report.html` in a real browser: Debian's headless Chromium loads the pages that `hwzip
//! eval` and `hwzip sweep --merge` write, the page's own check must report every chart
//! rendered (no script error, each `<svg>` with a box and text), and the screenshots are kept
//! in `target/report-screenshots/` for a person to look at. The flow's page is rendered by the
//! main-job test (`tests/main_job/flow.rs`).

use std::path::PathBuf;
use std::process::Command;

fn shots() -> PathBuf {
    let d = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("report-screenshots");
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn hwzip(args: &[&str]) {
    let out = Command::new(env!("CARGO_BIN_EXE_hwzip"))
        .args(args)
        .output()
        .expect("hwzip runs");
    assert!(
        out.status.success(),
        "hwzip {:?}: {}",
        args,
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn eval_pages_render_every_chart() {
    let dir = tempfile::tempdir().unwrap();
    for (engine, extra) in [
        ("base-xor", ["--class", "all", "--lines", "300"]),
        ("adaptive", ["--class", "all", "--lines", "300"]),
        ("buddy", ["--class", "relu-50", "--lines", "300"]),
    ] {
        let out = dir.path().join(engine);
        let o = out.to_str().unwrap();
        let mut args = vec!["eval", "--engine", engine, "--out", o];
        args.extend_from_slice(&extra);
        hwzip(&args);
        let html = out.join("report.html");
        let text = std::fs::read_to_string(&html).unwrap();
        assert!(!text.contains("src=\"http"), "no external resources");
        let png = shots().join(format!("eval-{}.png", engine));
        let state = crate::common::render_in_chromium(&html, &png);
        let n: usize = text.matches("<figure class=\"plot\"").count();
        assert!(n > 0, "{}: no charts", engine);
        assert_eq!(state, format!("ok {}", n), "{}", engine);
    }
}

#[test]
fn a_broken_chart_is_reported_by_the_page_check() {
    // The check must be able to fail: a chart whose SVG lost its text and a script error.
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("bx");
    hwzip(&[
        "eval",
        "--engine",
        "base-xor",
        "--class",
        "random",
        "--lines",
        "50",
        "--out",
        out.to_str().unwrap(),
    ]);
    let html = out.join("report.html");
    let text = std::fs::read_to_string(&html).unwrap();
    let at = text.find("<figure class=\"plot\"").unwrap();
    let end = text[at..].find("</figure>").unwrap() + at;
    let broken = format!(
        "{}<figure class=\"plot\"><svg></svg></figure>{}",
        &text[..end],
        &text[end..]
    );
    let b = dir.path().join("broken.html");
    std::fs::write(&b, broken).unwrap();
    let state = crate::common::render_in_chromium(&b, &dir.path().join("b.png"));
    assert!(state.starts_with("missing"), "{}", state);
    // A bar chart that draws one bar fewer than its data has (its first bar removed).
    let chk = text
        .find("data-check=")
        .expect("a bar chart with its check");
    let rect = text[chk..].find("<rect").unwrap() + chk;
    // The first rect is the background, then come the bars and swatches: drop one in a
    // series colour.
    let colors_at = text[chk..].find("&quot;colors&quot;:[&quot;").unwrap() + chk + 26;
    let colour = &text[colors_at..colors_at + 7];
    let bar = text[rect..]
        .find(&format!("fill=\"{}\"", colour))
        .map(|i| i + rect)
        .expect("a bar in the first series' colour");
    let start = text[..bar].rfind("<rect").unwrap();
    let end = text[bar..].find("/>").unwrap() + bar + 2;
    let dropped = format!("{}{}", &text[..start], &text[end..]);
    let d = dir.path().join("dropped.html");
    std::fs::write(&d, dropped).unwrap();
    let state = crate::common::render_in_chromium(&d, &dir.path().join("d.png"));
    assert!(state.starts_with("series: "), "{}", state);
    let e = dir.path().join("error.html");
    std::fs::write(&e, text.replace("<h1>", "<script>nope();</script><h1>")).unwrap();
    let state = crate::common::render_in_chromium(&e, &dir.path().join("e.png"));
    assert!(state.starts_with("error"), "{}", state);
}
