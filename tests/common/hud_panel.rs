//! The HUD's panel in a screenshot, found by its colours: its box (by the
//! background colour) and the toast's backdrop.

use super::Screenshot;
use steadyhud::hud::view::colors;

/// A colour of the HUD as 8-bit sRGB, as it is on a UNORM target.
pub fn bytes(c: [f32; 4]) -> [u8; 3] {
    [0, 1, 2].map(|i| (c[i] * 255.0).round() as u8)
}

/// Whether two pixels are within `tol` in every channel.
pub fn near(a: [u8; 3], b: [u8; 3], tol: u8) -> bool {
    (0..3).all(|i| a[i].abs_diff(b[i]) <= tol)
}

/// The panel: the box `[x0, y0, x1, y1)` of the rows and columns holding
/// at least 5 pixels of the panel's background colour (a stray pixel of
/// the game's does not count); `None` without one.
pub fn panel(s: &Screenshot) -> Option<[u32; 4]> {
    let bg = bytes(colors::PANEL_BG);
    let mut rows = vec![0u32; s.height as usize];
    let mut cols = vec![0u32; s.width as usize];
    for y in 0..s.height {
        for x in 0..s.width {
            if near(s.pixel(x, y), bg, 2) {
                rows[y as usize] += 1;
                cols[x as usize] += 1;
            }
        }
    }
    let span = |v: &[u32]| {
        let first = v.iter().position(|&n| n >= 5)?;
        let last = v.iter().rposition(|&n| n >= 5)?;
        Some((first as u32, last as u32 + 1))
    };
    let (y0, y1) = span(&rows)?;
    let (x0, x1) = span(&cols)?;
    Some([x0, y0, x1, y1])
}

/// A box's width and height.
pub fn size(r: [u32; 4]) -> [u32; 2] {
    [r[2] - r[0], r[3] - r[1]]
}

/// Pixels of the toast's backdrop.
pub fn toast_pixels(s: &Screenshot) -> usize {
    let c = bytes(colors::TOAST_BG);
    let mut n = 0;
    for y in 0..s.height {
        for x in 0..s.width {
            n += usize::from(near(s.pixel(x, y), c, 3));
        }
    }
    n
}
