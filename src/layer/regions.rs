//! `VkPresentRegionsKHR` (incremental present): an app that tells the
//! presentation engine which rectangles changed would hide the HUD, which
//! the app does not know it has. The layer adds the HUD's rectangle to each
//! swapchain's list. A list of zero rectangles already means "everything
//! changed" and is left alone.
//!
//! The patched structures live in the present queue's [`PresentScratch`], whose
//! buffers keep their capacity, so the present path does not allocate once
//! they have grown to the app's largest present.

use ash::vk;

/// Reused buffers for one queue's presents.
pub struct PresentScratch {
    /// The HUD rectangle each swapchain of the present got (by position).
    pub hud_rects: Vec<Option<vk::RectLayerKHR>>,
    rects: Vec<vk::RectLayerKHR>,
    regions: Vec<vk::PresentRegionKHR<'static>>,
    info: vk::PresentRegionsKHR<'static>,
}

impl Default for PresentScratch {
    fn default() -> Self {
        PresentScratch {
            hud_rects: Vec::with_capacity(8),
            rects: Vec::with_capacity(64),
            regions: Vec::with_capacity(8),
            info: vk::PresentRegionsKHR::default(),
        }
    }
}

// SAFETY: the raw pointers inside the Vulkan structs point into this
// scratch's own buffers (or are null); it moves between threads only with
// the queue that owns it.
unsafe impl Send for PresentScratch {}

/// Where the app's `VkPresentRegionsKHR` sits in a present's `pNext` chain.
pub enum Found<'a> {
    /// No regions: nothing to patch.
    None,
    /// First in the chain: the layer can put its copy in its place.
    First(&'a vk::PresentRegionsKHR<'a>),
    /// Further down: replacing it would mean copying the app's structures
    /// before it, whose layout the layer may not know; left as it is.
    Later,
}

/// Finds the app's regions in `info`'s chain.
///
/// # Safety
/// `info.p_next` is a valid chain.
pub unsafe fn find<'a>(info: &'a vk::PresentInfoKHR<'a>) -> Found<'a> {
    // SAFETY: the app's valid chain (caller).
    let regions = unsafe { super::chain::links(info.p_next) }
        .find(|l| l.s_type == vk::StructureType::PRESENT_REGIONS_KHR);
    match regions {
        // SAFETY: the sType says what it is.
        Some(l) if l.index == 0 => {
            Found::First(unsafe { &*(l.ptr as *const vk::PresentRegionsKHR) })
        }
        Some(_) => Found::Later,
        None => Found::None,
    }
}

/// The rectangle list of region `r`.
///
/// # Safety
/// `r` comes from a valid `VkPresentRegionKHR`.
unsafe fn rects_of<'a>(r: &'a vk::PresentRegionKHR) -> &'a [vk::RectLayerKHR] {
    if r.p_rectangles.is_null() || r.rectangle_count == 0 {
        &[]
    } else {
        // SAFETY: the app's list of `rectangle_count` rectangles.
        unsafe { std::slice::from_raw_parts(r.p_rectangles, r.rectangle_count as usize) }
    }
}

impl PresentScratch {
    /// Clears the per-present HUD rectangles for a present of `n` swapchains.
    pub fn begin(&mut self, n: usize) {
        self.hud_rects.clear();
        self.hud_rects.resize(n, None);
    }

