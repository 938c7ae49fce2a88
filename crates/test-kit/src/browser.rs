//! Headless Chromium for the browser tests (the chart in compare-results,
//! the PR comment in visualizer-comment): the command with the flags that
//! keep it off the machine's closed network, a run bounded by a deadline
//! so a hung browser cannot hang the suite, and the report a test page
//! writes into `<pre id="report">`.

use std::io::Read as _;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// Chromium headless, with no connection attempted at start (the network
/// is closed: without these flags it fails, many times over, to reach
/// Google's hosts).
pub const OFFLINE_FLAGS: &[&str] = &[
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--hide-scrollbars",
];

/// `browser` with [`OFFLINE_FLAGS`], a fresh `profile`, a window of
/// `width` × `height` px and `virtual_time_ms` of virtual time for the
/// page's scripts (mermaid, image loads) before a dump or a screenshot.
pub fn chromium_command(
    browser: &Path,
    profile: &Path,
    (width, height): (u32, u32),
    virtual_time_ms: u32,
) -> Command {
    let mut cmd = Command::new(browser);
    cmd.args(OFFLINE_FLAGS)
        .arg(format!("--virtual-time-budget={virtual_time_ms}"))
        .arg(format!("--user-data-dir={}", profile.display()))
        .arg(format!("--window-size={width},{height}"));
    cmd
}

/// Runs `cmd` to its end and returns its stdout; panics, naming `what`,
/// when it cannot start or is not done within `deadline` (it is killed).
/// Both pipes are read while it runs: a page's dump is larger than a
/// pipe's buffer, and a child blocked on a full pipe never exits.
pub fn run_with_deadline(mut cmd: Command, what: &str, deadline: Duration) -> String {
    let mut child = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("start {what}: {e}"));
    let mut stdout = child.stdout.take().expect("stdout");
    let mut stderr = child.stderr.take().expect("stderr");
    let out_reader = std::thread::spawn(move || {
        let mut v = Vec::new();
        let _ = stdout.read_to_end(&mut v);
        v
    });
    let err_reader = std::thread::spawn(move || {
        let mut v = Vec::new();
        let _ = stderr.read_to_end(&mut v);
        v
    });
    let started = Instant::now();
    let status = loop {
        match child.try_wait().expect("wait") {
            Some(status) => break status,
            None if started.elapsed() > deadline => {
                let _ = child.kill();
                panic!("{what} did not finish within {deadline:?}");
            }
            None => std::thread::sleep(Duration::from_millis(100)),
        }
    };
    let out = out_reader.join().unwrap_or_default();
    let err = err_reader.join().unwrap_or_default();
    assert!(
        status.success(),
        "{what} failed ({status}): {}",
        String::from_utf8_lossy(&err)
    );
    String::from_utf8_lossy(&out).into_owned()
}

/// The text a test page wrote into `<pre id="report">`, read from
/// Chromium's `--dump-dom`, its HTML entities decoded.
pub fn report_in_dom(dom: &str) -> String {
    const OPEN: &str = "<pre id=\"report\">";
    let start = dom.find(OPEN).unwrap_or_else(|| {
        panic!(
            "no report in the dumped page: {}",
            &dom[..dom.len().min(500)]
        )
    }) + OPEN.len();
    let end = dom[start..].find("</pre>").expect("report closed") + start;
    dom[start..end]
        .replace("&nbsp;", "\u{a0}")
        .replace("&quot;", "\"")
        .replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&amp;", "&")
}
