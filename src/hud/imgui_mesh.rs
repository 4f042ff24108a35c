//! Our imgui renderer, per-frame side: [`Mesh`] holds one command-buffer
//! slot's vertex and index buffers (persistently mapped, grown
//! geometrically, never shrunk) and records one imgui frame's draw calls.
//! Nothing is allocated per draw once the buffers are large enough.

use super::device::{HudDevice, HudError};
use super::imgui_vk::{FontTexture, Pipeline, Transform};
use super::memory::HostBuffer;
use ash::vk;
use imgui::{DrawCmd, DrawCmdParams, DrawIdx, DrawVert};
use steadyhud_gfx::{bind_pipeline_and_set, rect_between};

/// Smallest buffer size, bytes (a 720p HUD fits in it).
const MIN_BYTES: u64 = 64 * 1024;

/// The buffer size for `needed` bytes when `current` is too small: double
/// from `current` (or [`MIN_BYTES`]) until it fits.
pub fn grown_size(current: u64, needed: u64) -> u64 {
    let mut size = current.max(MIN_BYTES);
    while size < needed {
        size *= 2;
    }
    size
}

/// One slot's imgui geometry. The caller guarantees that the slot's
/// previous submission has completed before [`Mesh::cmd_draw`] rewrites it.
#[derive(Default)]
pub struct Mesh {
    vertices: Option<HostBuffer>,
    indices: Option<HostBuffer>,
}

impl Mesh {
    /// A mesh with [`MIN_BYTES`] of each buffer already allocated.
    ///
    /// # Safety
    /// `dev` is live.
    pub unsafe fn new(dev: &HudDevice) -> Result<Mesh, HudError> {
        let mut mesh = Mesh::default();
        if let Err(e) = mesh.reserve(dev, MIN_BYTES, MIN_BYTES) {
            mesh.destroy(dev);
            return Err(e);
        }
        Ok(mesh)
    }

    /// Grows the buffers to hold `vtx_bytes` and `idx_bytes`.
    ///
    /// # Safety
    /// `dev` is live, and no pending submission uses this mesh's buffers
    /// (a buffer that is too small is replaced).
    unsafe fn reserve(
        &mut self,
        dev: &HudDevice,
        vtx_bytes: u64,
        idx_bytes: u64,
    ) -> Result<(), HudError> {
        for (buffer, needed, usage) in [
            (
                &mut self.vertices,
                vtx_bytes,
                vk::BufferUsageFlags::VERTEX_BUFFER,
            ),
            (
                &mut self.indices,
                idx_bytes,
                vk::BufferUsageFlags::INDEX_BUFFER,
            ),
        ] {
            let current = buffer.as_ref().map_or(0, |b| b.size);
            if current >= needed {
                continue;
            }
            if let Some(mut old) = buffer.take() {
                old.destroy(dev);
            }
            *buffer = Some(HostBuffer::new(dev, grown_size(current, needed), usage)?);
        }
        Ok(())
    }

    /// Copies `draw_data` into the buffers and records its draws: pipeline,
    /// font, viewport = imgui's display, push constants, and per command a
    /// scissor (its clip rectangle within `area`, the render area) and an
    /// indexed draw. Records nothing when there is nothing to draw.
    ///
    /// # Safety
    /// `cmd` is recording inside a render pass compatible with `pipeline`'s
    /// whose render area is `area`; this slot's previous submission has
    /// completed.
    pub unsafe fn cmd_draw(
        &mut self,
        dev: &HudDevice,
        cmd: vk::CommandBuffer,
        pipeline: &Pipeline,
        font: &FontTexture,
        draw_data: &imgui::DrawData,
        area: vk::Rect2D,
    ) -> Result<(), HudError> {
        let vtx_count = draw_data.total_vtx_count.max(0) as usize;
        let idx_count = draw_data.total_idx_count.max(0) as usize;
        let [w, h] = draw_data.display_size;
        if vtx_count == 0 || idx_count == 0 || w <= 0.0 || h <= 0.0 {
            return Ok(());
        }
        let vtx_bytes = vtx_count * std::mem::size_of::<DrawVert>();
        let idx_bytes = idx_count * std::mem::size_of::<DrawIdx>();
        self.reserve(dev, vtx_bytes as u64, idx_bytes as u64)?;
        let (Some(vertices), Some(indices)) = (self.vertices.as_mut(), self.indices.as_mut())
        else {
            return Ok(());
        };
        copy_lists(draw_data, vertices.bytes(), indices.bytes());

        let d = dev.device;
        let bind = |d: &ash::Device| {
            bind_pipeline_and_set(
                d,
                cmd,
                vk::PipelineBindPoint::GRAPHICS,
                pipeline.pipeline,
                pipeline.layout,
                font.set,
            );
            d.cmd_bind_vertex_buffers(cmd, 0, &[vertices.buffer], &[0]);
            d.cmd_bind_index_buffer(cmd, indices.buffer, 0, vk::IndexType::UINT16);
            let viewport = [vk::Viewport {
                x: 0.0,
                y: 0.0,
                width: w,
                height: h,
                min_depth: 0.0,
                max_depth: 1.0,
            }];
            d.cmd_set_viewport(cmd, 0, &viewport);
            let t = Transform::for_display(draw_data.display_pos, draw_data.display_size);
            d.cmd_push_constants(
                cmd,
                pipeline.layout,
                vk::ShaderStageFlags::VERTEX,
                0,
                &t.bytes(),
            );
        };
        bind(d);
        let (mut vtx_base, mut idx_base) = (0usize, 0usize);
        for list in draw_data.draw_lists() {
            for command in list.commands() {
                match command {
                    DrawCmd::Elements {
                        count,
                        cmd_params:
                            DrawCmdParams {
                                clip_rect,
                                vtx_offset,
                                idx_offset,
                                ..
                            },
                    } => {
                        let clip = [
                            clip_rect[0] - draw_data.display_pos[0],
                            clip_rect[1] - draw_data.display_pos[1],
                            clip_rect[2] - draw_data.display_pos[0],
                            clip_rect[3] - draw_data.display_pos[1],
                        ];
                        let Some(scissor) = scissor(clip, area) else {
                            continue;
                        };
                        d.cmd_set_scissor(cmd, 0, &[scissor]);
                        d.cmd_draw_indexed(
                            cmd,
                            count as u32,
                            1,
                            (idx_base + idx_offset) as u32,
                            (vtx_base + vtx_offset) as i32,
                            0,
                        );
                    }
                    DrawCmd::ResetRenderState => bind(d),
                    // The HUD registers no callbacks.
                    DrawCmd::RawCallback { .. } => {}
                }
            }
            vtx_base += list.vtx_buffer().len();
            idx_base += list.idx_buffer().len();
        }
        Ok(())
    }