    /// A copy of the app's `regions` with each swapchain's HUD rectangle
    /// (from [`PresentScratch::hud_rects`]) appended to its non-empty list, chained
    /// to what followed the app's structure; `None` when no HUD rectangle
    /// needed adding.
    ///
    /// # Safety
    /// `app` is a valid `VkPresentRegionsKHR`; the result points into this
    /// scratch and lives until its next use.
    pub unsafe fn patch(
        &mut self,
        app: &vk::PresentRegionsKHR,
    ) -> Option<&vk::PresentRegionsKHR<'static>> {
        let regions: &[vk::PresentRegionKHR] = if app.p_regions.is_null() {
            &[]
        } else {
            // SAFETY: the app's array of `swapchain_count` regions.
            unsafe { std::slice::from_raw_parts(app.p_regions, app.swapchain_count as usize) }
        };
        // SAFETY: as above, per region.
        let needs = |i: usize, r: &vk::PresentRegionKHR| unsafe { !rects_of(r).is_empty() } && self.hud_rects.get(i).copied().flatten().is_some();
        if !regions.iter().enumerate().any(|(i, r)| needs(i, r)) {
            return None;
        }
        self.rects.clear();
        // First gather every list (the rects buffer may grow, so pointers
        // are taken only once it is final).
        let mut lists = std::mem::take(&mut self.regions);
        lists.clear();
        for (i, r) in regions.iter().enumerate() {
            let start = self.rects.len();
            // SAFETY: as above.
            let app_rects = unsafe { rects_of(r) };
            self.rects.extend_from_slice(app_rects);
            if !app_rects.is_empty() {
                if let Some(hud) = self.hud_rects.get(i).copied().flatten() {
                    self.rects.push(hud);
                }
            }
            // Offsets for now; turned into pointers below.
            lists.push(vk::PresentRegionKHR {
                rectangle_count: (self.rects.len() - start) as u32,
                p_rectangles: start as *const _,
                ..Default::default()
            });
        }
        for r in lists.iter_mut() {
            let start = r.p_rectangles as usize;
            r.p_rectangles = if r.rectangle_count == 0 {
                std::ptr::null()
            } else {
                self.rects[start..].as_ptr()
            };
        }
        self.regions = lists;
        self.info = vk::PresentRegionsKHR {
            p_next: app.p_next,
            swapchain_count: self.regions.len() as u32,
            p_regions: self.regions.as_ptr(),
            ..Default::default()
        };
        Some(&self.info)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rect(x: i32, w: u32) -> vk::RectLayerKHR {
        vk::RectLayerKHR {
            offset: vk::Offset2D { x, y: 0 },
            extent: vk::Extent2D {
                width: w,
                height: 1,
            },
            layer: 0,
        }
    }

    #[test]
    fn hud_rect_is_added_to_non_empty_lists_only() {
        let a = [rect(1, 2), rect(5, 6)];
        let regions = [
            vk::PresentRegionKHR {
                rectangle_count: 2,
                p_rectangles: a.as_ptr(),
                ..Default::default()
            },
            vk::PresentRegionKHR::default(), // whole image: untouched
            vk::PresentRegionKHR {
                rectangle_count: 1,
                p_rectangles: a.as_ptr(),
                ..Default::default()
            },
        ];
        let app = vk::PresentRegionsKHR {
            swapchain_count: 3,
            p_regions: regions.as_ptr(),
            ..Default::default()
        };
        let mut s = PresentScratch::default();
        s.begin(3);
        // SAFETY: valid structures on the stack.
        assert!(
            unsafe { s.patch(&app) }.is_none(),
            "no HUD drew: nothing to patch"
        );
        s.hud_rects[0] = Some(rect(100, 50));
        s.hud_rects[1] = Some(rect(100, 50));
        // swapchain 2's HUD did not draw this present
        // SAFETY: valid structures on the stack.
        let out = unsafe { s.patch(&app) }.expect("patched");
        assert_eq!(out.swapchain_count, 3);
        let got = |i: usize| {
            // SAFETY: `out` points at 3 regions in `s`, and `i` < 3.
            unsafe { rects_of(&*out.p_regions.add(i)) }
                .iter()
                .map(|r| (r.offset.x, r.extent.width))
                .collect::<Vec<_>>()
        };
        assert_eq!(got(0), [(1, 2), (5, 6), (100, 50)]);
        assert_eq!(got(1), []);
        assert_eq!(got(2), [(1, 2)]);
    }

    #[test]
    fn finds_regions_first_or_later_in_the_chain() {
        let regions = vk::PresentRegionsKHR::default();
        let mut info = vk::PresentInfoKHR {
            p_next: &regions as *const _ as *const _,
            ..Default::default()
        };
        // SAFETY: valid chains on the stack.
        assert!(matches!(unsafe { find(&info) }, Found::First(_)));
        let id = vk::PresentIdKHR {
            p_next: &regions as *const _ as *const _,
            ..Default::default()
        };
        info.p_next = &id as *const _ as *const _;
        // SAFETY: as above.
        assert!(matches!(unsafe { find(&info) }, Found::Later));
        info.p_next = std::ptr::null();
        // SAFETY: an empty chain.
        assert!(matches!(unsafe { find(&info) }, Found::None));
    }
}
