//! The view laid out with imgui for real (no GPU needed).

use super::*;
use graph::COUNTER_GRAPH_H;

#[test]
fn scale_follows_height() {
    assert_eq!(hud_scale(480), 1.0);
    assert_eq!(hud_scale(720), 1.0);
    assert_eq!(hud_scale(1080), 1.5);
    assert_eq!(hud_scale(2160), 3.0);
    assert_eq!(hud_scale(10000), 4.0);
}

/// Laid out with imgui for real (no GPU needed): `hud_counters` adds one
/// row and one graph per counter below the main section; off, nothing.
#[test]
fn counter_section_only_when_configured() {
    let stats = LiveStats {
        counters: vec![
            steadyhud_live::LiveCounter {
                label: "pipeline creation".into(),
                unit: "ms",
                recent: vec![0.0, 41.0, 0.5],
            },
            steadyhud_live::LiveCounter {
                label: "queue submit".into(),
                unit: "ms",
                recent: vec![0.2; 3],
            },
        ],
        ..LiveStats::default()
    };
    let height = |on: bool, stats: &LiveStats| {
        let _one = crate::driver::imgui_lock();
        let mut ctx = imgui::Context::create();
        ctx.set_ini_filename(None);
        ctx.io_mut().display_size = [1280.0, 720.0];
        ctx.fonts().build_rgba32_texture();
        let cfg = Config {
            hud_counters: on,
            ..Config::default()
        };
        let mut view = View::new(&cfg, [1280, 720]);
        // Auto-resize settles on the second frame.
        let mut r = [0.0; 4];
        for _ in 0..2 {
            r = view.build(ctx.new_frame(), [1280.0, 720.0], stats, true);
            ctx.render();
        }
        r[3] - r[1]
    };
    let (off, on) = (height(false, &stats), height(true, &stats));
    // Header + 2 rows of text and 2 graphs of 18 px at least.
    assert!(
        on > off + 2.0 * COUNTER_GRAPH_H + 3.0 * 13.0,
        "off {off} on {on}"
    );
    // The last stutter and its cause: two more lines.
    let last = steadyhud_live::LastStutter {
        excess_ms: 41.2,
        cause: "pipeline creation 41.0 ms".into(),
    };
    let with_last = LiveStats {
        last_stutter: Some(last),
        ..stats.clone()
    };
    let (off_last, on_last) = (height(false, &with_last), height(true, &with_last));
    assert_eq!(off_last, off, "no counter section, no last-stutter line");
    assert!(
        on_last >= on + 2.0 * 13.0,
        "on {on} with last stutter {on_last}"
    );
}

/// Stats of a steady 60 fps window with three stutters.
fn sixty() -> LiveStats {
    let summary = steadyhud_metrics::summarize(
        &[16_700_000u64; 600],
        &steadyhud_metrics::Options::default(),
    );
    let mut recent_stutter = vec![false; 300];
    for i in [100, 180, 260] {
        recent_stutter[i] = true;
    }
    LiveStats {
        summary,
        window_s: 10.0,
        recent_ms: vec![16.7; 300],
        recent_stutter,
        last_frame_ms: 16.7,
        preset: Some(2),
        ..LiveStats::default()
    }
}

/// The window's width and height once settled, at 1280x720.
fn laid_out(config: &Config, stats: &LiveStats) -> [f32; 2] {
    laid_out_in(config, stats, [1280, 720])
}

fn laid_out_in(config: &Config, stats: &LiveStats, display: [u32; 2]) -> [f32; 2] {
    let _one = crate::driver::imgui_lock();
    let mut ctx = imgui::Context::create();
    let mut view = View::new(config, display);
    view.configure(&mut ctx);
    let size = display.map(|v| v as f32);
    ctx.io_mut().display_size = size;
    ctx.fonts().build_rgba32_texture();
    let mut r = [0.0; 4];
    for _ in 0..3 {
        r = view.build(ctx.new_frame(), size, stats, true);
        ctx.render();
    }
    assert!(view.settled());
    [r[2] - r[0], r[3] - r[1]]
}

