//! The HUD's presets, size, layout and background on real programs under
//! Xvfb: vkcube through the Vulkan layer and glxgears through the GL
//! library (`steadyhud run`). The panel is found in screenshots by its
//! background colour; its size says which preset is shown. `ctl preset N`
//! and the preset key (`Shift_R+F10`) change it, each with a toast of
//! about a second; `hud_scale=2` doubles it, `horizontal=1` makes a strip
//! along an edge, `hud_alpha=0` leaves the game's pixels under it as a run
//! without the HUD has them outside the glyphs. The Wayland preset key:
//! tests/hud_wayland.rs.
//!
//! Screenshots are kept in `target/hud-shots/`.

mod common;
mod require;

use common::gl::{layer_library_64, mesa_util};
use common::hud_panel::{bytes, near, panel, size, toast_pixels};
use common::*;
use std::time::{Duration, Instant};
use steadyhud::hud::view::colors;

/// A toast is up: more backdrop pixels than stray ones.
const TOAST: usize = 40;

/// The panel once it holds still: two screenshots 300 ms apart with the
/// same panel height and no toast (within `secs`); the last screenshot.
fn settled(h: &Harness, secs: u64) -> (Option<[u32; 4]>, Screenshot) {
    let deadline = Instant::now() + Duration::from_secs(secs);
    let mut last: Option<[u32; 4]> = None;
    loop {
        let s = h.screenshot();
        let p = panel(&s).filter(|_| toast_pixels(&s) < TOAST);
        let same = matches!((last, p), (Some(a), Some(b)) if size(a)[1] == size(b)[1]);
        if same || Instant::now() > deadline {
            return (p, s);
        }
        last = p;
        std::thread::sleep(Duration::from_millis(300));
    }
}

/// Holds a key combination long enough for the 50 ms key poll.
fn press(h: &Harness, mods: &str, key: &str) {
    h.xdotool(&["keydown", mods, "keydown", key]);
    std::thread::sleep(Duration::from_millis(300));
    h.xdotool(&["keyup", key, "keyup", mods]);
}

/// `steadyhud ctl ARGS` against the harness's only game; its stdout.
fn ctl(h: &Harness, args: &[&str]) -> String {
    let out = run(h.steadyhud(&["ctl"]).args(args));
    assert!(out.status.success(), "ctl {args:?}: {}", out.stderr);
    out.stdout
}

/// The heights the presets have on one run, told apart: one line is a
/// short strip, compact is shorter than standard, detailed taller.
fn check_preset_shapes(what: &str, sizes: &[[u32; 2]; 4]) {
    let [one, compact, standard, detailed] = *sizes;
    assert!(
        one[1] < 40 && one[0] > 3 * one[1],
        "{what}: one line is a short strip: {sizes:?}"
    );
    assert!(
        one[1] < compact[1] && compact[1] < standard[1] && standard[1] < detailed[1],
        "{what}: heights one line < compact < standard < detailed: {sizes:?}"
    );
}

/// Which preset a panel of height `h` is, from the heights `sizes` of
/// the presets (within 3 px).
fn which(sizes: &[[u32; 2]; 4], h: u32) -> Option<u8> {
    (0..4u8).find(|&i| sizes[usize::from(i)][1].abs_diff(h) <= 3)
}

fn vkcube(h: &Harness, config: &str) -> Running {
    let mut cmd = h.command("vkcube");
    cmd.args(["--width", "640", "--height", "480"]).layer();
    cmd.env("STEADYHUD_CONFIG", config);
    spawn(&mut cmd)
}

