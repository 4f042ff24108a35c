//! The HUD's colours: the exact values (sRGB-encoded, as the tests look
//! for them), the palette imgui takes, and the green / yellow / red rating
//! of a rate against `target_fps` (config `hud_colors`).

use imgui::ImColor32;

/// sRGB-encoded colours of the HUD (exact values the tests look for).
pub mod colors {
    /// Frame-time bar of a normal frame.
    pub const BAR: [f32; 4] = [0.30, 0.85, 0.40, 1.0];
    /// Frame-time bar and tick of a stutter frame.
    pub const STUTTER: [f32; 4] = [1.00, 0.22, 0.22, 1.0];
    /// Target-FPS line.
    pub const TARGET: [f32; 4] = [1.00, 0.80, 0.20, 1.0];
    /// Graph backdrop (translucent; its alpha is multiplied by `hud_alpha`).
    pub const GRAPH_BG: [f32; 4] = [0.0, 0.0, 0.0, 0.45];
    /// Graph frame.
    pub const GRAPH_FRAME: [f32; 4] = [0.70, 0.72, 0.78, 0.8];
    /// Text shadow.
    pub const SHADOW: [f32; 4] = [0.0, 0.0, 0.0, 0.9];
    /// Background of the panel (its alpha is `hud_alpha`).
    pub const PANEL_BG: [f32; 4] = [0.06, 0.06, 0.08, 1.0];
    /// Labels.
    pub const LABEL: [f32; 4] = [0.70, 0.72, 0.78, 1.0];
    /// Values (and every value with `hud_colors=0`).
    pub const VALUE: [f32; 4] = [1.00, 1.00, 1.00, 1.0];
    /// A rate at or above [`super::GOOD`] of the target.
    pub const GOOD: [f32; 4] = [0.45, 0.95, 0.55, 1.0];
    /// A rate at or above [`super::FAIR`] of the target.
    pub const FAIR: [f32; 4] = [1.00, 0.86, 0.35, 1.0];
    /// A rate below that.
    pub const POOR: [f32; 4] = [1.00, 0.42, 0.42, 1.0];
    /// The toast's backdrop.
    pub const TOAST_BG: [f32; 4] = [0.16, 0.36, 0.78, 1.0];
}

/// Green from this share of `target_fps` up (a frame time: at most the
/// target's frame time divided by it).
pub const GOOD: f64 = 0.95;
/// Yellow from this share up; red below.
pub const FAIR: f64 = 0.75;

/// The colour of a rate of `fps` against `target_fps`: [`colors::GOOD`],
/// [`colors::FAIR`] or [`colors::POOR`].
pub fn rating(fps: f64, target_fps: u32) -> [f32; 4] {
    let share = fps / f64::from(target_fps.max(1));
    if share >= GOOD {
        colors::GOOD
    } else if share >= FAIR {
        colors::FAIR
    } else {
        colors::POOR
    }
}

/// The HUD's colours as imgui takes them, computed once per view.
pub(crate) struct Palette {
    pub bar: ImColor32,
    pub stutter: ImColor32,
    pub target: ImColor32,
    pub graph_bg: ImColor32,
    pub graph_frame: ImColor32,
    pub shadow: ImColor32,
    pub toast_bg: ImColor32,
    pub label: [f32; 4],
    pub value: [f32; 4],
    pub warn: [f32; 4],
}

impl Palette {
    /// The palette with the graph's backdrop at `alpha` of its own.
    pub fn new(alpha: f32) -> Palette {
        let c = ImColor32::from;
        let mut graph_bg = colors::GRAPH_BG;
        graph_bg[3] *= alpha;
        Palette {
            bar: c(colors::BAR),
            stutter: c(colors::STUTTER),
            target: c(colors::TARGET),
            graph_bg: c(graph_bg),
            graph_frame: c(colors::GRAPH_FRAME),
            shadow: c(colors::SHADOW),
            toast_bg: c(colors::TOAST_BG),
            label: colors::LABEL,
            value: colors::VALUE,
            warn: colors::STUTTER,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rates_are_rated_against_the_target() {
        assert_eq!(rating(60.0, 60), colors::GOOD);
        assert_eq!(rating(57.0, 60), colors::GOOD);
        assert_eq!(rating(56.9, 60), colors::FAIR);
        assert_eq!(rating(45.0, 60), colors::FAIR);
        assert_eq!(rating(44.9, 60), colors::POOR);
        assert_eq!(rating(0.0, 144), colors::POOR);
    }
}