/// One line is a short strip, compact is smaller than standard, detailed
/// taller than standard; `hud_rows` replaces the configured preset's rows.
#[test]
fn presets_differ_in_size_as_they_should() {
    let cfg = Config::default();
    let size = |preset: u8| {
        laid_out(
            &cfg,
            &LiveStats {
                preset: Some(preset),
                ..sixty()
            },
        )
    };
    let [one, compact, standard, detailed] = [0, 1, 2, 3].map(size);
    assert!(one[1] < 2.5 * 13.0, "one line is one line: {one:?}");
    assert!(one[0] > 2.0 * one[1], "one line is a strip: {one:?}");
    assert!(compact[1] < standard[1], "{compact:?} {standard:?}");
    assert!(
        detailed[1] > standard[1] + 5.0 * 13.0,
        "{detailed:?} {standard:?}"
    );
    let custom = Config {
        hud_rows: vec![steadyhud_config::hud::Row::Own(
            steadyhud_config::hud::OwnRow::FpsOnly,
        )],
        ..Config::default()
    };
    let only = laid_out(&custom, &sixty());
    assert!(only[0] < one[0] && only[1] <= one[1], "{only:?} vs {one:?}");
    // Another preset than the configured one keeps its own rows.
    let other = laid_out(
        &custom,
        &LiveStats {
            preset: Some(3),
            ..sixty()
        },
    );
    assert_eq!(other, detailed);
}

#[test]
fn hud_scale_2_doubles_the_panel() {
    let one = laid_out(
        &Config {
            hud_scale: Some(1.0),
            ..Config::default()
        },
        &sixty(),
    );
    let two = laid_out(
        &Config {
            hud_scale: Some(2.0),
            ..Config::default()
        },
        &sixty(),
    );
    for i in 0..2 {
        let r = two[i] / one[i];
        assert!((1.95..=2.05).contains(&r), "{one:?} → {two:?}");
    }
}

#[test]
fn horizontal_is_a_strip() {
    let cfg = Config {
        horizontal: true,
        ..Config::default()
    };
    let strip = laid_out(&cfg, &sixty());
    let column = laid_out(&Config::default(), &sixty());
    assert!(strip[0] > 3.0 * strip[1], "{strip:?}");
    assert!(strip[1] < column[1] / 2.0, "{strip:?} vs {column:?}");
    // In a narrow window the strip goes on in a second line, inside it.
    let narrow = laid_out_in(&cfg, &sixty(), [480, 480]);
    assert!(narrow[0] <= 480.0 - 20.0, "{narrow:?}");
    assert!(
        narrow[1] > strip[1] && narrow[1] < column[1],
        "{narrow:?} vs {strip:?}"
    );
}

/// A toast adds a line; with the HUD hidden it is all there is.
#[test]
fn the_toast_is_a_line_and_all_of_a_hidden_hud() {
    use steadyhud_live::Toast;
    let plain = laid_out(&Config::default(), &sixty());
    let toasted = laid_out(
        &Config::default(),
        &LiveStats {
            toast: Some(Toast::Preset(2)),
            ..sixty()
        },
    );
    assert!(toasted[1] >= plain[1] + 13.0, "{plain:?} {toasted:?}");
    let hidden = laid_out(
        &Config::default(),
        &LiveStats {
            toast: Some(Toast::Hidden),
            hidden: true,
            ..sixty()
        },
    );
    assert!(hidden[1] < 2.5 * 13.0 && hidden[0] < plain[0], "{hidden:?}");
}

/// The `display` row (detailed preset) is there only for a window with a
/// source of display times: one line more.
#[test]
fn the_display_row_shows_with_a_source_only() {
    let display = Some(steadyhud_live::LiveDisplay {
        source: "wayland",
        displayed_fps: Some(59.9),
        dropped: 3,
        unknown: 0,
        latency_ms: Some(24.1),
        refresh_ms: Some(16.7),
    });
    let detailed = LiveStats {
        preset: Some(3),
        ..sixty()
    };
    let without = laid_out(&Config::default(), &detailed);
    let with = laid_out(
        &Config::default(),
        &LiveStats {
            display,
            ..detailed
        },
    );
    assert!(
        with[1] >= without[1] + 13.0 && with[1] < without[1] + 2.0 * 13.0,
        "{without:?} → {with:?}"
    );
    // The standard preset has no such row.
    let standard = laid_out(&Config::default(), &LiveStats { display, ..sixty() });
    assert_eq!(standard, laid_out(&Config::default(), &sixty()));
}
