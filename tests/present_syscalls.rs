//! The present and the swap make no system call of ours when the HUD is
//! hidden and nothing else is due (issue 49: "a present with no system
//! call"): the game's presenting thread, traced by `strace`, makes no more
//! `rt_sigprocmask` (a guard's pair) and `getpid` in a run of many frames
//! than in a run of few (set-up takes guards: the loader asks for every
//! device function at `vkCreateDevice`, each lookup guarded). With Wayland
//! presentation feedback on, the present takes one guard (the display
//! source's work can panic): at most two calls per present, the listeners
//! that run inside it adding none. Counts, not times: they hold on a
//! loaded machine too.

mod common;
mod require;

use common::gl::{gl_library, gltest_exe, preload};
use common::wayland::{WaylandBed, BED_PROGRAMS};
use common::*;
use std::path::Path;
use std::process::Command;

/// The short and the long run's frames.
const FEW: usize = 100;
const MANY: usize = 700;
/// Calls the long run may make beyond the short one without being per
/// frame (a periodic pump, a late first-time step).
const SLACK: usize = (MANY - FEW) / 10;

/// `cmd` under `strace -f` (the program as `user`, if given), its trace
/// of the counted calls into `out`.
fn traced(cmd: &Command, out: &Path, user: Option<&str>) -> Command {
    let mut c = Command::new("strace");
    c.args([
        "-f",
        "-qq",
        "-e",
        "trace=execve,rt_sigprocmask,getpid",
        "-o",
    ])
    .arg(out);
    if let Some(u) = user {
        c.args(["-u", u]);
    }
    c.arg("--").arg(cmd.get_program()).args(cmd.get_args());
    for (k, v) in cmd.get_envs() {
        match v {
            Some(v) => c.env(k, v),
            None => c.env_remove(k),
        };
    }
    c
}

/// The calls the program's main thread (the one that exec'd, which
/// presents) made: `[rt_sigprocmask, getpid]`.
fn main_thread_calls(trace: &Path) -> [usize; 2] {
    let text = std::fs::read_to_string(trace).expect("strace output");
    let tid = |l: &str| l.split_whitespace().next().unwrap_or("").to_string();
    let main = text
        .lines()
        .rfind(|l| l.contains("execve("))
        .map(tid)
        .expect("the exec is traced");
    let mut n = [0, 0];
    for l in text.lines().filter(|l| tid(l) == main) {
        n[0] += usize::from(l.contains("rt_sigprocmask("));
        n[1] += usize::from(l.contains("getpid("));
    }
    n
}

/// The calls the presenting thread makes in `MANY − FEW` more frames of
/// `program` (made by `cmd` with its frame count): `[rt_sigprocmask,
/// getpid]`.
fn per_frames(
    dir: &Path,
    user: Option<&str>,
    what: &str,
    cmd: impl Fn(&str) -> Command,
) -> [usize; 2] {
    let trace = dir.join("strace.txt");
    let mut counts = [FEW, MANY].map(|frames| {
        let out = run(&mut traced(&cmd(&frames.to_string()), &trace, user));
        out.assert_success(what);
        main_thread_calls(&trace)
    });
    let [few, many] = &mut counts;
    let more = [
        many[0].saturating_sub(few[0]),
        many[1].saturating_sub(few[1]),
    ];
    eprintln!(
        "{what}: {FEW} frames {few:?}, {MANY} frames {many:?} [rt_sigprocmask, getpid] on the presenting thread"
    );
    more
}

fn have_strace() -> bool {
    require::programs(&[("strace", "strace")])
}

#[test]
fn a_vulkan_present_with_the_hud_hidden_makes_no_system_call() {
    if !have_strace() {
        return;
    }
    let h = Harness::new();
    h.write_config("hud_hidden=1\nsensor_hz=0\n");
    let [mask, pid] = per_frames(h.root.path(), None, "testapp", |frames| {
        let mut c = h.testapp(&["--frames", frames, "--uncapped"]);
        c.layer();
        c
    });
    assert!(
        mask <= SLACK && pid <= SLACK,
        "{} more presents with the HUD hidden made {mask} more rt_sigprocmask and {pid} more getpid",
        MANY - FEW
    );
}

#[test]
fn a_gl_swap_with_the_hud_hidden_makes_no_system_call() {
    if !have_strace() {
        return;
    }
    let h = Harness::new();
    h.write_config("hud_hidden=1\nsensor_hz=0\n");
    let h = &h;
    let gltest = |preloaded: bool| {
        move |frames: &str| {
            let mut c = h.command(gltest_exe());
            c.args(["--frames", frames, "--fps=0"]);
            if preloaded {
                preload(&mut c, &[&gl_library()]);
            }
            c
        }
    };
    // Mesa's GLX calls getpid itself on every swap: ours are what the
    // library adds to that.
    let [_, their_pid] = per_frames(h.root.path(), None, "gltest alone", gltest(false));
    let [mask, pid] = per_frames(h.root.path(), None, "gltest", gltest(true));
    assert!(
        mask <= SLACK && pid <= their_pid + SLACK,
        "{} more swaps with the HUD hidden made {mask} more rt_sigprocmask and {pid} more getpid ({their_pid} without the library)",
        MANY - FEW
    );
}

#[test]
fn a_present_asking_for_feedback_takes_one_guard() {
    if !have_strace() || !require::programs(&BED_PROGRAMS) {
        return;
    }
    let bed = WaylandBed::weston(640, 480);
    let [mask, pid] = per_frames(bed.root.path(), bed.user_name(), "testapp", |frames| {
        let mut c = bed.command(testapp_exe());
        c.args([
            "--wayland",
            "--present-mode",
            "mailbox",
            "--uncapped",
            "--frames",
            frames,
        ])
        .env(
            "STEADYHUD_CONFIG",
            "display_feedback=1,hud_hidden=1,sensor_hz=0",
        )
        .layer();
        c
    });
    assert!(
        mask <= 2 * (MANY - FEW) + SLACK && pid <= SLACK,
        "{} more presents asking for feedback made {mask} more rt_sigprocmask and {pid} more getpid",
        MANY - FEW
    );
}