    /// Frees both buffers.
    ///
    /// # Safety
    /// No pending submission uses them.
    pub unsafe fn destroy(&mut self, dev: &HudDevice) {
        for b in [self.vertices.take(), self.indices.take()]
            .iter_mut()
            .flatten()
        {
            b.destroy(dev);
        }
    }
}

/// Copies every draw list's vertices and indices back to back.
fn copy_lists(draw_data: &imgui::DrawData, vtx_out: &mut [u8], idx_out: &mut [u8]) {
    let (mut v, mut i) = (0, 0);
    for list in draw_data.draw_lists() {
        let vb = as_bytes(list.vtx_buffer());
        vtx_out[v..v + vb.len()].copy_from_slice(vb);
        v += vb.len();
        let ib = as_bytes(list.idx_buffer());
        idx_out[i..i + ib.len()].copy_from_slice(ib);
        i += ib.len();
    }
}

/// The raw bytes of a slice of plain-old-data values.
fn as_bytes<T: Copy>(items: &[T]) -> &[u8] {
    // SAFETY: DrawVert (repr(C), f32 and u8 fields, no padding) and DrawIdx
    // (u16) are plain data; the byte slice covers exactly `items`.
    unsafe { std::slice::from_raw_parts(items.as_ptr().cast(), std::mem::size_of_val(items)) }
}

/// imgui's clip rectangle `[x0, y0, x1, y1]` (display coordinates) as a
/// scissor inside `area`; `None` when nothing of it is left.
pub fn scissor(clip: [f32; 4], area: vk::Rect2D) -> Option<vk::Rect2D> {
    let ax0 = area.offset.x.max(0) as f32;
    let ay0 = area.offset.y.max(0) as f32;
    let ax1 = area.offset.x as f32 + area.extent.width as f32;
    let ay1 = area.offset.y as f32 + area.extent.height as f32;
    let x0 = clip[0].floor().max(ax0);
    let y0 = clip[1].floor().max(ay0);
    let x1 = clip[2].ceil().min(ax1);
    let y1 = clip[3].ceil().min(ay1);
    if x1 <= x0 || y1 <= y0 {
        return None;
    }
    Some(rect_between(x0, y0, x1, y1))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buffers_grow_geometrically_from_64_kib() {
        assert_eq!(grown_size(0, 1), 64 * 1024);
        assert_eq!(grown_size(0, 64 * 1024), 64 * 1024);
        assert_eq!(grown_size(0, 64 * 1024 + 1), 128 * 1024);
        assert_eq!(grown_size(128 * 1024, 300 * 1024), 512 * 1024);
    }

    fn rect(x: i32, y: i32, w: u32, h: u32) -> vk::Rect2D {
        vk::Rect2D {
            offset: vk::Offset2D { x, y },
            extent: vk::Extent2D {
                width: w,
                height: h,
            },
        }
    }

    #[test]
    fn scissor_is_clamped_to_the_render_area() {
        let area = rect(10, 20, 100, 50);
        assert_eq!(scissor([0.0, 0.0, 1000.0, 1000.0], area), Some(area));
        assert_eq!(
            scissor([15.5, 25.2, 30.1, 40.0], area),
            Some(rect(15, 25, 16, 15))
        );
        // Negative clip rectangles never give a negative offset.
        assert_eq!(
            scissor([-50.0, -50.0, 12.0, 22.0], rect(0, 0, 100, 100)),
            Some(rect(0, 0, 12, 22))
        );
        assert_eq!(scissor([200.0, 0.0, 300.0, 10.0], area), None);
        assert_eq!(scissor([20.0, 30.0, 20.0, 40.0], area), None);
    }
}
