//! The panel driver: imgui driven once for every renderer. [`Imgui`] is an
//! imgui context with its font atlas; [`Panel`] is one HUD's view with the
//! rules of when its panel is laid out and rendered again (the stats or the
//! size changed, or the layout has not settled) and how a frame settles
//! (an auto-resized window takes its size one build after its rows change,
//! so a frame builds again, at most twice, until it has). The Vulkan layer
//! (`src/hud`) and the GL library (`crates/gl/src/hud`) only upload the
//! atlas and draw the draw data a frame hands them.

use super::{Size, View};
use imgui::{DrawData, SuspendedContext};
use std::sync::Mutex;
use steadyhud_config::Config;
use steadyhud_live::LiveStats;

/// Dear ImGui keeps its current context in a process-wide global (one per
/// shared library that links it), so only one context may be active at a
/// time: every activation (set-up, frame) happens under this lock. It is
/// uncontended unless two windows present at the same instant from
/// different threads.
static IMGUI_LOCK: Mutex<()> = Mutex::new(());

/// Holds [`IMGUI_LOCK`] (the view's own tests take it too, around the
/// contexts they make).
pub(crate) fn imgui_lock() -> std::sync::MutexGuard<'static, ()> {
    IMGUI_LOCK
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// Another imgui context of this library is active (never expected: every
/// activation holds [`IMGUI_LOCK`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ImguiBusy;

impl std::fmt::Display for ImguiBusy {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("the HUD's imgui context is busy")
    }
}

impl std::error::Error for ImguiBusy {}

/// A font atlas as imgui built it: RGBA8 pixels, rows top to bottom.
pub struct Atlas {
    pub width: u32,
    pub height: u32,
    pub pixels: Vec<u8>,
}

/// One imgui context (font, style) made for a view's font size.
pub struct Imgui {
    ctx: Option<SuspendedContext>,
    font_px: f32,
}

impl Imgui {
    /// A new context set up for `view` ([`View::configure`]), and its font
    /// atlas for the renderer to upload.
    pub fn new(view: &View) -> Result<(Imgui, Atlas), ImguiBusy> {
        let _lock = imgui_lock();
        let mut ctx = SuspendedContext::create()
            .activate()
            .map_err(|_| ImguiBusy)?;
        view.configure(&mut ctx);
        let atlas = {
            let t = ctx.fonts().build_rgba32_texture();
            Atlas {
                width: t.width,
                height: t.height,
                pixels: t.data.to_vec(),
            }
        };
        // Suspended before it is kept: an active context left behind would
        // block every other HUD.
        let imgui = Imgui {
            ctx: Some(ctx.suspend()),
            font_px: view.font_px(),
        };
        Ok((imgui, atlas))
    }

    /// The font size (pixels) this context's atlas was built for.
    pub fn font_px(&self) -> f32 {
        self.font_px
    }
}

impl Drop for Imgui {
    fn drop(&mut self) {
        if let Some(ctx) = self.ctx.take() {
            let _lock = imgui_lock();
            drop(ctx);
        }
    }
}

/// One HUD's view and its panel's state: what was last rendered, for which
/// size and which stats.
pub struct Panel {
    pub view: View,
    /// The window size the view was made for.
    size: Size,
    /// The size and stats generation of the last render.
    rendered: Option<(Size, u64)>,
    /// The last render's filled size, pixels.
    content: Size,
}

/// The filled size of a laid-out window `[x0, y0, x1, y1]` built at the
/// origin, in whole pixels.
fn content_of(area: [f32; 4]) -> Size {
    [area[2], area[3]].map(|v| v.ceil().max(0.0) as u32)
}

impl Panel {
    /// The panel of a window of `size` pixels.
    pub fn new(config: &Config, size: Size) -> Panel {
        Panel {
            view: View::new(config, size),
            size,
            rendered: None,
            content: [0, 0],
        }
    }

    /// The window is now `size`: a new view when it changed. True when the
    /// view's font size is no longer `font_px` (a new [`Imgui`] and atlas
    /// are needed).
    pub fn resize(&mut self, config: &Config, size: Size, font_px: f32) -> bool {
        if size != self.size {
            self.view = View::new(config, size);
            self.size = size;
            self.rendered = None;
        }
        self.view.font_px() != font_px
    }

    /// Whether the panel rendered last is still what `stats` on a window of
    /// `size` show: same size, same stats, layout settled.
    pub fn current(&self, size: Size, stats: &LiveStats) -> bool {
        self.rendered == Some((size, stats.generation)) && self.view.settled()
    }

