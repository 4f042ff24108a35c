//! The test programs' own presentation feedback (`--feedback-out` of
//! `steadyhud-testapp --wayland` and `steadyhud-gltest --wayland`; the
//! format is in test-programs/testapp/src/wayland.rs): the file's reader, and the
//! programs' options in each case of issue 42 (tests/wayland_programs.rs
//! checks the file on its own, tests/display_wayland.rs holds steadyhud's
//! log to it).

use super::wayland::WaylandBed;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

/// The header `--feedback-out` writes.
pub const HEADER: &str =
    "present,present_ns,feedback,displayed_ns,raw_ns,refresh_ns,msc,flags,clock_id";

/// One row of a feedback file.
#[derive(Debug, Clone)]
pub struct Row {
    pub present: u64,
    pub present_ns: u64,
    pub feedback: String,
    pub displayed_ns: Option<u64>,
    pub raw_ns: Option<u64>,
    pub refresh_ns: Option<u64>,
    pub msc: Option<u64>,
    pub clock_id: Option<u32>,
}

impl Row {
    pub fn presented(&self) -> bool {
        self.feedback == "presented"
    }
}

fn field<T: std::str::FromStr>(v: &str, what: &str, line: &str) -> Option<T> {
    if v.is_empty() {
        return None;
    }
    Some(
        v.parse()
            .unwrap_or_else(|_| panic!("bad {what} `{v}` in `{line}`")),
    )
}

/// Reads a feedback file, checking its header and its rows' shape.
pub fn read_feedback(path: &Path) -> Vec<Row> {
    let text =
        std::fs::read_to_string(path).unwrap_or_else(|e| panic!("read {}: {e}", path.display()));
    let mut lines = text.lines();
    assert_eq!(lines.next(), Some(HEADER), "header of {}", path.display());
    let rows: Vec<Row> = lines
        .map(|l| {
            let f: Vec<&str> = l.split(',').collect();
            assert_eq!(f.len(), 9, "9 columns in `{l}`");
            let row = Row {
                present: field(f[0], "present", l).expect("present"),
                present_ns: field(f[1], "present_ns", l).expect("present_ns"),
                feedback: f[2].to_string(),
                displayed_ns: field(f[3], "displayed_ns", l),
                raw_ns: field(f[4], "raw_ns", l),
                refresh_ns: field(f[5], "refresh_ns", l),
                msc: field(f[6], "msc", l),
                clock_id: field(f[8], "clock_id", l),
            };
            let _flags: Option<u32> = field(f[7], "flags", l);
            assert!(
                ["presented", "discarded", "none"].contains(&row.feedback.as_str()),
                "feedback kind in `{l}`"
            );
            let filled = [f[4], f[5], f[6], f[7]].iter().all(|v| !v.is_empty());
            let empty = [f[3], f[4], f[5], f[6], f[7]].iter().all(|v| v.is_empty());
            assert!(
                if row.presented() { filled } else { empty },
                "presented rows have raw_ns/refresh_ns/msc/flags, others none: `{l}`"
            );
            row
        })
        .collect();
    for (i, r) in rows.iter().enumerate() {
        assert_eq!(r.present, i as u64, "rows in present order");
    }
    rows
}

/// (presented, discarded, none).
pub fn counts(rows: &[Row]) -> (usize, usize, usize) {
    let n = |k: &str| rows.iter().filter(|r| r.feedback == k).count();
    (n("presented"), n("discarded"), n("none"))
}

/// Which program, with which options per case.
#[derive(Clone, Copy, Debug)]
pub enum Program {
    Vulkan,
    Gl,
}

/// The cases of the module docs.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Case {
    Fifo,
    Mailbox,
    Unmapped,
    Resize,
}

impl Program {
    pub fn exe(self) -> PathBuf {
        match self {
            Program::Vulkan => super::testapp_exe(),
            Program::Gl => super::gl::gltest_exe(),
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Program::Vulkan => "testapp",
            Program::Gl => "gltest",
        }
    }

    /// The program's options for `case` (after the feedback file's).
    pub fn args(self, case: Case) -> Vec<String> {
        let mut a: Vec<&str> = match (self, case) {
            (Program::Vulkan, Case::Fifo | Case::Resize) => {
                vec!["--wayland", "--present-mode", "fifo", "--frames", "119"]
            }
            (Program::Vulkan, Case::Mailbox) => {
                vec!["--wayland", "--present-mode", "mailbox", "--frames", "199"]
            }
            (Program::Vulkan, Case::Unmapped) => vec![
                "--wayland-unmapped",
                "--present-mode",
                "mailbox",
                "--frames",
                "199",
            ],
            (Program::Gl, Case::Fifo | Case::Resize) => {
                vec!["--wayland", "--swap-interval", "1", "--frames", "120"]
            }
            (Program::Gl, Case::Mailbox) => {
                vec!["--wayland", "--swap-interval", "0", "--frames", "200"]
            }
            (Program::Gl, Case::Unmapped) => vec![
                "--wayland-unmapped",
                "--swap-interval",
                "0",
                "--frames",
                "200",
            ],
        };
        // No sleep between presents (testapp presents 1 + --frames times).
        a.push(match self {
            Program::Vulkan => "--uncapped",
            Program::Gl => "--fps=0",
        });
        if case == Case::Resize {
            a.extend(["--resize-at", "60:400x300"]);
        }
        a.into_iter().map(String::from).collect()
    }

    /// Runs the program for `case` on `bed`, its command first given to
    /// `setup` (steadyhud on or off), with `--feedback-out`; checks that it
    /// succeeded and printed the file's counts, and returns the file's rows.
    pub fn run(self, bed: &WaylandBed, setup: impl FnOnce(&mut Command), case: Case) -> Vec<Row> {
        let exe = bed.install(&self.exe());
        let out_file = bed
            .log_dir
            .join(format!("{}-{case:?}.feedback", self.name()));
        let mut cmd = bed.command(&exe);
        setup(&mut cmd);
        cmd.arg("--feedback-out")
            .arg(&out_file)
            .args(self.args(case));
        let t = Instant::now();
        let out = super::run(&mut cmd);
        out.assert_success(&format!("{} {case:?} on Weston", self.name()));
        let line = format!("{}: feedback presented", self.name());
        let said = out
            .output_lines(|l| l.starts_with(&line))
            .first()
            .map(|l| l.to_string())
            .unwrap_or_else(|| panic!("no `{line}` line:\n{}", out.stdout));
        let rows = read_feedback(&out_file);
        let (p, d, n) = counts(&rows);
        assert_eq!(
            said,
            format!("{line} {p} discarded {d} none {n}"),
            "the printed counts are the file's"
        );
        eprintln!(
            "{} {case:?}: {} presents in {:.2} s: presented {p} discarded {d} none {n}, clock_id {:?}",
            self.name(),
            rows.len(),
            t.elapsed().as_secs_f64(),
            rows.first().and_then(|r| r.clock_id)
        );
        rows
    }
}