/// On vkcube: `ctl preset N` shows each preset with the shape it should
/// have; then the preset key cycles 3→0→1→2→3→0, each press with a toast
/// that is gone after about a second.
#[test]
fn vkcube_presets_by_ctl_and_key_with_toasts() {
    if !require::programs(&[("vkcube", "vulkan-tools"), ("xdotool", "xdotool")]) {
        return;
    }
    let h = Harness::with_screen(800, 600);
    let app = vkcube(&h, "fps_limit=60");
    let mut sizes = [[0u32; 2]; 4];
    let (first, s) = settled(&h, 30);
    s.keep("preset_vkcube_2_standard");
    sizes[2] = size(first.expect("no HUD panel on vkcube"));
    for (n, name) in [(0u8, "one_line"), (1, "compact"), (3, "detailed")] {
        let said = ctl(&h, &["preset", &n.to_string()]);
        assert!(said.starts_with(&format!("HUD preset {n}")), "{said}");
        std::thread::sleep(Duration::from_millis(1300));
        let (p, s) = settled(&h, 10);
        s.keep(&format!("preset_vkcube_{n}_{name}"));
        sizes[usize::from(n)] = size(p.unwrap_or_else(|| panic!("no panel in preset {n}")));
    }
    eprintln!("panel sizes by preset: {sizes:?}");
    check_preset_shapes("vkcube", &sizes);
    let status: serde_json::Value = serde_json::from_str(&ctl(&h, &["--json", "status"])).unwrap();
    assert_eq!(status["preset"], 3, "{status}");

    // The key, from preset 3: 0, 1, 2, 3, 0; a toast after each press.
    let mut seen = Vec::new();
    let mut toast_secs = Vec::new();
    for _ in 0..5 {
        press(&h, "Shift_R", "F10");
        let pressed = Instant::now();
        let mut up = None;
        let mut gone = None;
        while pressed.elapsed() < Duration::from_secs(4) && gone.is_none() {
            let t = toast_pixels(&h.screenshot());
            match (up, t >= TOAST) {
                (None, true) => up = Some(pressed.elapsed()),
                (Some(u), false) => gone = Some(pressed.elapsed() - u),
                _ => {}
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        let (p, s) = settled(&h, 10);
        let n = p.and_then(|p| which(&sizes, size(p)[1]));
        s.keep(&format!("preset_vkcube_key_{}", seen.len()));
        seen.push(n);
        toast_secs.push((up, gone));
    }
    // Hiding the HUD: its toast (`HUD off`) alone, then nothing.
    press(&h, "Shift_R", "F12");
    let pressed = Instant::now();
    let mut hide_toast = false;
    while !hide_toast && pressed.elapsed() < Duration::from_secs(2) {
        hide_toast = toast_pixels(&h.screenshot()) >= TOAST;
    }
    std::thread::sleep(Duration::from_millis(1500));
    let after_hide = h.screenshot();
    after_hide.keep("preset_vkcube_hidden");
    let out = app.kill();
    assert!(hide_toast, "no toast when the HUD was hidden");
    assert_eq!(
        (panel(&after_hide), toast_pixels(&after_hide)),
        (None, 0),
        "the HUD hidden a second after its toast"
    );
    eprintln!("presets after each key press: {seen:?}; toast (up after, up for): {toast_secs:?}");
    assert_eq!(
        seen,
        [Some(0), Some(1), Some(2), Some(3), Some(0)],
        "the preset key cycles 0→1→2→3→0 (sizes {sizes:?})\n{}",
        out.stderr
    );
    for (up, gone) in toast_secs {
        let up = up.expect("a toast after the key press");
        assert!(up < Duration::from_millis(800), "toast up after {up:?}");
        let gone = gone.expect("the toast goes away");
        assert!(
            (0.5..2.0).contains(&gone.as_secs_f64()),
            "the toast stayed {gone:?}, not about a second"
        );
    }
}

/// vkcube's frame without the layer, once it is on screen.
fn vkcube_plain(h: &Harness) -> Screenshot {
    let mut cmd = h.command("vkcube");
    cmd.args(["--width", "640", "--height", "480"]);
    let app = spawn(&mut cmd);
    let deadline = Instant::now() + Duration::from_secs(20);
    let mut s = h.screenshot();
    while s.fraction_close(0, 0, s.width, s.height, [0, 0, 0], 0) > 0.6 && Instant::now() < deadline
    {
        std::thread::sleep(Duration::from_millis(200));
        s = h.screenshot();
    }
    std::thread::sleep(Duration::from_millis(500));
    let s = h.screenshot();
    drop(app);
    s
}

/// The panel of a vkcube run with `config`, the screenshot and stderr.
fn vkcube_panel(h: &Harness, config: &str, name: &str) -> (Option<[u32; 4]>, Screenshot, String) {
    let app = vkcube(h, config);
    let (p, s) = settled(h, 30);
    s.keep(name);
    let out = app.kill();
    (p, s, out.stderr)
}

/// `hud_scale=2` doubles the panel, `horizontal=1` is a strip along the
/// chosen edge, `hud_alpha` 0 and 0.5 show the game through the panel,
/// and a bad `hud_rows` item is one warning with the other rows shown.
#[test]
fn vkcube_scale_strip_alpha_and_rows() {
    if !require::programs(&[("vkcube", "vulkan-tools")]) {
        return;
    }
    let h = Harness::with_screen(800, 600);
    let base = "fps_limit=60,preset=1";
    let (one, _, _) = vkcube_panel(&h, &format!("{base},hud_scale=1"), "scale_1");
    let (two, _, _) = vkcube_panel(&h, &format!("{base},hud_scale=2"), "scale_2");
    let (one, two) = (
        size(one.expect("panel at scale 1")),
        size(two.expect("panel at scale 2")),
    );
    eprintln!("compact panel at hud_scale 1: {one:?}, at 2: {two:?}");
    for i in 0..2 {
        let r = two[i] as f64 / one[i] as f64;
        assert!((1.9..=2.1).contains(&r), "hud_scale=2: {one:?} → {two:?}");
    }

    // A strip along the top, then along the bottom edge.
    let (column, _, _) = vkcube_panel(&h, "fps_limit=60", "column");
    let column = column.expect("panel");
    for (pos, name) in [("top-left", "strip_top"), ("bottom-left", "strip_bottom")] {
        let (strip, s, _) = vkcube_panel(
            &h,
            &format!("fps_limit=60,horizontal=1,position={pos}"),
            name,
        );
        let strip = strip.expect("strip panel");
        let [w, ht] = size(strip);
        eprintln!("{pos} strip {strip:?} vs column {column:?}");
        assert!(w > 3 * ht, "{pos}: a strip wider than tall: {strip:?}");
        assert!(ht < size(column)[1] / 2, "{strip:?} vs {column:?}");
        // The window: the box of the screenshot's lit pixels.
        let lit_rows: Vec<u32> = (0..s.height)
            .filter(|&y| (0..s.width).any(|x| s.pixel(x, y) != [0, 0, 0]))
            .collect();
        let (top, bottom) = (lit_rows[0], *lit_rows.last().unwrap() + 1);
        if pos.starts_with("top") {
            assert_eq!(
                strip[1],
                top + 10,
                "along the top edge: {strip:?}, window top {top}"
            );
        } else {
            assert_eq!(
                strip[3] + 10,
                bottom,
                "along the bottom: {strip:?}, window bottom {bottom}"
            );
        }
    }

    // hud_alpha: the text-only panel's box at alpha 1, then alpha 0 and
    // 0.5 compared with vkcube's own pixels there.
    let text_only = "fps_limit=60,hud_rows=steady_fps+typical_fps+average_fps";
    let (rect, _, _) = vkcube_panel(&h, &format!("{text_only},hud_alpha=1"), "alpha_1");
    let [x0, y0, x1, y1] = rect.expect("opaque panel");
    let plain = vkcube_plain(&h);
    plain.keep("alpha_plain");
    let share_equal = |s: &Screenshot| {
        let mut equal = 0;
        for y in y0..y1 {
            for x in x0..x1 {
                equal += usize::from(near(s.pixel(x, y), plain.pixel(x, y), 2));
            }
        }
        equal as f64 / ((x1 - x0) * (y1 - y0)) as f64
    };
    let (_, zero, _) = vkcube_panel(&h, &format!("{text_only},hud_alpha=0"), "alpha_0");
    let (_, half, _) = vkcube_panel(&h, &format!("{text_only},hud_alpha=0.5"), "alpha_half");
    let (_, opaque, _) = vkcube_panel(&h, &format!("{text_only},hud_alpha=1"), "alpha_1_again");
    let (f0, f1) = (share_equal(&zero), share_equal(&opaque));
    // The text's pixels: those that differ in the alpha 0 run; they are
    // the HUD's colours or darker than the game's (shadows).
    let mut odd = 0;
    for y in y0..y1 {
        for x in x0..x1 {
            let (p, g) = (zero.pixel(x, y), plain.pixel(x, y));
            let darker = (0..3).all(|i| p[i] <= g[i]);
            let brighter_text = p.iter().max() > g.iter().max();
            if !near(p, g, 2) && !darker && !brighter_text {
                odd += 1;
            }
        }
    }
    // Alpha 0.5: the background half way between the panel's and the game's.
    let bg = bytes(colors::PANEL_BG);
    let mut halfway = 0;
    for y in y0..y1 {
        for x in x0..x1 {
            let g = plain.pixel(x, y);
            let want = [0, 1, 2].map(|i| ((u16::from(bg[i]) + u16::from(g[i])) / 2) as u8);
            halfway += usize::from(near(half.pixel(x, y), want, 3));
        }
    }
    let f_half = halfway as f64 / ((x1 - x0) * (y1 - y0)) as f64;
    eprintln!(
        "panel {:?}: pixels as without the layer: alpha 0 {f0:.3}, alpha 1 {f1:.3}; \
         half-way pixels at alpha 0.5 {f_half:.3}; odd {odd}",
        [x0, y0, x1, y1]
    );
    assert!(
        f0 > 0.6,
        "hud_alpha=0: only {f0:.3} of the panel's pixels are the game's"
    );
    assert!(
        f1 < 0.05,
        "hud_alpha=1: {f1:.3} of the panel's pixels are the game's"
    );
    assert_eq!(
        odd, 0,
        "hud_alpha=0: pixels neither the game's, text nor shadow"
    );
    assert!(
        f_half > 0.5,
        "hud_alpha=0.5: {f_half:.3} of the panel half-way"
    );

    // A bad row: one warning naming it; the other rows (the graph) shown.
    let (p, s, stderr) = vkcube_panel(&h, "hud_rows=steady_fps+no_such_row+graph", "bad_row");
    let warnings: Vec<&str> = stderr
        .lines()
        .filter(|l| l.contains("no_such_row"))
        .collect();
    assert_eq!(warnings.len(), 1, "one warning naming the row:\n{stderr}");
    assert!(warnings[0].contains("hud_rows"), "{}", warnings[0]);
    let [x0, y0, x1, y1] = p.expect("the other rows show");
    let bar = bytes(colors::BAR);
    let bars = (y0..y1)
        .flat_map(|y| (x0..x1).map(move |x| (x, y)))
        .filter(|&(x, y)| near(s.pixel(x, y), bar, 3))
        .count();
    assert!(bars > 50, "the graph's bars: {bars} pixels");
}

/// glxgears through `steadyhud run` (the GL library): the presets by
/// `ctl preset`, the key, `hud_scale=2`, a strip and `hud_alpha=0`.
#[test]
fn glxgears_presets_scale_strip_and_alpha() {
    let gears = mesa_util("glxgears");
    if !require::programs(&[(&gears, "mesa-utils"), ("xdotool", "xdotool")]) {
        return;
    }
    let h = Harness::with_screen(800, 600);
    let start = |config: &str| {
        let mut cmd = h.steadyhud(&["run", "--lib"]);
        cmd.arg(layer_library_64()).arg("--");
        cmd.args([&gears, "-geometry", "640x560+0+0"]);
        cmd.env("STEADYHUD_CONFIG", config);
        spawn(&mut cmd)
    };
    let game = start("fps_limit=60");
    let mut sizes = [[0u32; 2]; 4];
    let (first, _) = settled(&h, 30);
    sizes[2] = size(first.expect("no HUD panel on glxgears"));
    for n in [0u8, 1, 3] {
        ctl(&h, &["preset", &n.to_string()]);
        std::thread::sleep(Duration::from_millis(1300));
        let (p, s) = settled(&h, 10);
        s.keep(&format!("preset_glxgears_{n}"));
        sizes[usize::from(n)] = size(p.unwrap_or_else(|| panic!("no panel in preset {n}")));
    }
    eprintln!("glxgears panel sizes by preset: {sizes:?}");
    check_preset_shapes("glxgears", &sizes);
    // The key: 3 → 0, with a toast.
    press(&h, "Shift_R", "F10");
    let pressed = Instant::now();
    let mut toast = false;
    while !toast && pressed.elapsed() < Duration::from_secs(2) {
        toast = toast_pixels(&h.screenshot()) >= TOAST;
    }
    std::thread::sleep(Duration::from_millis(1300));
    let (p, _) = settled(&h, 10);
    let after = p.and_then(|p| which(&sizes, size(p)[1]));
    game.terminate();
    assert!(toast, "no toast after the preset key on glxgears");
    assert_eq!(after, Some(0), "the key after preset 3 (sizes {sizes:?})");

    let panel_of = |config: &str, name: &str| {
        let game = start(config);
        let (p, s) = settled(&h, 30);
        s.keep(name);
        game.terminate();
        (p, s)
    };
    let (one, _) = panel_of("fps_limit=60,preset=1,hud_scale=1", "gl_scale_1");
    let (two, _) = panel_of("fps_limit=60,preset=1,hud_scale=2", "gl_scale_2");
    let (one, two) = (size(one.expect("scale 1")), size(two.expect("scale 2")));
    for i in 0..2 {
        let r = two[i] as f64 / one[i] as f64;
        assert!(
            (1.9..=2.1).contains(&r),
            "GL hud_scale=2: {one:?} → {two:?}"
        );
    }
    let (strip, _) = panel_of("fps_limit=60,horizontal=1", "gl_strip");
    let strip = strip.expect("strip");
    assert!(size(strip)[0] > 3 * size(strip)[1], "GL strip {strip:?}");
    assert_eq!(strip[1], 10, "GL strip along the top edge: {strip:?}");

    // hud_alpha=0 over glxgears' black: the panel's box (from an opaque
    // run) keeps black everywhere but the text and its shadow.
    let text_only = "fps_limit=60,hud_rows=steady_fps+typical_fps+average_fps";
    let (rect, _) = panel_of(&format!("{text_only},hud_alpha=1"), "gl_alpha_1");
    let [x0, y0, x1, y1] = rect.expect("opaque GL panel");
    let (_, zero) = panel_of(&format!("{text_only},hud_alpha=0"), "gl_alpha_0");
    let black = (y0..y1)
        .flat_map(|y| (x0..x1).map(move |x| (x, y)))
        .filter(|&(x, y)| zero.pixel(x, y) == [0, 0, 0])
        .count();
    let f = black as f64 / ((x1 - x0) * (y1 - y0)) as f64;
    let label = (y0..y1)
        .flat_map(|y| (x0..x1).map(move |x| (x, y)))
        .filter(|&(x, y)| near(zero.pixel(x, y), bytes(colors::LABEL), 3))
        .count();
    eprintln!("GL hud_alpha=0: {f:.3} of the panel black, {label} label pixels");
    assert!(
        f > 0.6,
        "GL hud_alpha=0: {f:.3} of the panel is the game's black"
    );
    assert!(
        label > 30,
        "GL hud_alpha=0: the text is drawn ({label} label pixels)"
    );
}