    /// The last render's filled size, pixels.
    pub fn content(&self) -> Size {
        self.content
    }

    /// Where the panel goes in a window of `size`: its top-left pixel.
    pub fn offset(&self, size: Size) -> [i32; 2] {
        self.view.corner_offset(self.content, size)
    }

    /// Renders the cached panel: one [`Panel::frame`] at the origin whose
    /// `draw` gets the panel's filled size and the draw data, and is not
    /// called while there is nothing to draw (imgui lays a new window out
    /// before it shows it). True when `draw` ran.
    pub fn render<E: From<ImguiBusy>>(
        &mut self,
        imgui: &mut Imgui,
        size: Size,
        dt: f32,
        stats: &LiveStats,
        draw: impl FnOnce(Size, &DrawData) -> Result<(), E>,
    ) -> Result<bool, E> {
        let drawn = self.frame(imgui, size, dt, stats, true, |area, data| {
            let content = content_of(area);
            if content[0] == 0 || content[1] == 0 || data.total_vtx_count == 0 {
                return Ok(None);
            }
            draw(content, data).map(Some)
        })?;
        Ok(drawn.is_some())
    }

    /// One imgui frame of `imgui` for a window of `size`, `dt` seconds after
    /// the last: lays the HUD out, at the origin for a cached panel
    /// (`at_origin`) or in its corner, building again until the layout has
    /// settled (at most twice more), and hands `record` the window's
    /// rectangle `[x0, y0, x1, y1]` and the draw data, with the context
    /// active (under the imgui lock). When `record` returns `Some` (it drew
    /// something), the panel counts as rendered for `size` and `stats`.
    pub fn frame<R, E: From<ImguiBusy>>(
        &mut self,
        imgui: &mut Imgui,
        size: Size,
        dt: f32,
        stats: &LiveStats,
        at_origin: bool,
        record: impl FnOnce([f32; 4], &DrawData) -> Result<Option<R>, E>,
    ) -> Result<Option<R>, E> {
        let _lock = imgui_lock();
        let Some(suspended) = imgui.ctx.take() else {
            return Err(ImguiBusy.into());
        };
        let mut ctx = match suspended.activate() {
            Ok(c) => c,
            Err(s) => {
                imgui.ctx = Some(s);
                return Err(ImguiBusy.into());
            }
        };
        let fsize = [size[0] as f32, size[1] as f32];
        ctx.io_mut().display_size = fsize;
        ctx.io_mut().delta_time = dt.max(1e-4);
        let mut area = self.view.build(ctx.new_frame(), fsize, stats, at_origin);
        for _ in 0..2 {
            if self.view.settled() {
                break;
            }
            ctx.render();
            ctx.io_mut().delta_time = 1e-4;
            area = self.view.build(ctx.new_frame(), fsize, stats, at_origin);
        }
        let drawn = record(area, ctx.render());
        // Suspended again whatever `record` said: an active context left
        // behind would block every other HUD.
        imgui.ctx = Some(ctx.suspend());
        let drawn = drawn?;
        if drawn.is_some() {
            self.rendered = Some((size, stats.generation));
            self.content = content_of(area);
        }
        Ok(drawn)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_panel_is_rendered_again_when_the_stats_or_the_size_change() {
        let config = Config::default();
        let (mut imgui, atlas) = Imgui::new(&View::new(&config, [1280, 720])).unwrap();
        assert!(atlas.width > 0 && atlas.pixels.len() == (atlas.width * atlas.height * 4) as usize);
        let mut panel = Panel::new(&config, [1280, 720]);
        let mut stats = LiveStats {
            generation: 1,
            ..LiveStats::default()
        };
        assert!(!panel.current([1280, 720], &stats));
        let drawn = panel
            .render::<ImguiBusy>(&mut imgui, [1280, 720], 0.016, &stats, |content, data| {
                assert!(content[0] > 0 && data.total_vtx_count > 0);
                Ok(())
            })
            .unwrap();
        // One frame settles the layout (it builds again as needed).
        assert!(drawn && panel.view.settled());
        assert!(panel.current([1280, 720], &stats));
        let [w, h] = panel.content();
        assert!(w > 0 && h > 0);
        stats.generation = 2;
        assert!(!panel.current([1280, 720], &stats));
        assert!(!panel.current([640, 480], &stats));
        // A size that keeps the font needs no new context; 4K does.
        assert!(!panel.resize(&config, [1280, 720], imgui.font_px()));
        assert!(panel.resize(&config, [3840, 2160], imgui.font_px()));
    }
}
