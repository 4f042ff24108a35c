//! The HUD's GL objects in one context: the program (`shaders/gl/`), the
//! vertex array with its two buffers, the font texture and the panel (a
//! texture with its framebuffer). As in the Vulkan layer's cached mode,
//! imgui's draw lists are rendered into the opaque panel only when the
//! live statistics change ([`Mesh::render_panel`], ~10×/s), and every swap
//! draws the panel as one textured quad into the window
//! ([`Mesh::draw_panel`]: one draw call, whatever the HUD holds; a quad
//! rather than a blit, which a multisampled window would refuse).

use super::saved::Caps;
use glow::HasContext;

const VERT: &str = include_str!("../../../../shaders/gl/hud.vert");
const FRAG: &str = include_str!("../../../../shaders/gl/hud.frag");

/// Why the HUD cannot be drawn in a context.
#[derive(Debug)]
pub enum MeshError {
    Create(&'static str, String),
    Compile(&'static str, String),
    Link(String),
}

impl std::fmt::Display for MeshError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            MeshError::Create(what, e) => write!(f, "cannot create the HUD's {what}: {e}"),
            MeshError::Compile(what, log) => {
                write!(f, "the HUD's {what} shader does not compile: {log}")
            }
            MeshError::Link(log) => write!(f, "the HUD's program does not link: {log}"),
        }
    }
}

/// One imgui draw command: a scissor rectangle (window pixels, top-left
/// origin) and a range of the index buffer.
#[derive(Clone, Copy)]
struct Cmd {
    clip: [f32; 4],
    first: u32,
    count: u32,
}

/// The HUD's objects in one GL context.
pub struct Mesh {
    /// The context's caps: viewport, scissor and blend set for index 0.
    caps: Caps,
    program: glow::NativeProgram,
    xform: Option<glow::NativeUniformLocation>,
    vao: glow::NativeVertexArray,
    /// The vertex buffer (the index buffer is the vertex array's).
    vbo: glow::NativeBuffer,
    font: glow::NativeTexture,
    panel_fbo: glow::NativeFramebuffer,
    panel_tex: glow::NativeTexture,
    /// The panel texture's size, and the part the HUD fills.
    panel_alloc: [u32; 2],
    content: [u32; 2],
    /// What the buffers hold: the quad for (offset, window size), or
    /// imgui's lists (`None`).
    quad: Option<([i32; 2], [u32; 2])>,
    cmds: Vec<Cmd>,
    /// Scratch for the concatenated lists (kept: no allocation per panel).
    vertices: Vec<u8>,
    indices: Vec<u32>,
}

/// The shading language line for a context of this version.
fn header(gles: bool, major: u32, minor: u32) -> &'static str {
    match (gles, (major, minor) >= (3, 2)) {
        (true, _) => "#version 300 es\nprecision mediump float;\n",
        // Desktop GL has clip distances: the vertex shader writes them.
        (false, true) => "#version 150\n#define STEADYHUD_CLIP_DISTANCES\n",
        (false, false) => "#version 130\n#define STEADYHUD_CLIP_DISTANCES\n",
    }
}

impl Mesh {
    /// Creates the objects and uploads the font atlas (`w`×`h` RGBA8).
    /// The caller has saved the game's state and set the HUD's.
    ///
    /// # Safety
    /// `gl` is current on this thread.
    pub unsafe fn new(
        gl: &glow::Context,
        caps: Caps,
        font: (u32, u32, &[u8]),
    ) -> Result<Mesh, MeshError> {
        let v = gl.version();
        let head = header(v.is_embedded, v.major, v.minor);
        // SAFETY: object creation on the current context (caller).
        unsafe {
            let program = gl
                .create_program()
                .map_err(|e| MeshError::Create("program", e))?;
            let mut shaders = Vec::new();
            for (kind, what, body) in [
                (glow::VERTEX_SHADER, "vertex", VERT),
                (glow::FRAGMENT_SHADER, "fragment", FRAG),
            ] {
                let s = gl
                    .create_shader(kind)
                    .map_err(|e| MeshError::Create("shader", e))?;
                gl.shader_source(s, &format!("{head}{body}"));
                gl.compile_shader(s);
                if !gl.get_shader_compile_status(s) {
                    let log = gl.get_shader_info_log(s);
                    gl.delete_shader(s);
                    gl.delete_program(program);
                    return Err(MeshError::Compile(what, log));
                }
                gl.attach_shader(program, s);
                shaders.push(s);
            }
            for (i, n) in ["pos", "uv", "col"].into_iter().enumerate() {
                gl.bind_attrib_location(program, i as u32, n);
            }
            if !v.is_embedded {
                gl.bind_frag_data_location(program, 0, "out_color");
            }
            gl.link_program(program);
            for s in shaders {
                gl.detach_shader(program, s);
                gl.delete_shader(s);
            }
            if !gl.get_program_link_status(program) {
                let log = gl.get_program_info_log(program);
                gl.delete_program(program);
                return Err(MeshError::Link(log));
            }
            let xform = gl.get_uniform_location(program, "xform");
            gl.use_program(Some(program));
            let tex = gl.get_uniform_location(program, "tex");
            gl.uniform_1_i32(tex.as_ref(), 0);

            let vao = gl
                .create_vertex_array()
                .map_err(|e| MeshError::Create("vertex array", e))?;
            let vbo = gl
                .create_buffer()
                .map_err(|e| MeshError::Create("buffer", e))?;
            let ebo = gl
                .create_buffer()
                .map_err(|e| MeshError::Create("buffer", e))?;
            gl.bind_vertex_array(Some(vao));
            gl.bind_buffer(glow::ARRAY_BUFFER, Some(vbo));
            gl.bind_buffer(glow::ELEMENT_ARRAY_BUFFER, Some(ebo));
            let stride = std::mem::size_of::<imgui::DrawVert>() as i32;
            gl.enable_vertex_attrib_array(0);
            gl.vertex_attrib_pointer_f32(0, 2, glow::FLOAT, false, stride, 0);
            gl.enable_vertex_attrib_array(1);
            gl.vertex_attrib_pointer_f32(1, 2, glow::FLOAT, false, stride, 8);
            gl.enable_vertex_attrib_array(2);
            gl.vertex_attrib_pointer_f32(2, 4, glow::UNSIGNED_BYTE, true, stride, 16);

            let texture = |what| -> Result<glow::NativeTexture, MeshError> {
                let t = gl
                    .create_texture()
                    .map_err(|e| MeshError::Create(what, e))?;
                gl.bind_texture(glow::TEXTURE_2D, Some(t));
                for (p, val) in [
                    (glow::TEXTURE_MIN_FILTER, glow::NEAREST),
                    (glow::TEXTURE_MAG_FILTER, glow::NEAREST),
                    (glow::TEXTURE_WRAP_S, glow::CLAMP_TO_EDGE),
                    (glow::TEXTURE_WRAP_T, glow::CLAMP_TO_EDGE),
                ] {
                    gl.tex_parameter_i32(glow::TEXTURE_2D, p, val as i32);
                }
                Ok(t)
            };
            let font_tex = texture("font texture")?;
            let panel_tex = texture("panel texture")?;
            let panel_fbo = gl
                .create_framebuffer()
                .map_err(|e| MeshError::Create("panel framebuffer", e))?;
            let mesh = Mesh {
                caps,
                program,
                xform,
                vao,
                vbo,
                font: font_tex,
                panel_fbo,
                panel_tex,
                panel_alloc: [0, 0],
                content: [0, 0],
                quad: None,
                cmds: Vec::new(),
                vertices: Vec::new(),
                indices: Vec::new(),
            };
            mesh.replace_font(gl, font);
            Ok(mesh)
        }
    }

    /// Uploads imgui's draw lists into the buffers, as one list (32-bit
    /// indices, rebased).
    ///
    /// # Safety
    /// As [`Mesh::new`]; the HUD's state is set.
    unsafe fn upload(&mut self, gl: &glow::Context, data: &imgui::DrawData) {
        self.quad = None;
        self.cmds.clear();
        self.vertices.clear();
        self.indices.clear();
        let mut base = 0u32;
        for list in data.draw_lists() {
            let vtx = list.vtx_buffer();
            let idx = list.idx_buffer();
            // SAFETY: DrawVert is plain old data (two f32 pairs, four u8).
            let bytes = unsafe {
                std::slice::from_raw_parts(vtx.as_ptr().cast::<u8>(), std::mem::size_of_val(vtx))
            };
            self.vertices.extend_from_slice(bytes);
            for cmd in list.commands() {
                if let imgui::DrawCmd::Elements {
                    count,
                    cmd_params:
                        imgui::DrawCmdParams {
                            clip_rect,
                            vtx_offset,
                            idx_offset,
                            ..
                        },
                } = cmd
                {
                    let first = self.indices.len() as u32;
                    let vbase = base + vtx_offset as u32;
                    self.indices.extend(
                        idx[idx_offset..idx_offset + count]
                            .iter()
                            .map(|&i| u32::from(i) + vbase),
                    );
                    self.cmds.push(Cmd {
                        clip: clip_rect,
                        first,
                        count: count as u32,
                    });
                }
            }
            base += vtx.len() as u32;
        }
        // SAFETY: uploads into our own buffers (caller: current context).
        unsafe { self.send(gl) }
    }

    /// Uploads `vertices` and `indices` into the buffers.
    ///
    /// # Safety
    /// As [`Mesh::upload`].
    unsafe fn send(&self, gl: &glow::Context) {
        // SAFETY: uploads into our own buffers (caller: current context).
        unsafe {
            gl.bind_vertex_array(Some(self.vao));
            gl.bind_buffer(glow::ARRAY_BUFFER, Some(self.vbo));
            gl.buffer_data_u8_slice(glow::ARRAY_BUFFER, &self.vertices, glow::STREAM_DRAW);
            let idx: &[u8] = std::slice::from_raw_parts(
                self.indices.as_ptr().cast(),
                std::mem::size_of_val(self.indices.as_slice()),
            );
            gl.buffer_data_u8_slice(glow::ELEMENT_ARRAY_BUFFER, idx, glow::STREAM_DRAW);
        }
    }

    /// Sends the buffers' vertices to the GL: the uploaded buffers, the
    /// uploaded commands, into a target of `size` pixels, sampling
    /// `texture`.
    ///
    /// # Safety
    /// As [`Mesh::upload`].
    unsafe fn draw_cmds(&self, gl: &glow::Context, size: [u32; 2], texture: glow::NativeTexture) {
        let (w, h) = (size[0] as f32, size[1] as f32);
        // SAFETY: draws with our own objects (caller: current context,
        // the HUD's state set).
        unsafe {
            self.caps
                .viewport(gl, [0, 0, size[0] as i32, size[1] as i32]);
            gl.use_program(Some(self.program));
            gl.uniform_4_f32(self.xform.as_ref(), 2.0 / w, -2.0 / h, -1.0, 1.0);
            gl.bind_vertex_array(Some(self.vao));
            gl.bind_texture(glow::TEXTURE_2D, Some(texture));
            for c in &self.cmds {
                let [x0, y0, x1, y1] = c.clip;
                let (x0, y0) = (x0.max(0.0), y0.max(0.0));
                let (x1, y1) = (x1.min(w), y1.min(h));
                if x1 <= x0 || y1 <= y0 {
                    continue;
                }
                self.caps.scissor(
                    gl,
                    [
                        x0 as i32,
                        (h - y1) as i32,
                        (x1 - x0).ceil() as i32,
                        (y1 - y0).ceil() as i32,
                    ],
                );
                gl.draw_elements(
                    glow::TRIANGLES,
                    c.count as i32,
                    glow::UNSIGNED_INT,
                    (c.first * 4) as i32,
                );
            }
        }
    }

    /// Renders imgui's lists, laid out at the origin and filling `content`
    /// pixels, into the panel over `background` (growing the panel when
    /// needed). Leaves the window's framebuffer bound for drawing.
    ///
    /// # Safety
    /// As [`Mesh::upload`].
    pub unsafe fn render_panel(
        &mut self,
        gl: &glow::Context,
        data: &imgui::DrawData,
        content: [u32; 2],
        background: [f32; 4],
    ) {
        // SAFETY: our own objects on the current context (caller).
        unsafe {
            if content[0] > self.panel_alloc[0] || content[1] > self.panel_alloc[1] {
                // Rounded up: a panel that grows by a row or two (a new
                // sensor row) does not reallocate each time.
                let alloc = content.map(|c| c.div_ceil(64) * 64);
                gl.bind_texture(glow::TEXTURE_2D, Some(self.panel_tex));
                gl.tex_image_2d(
                    glow::TEXTURE_2D,
                    0,
                    glow::RGBA8 as i32,
                    alloc[0] as i32,
                    alloc[1] as i32,
                    0,
                    glow::RGBA,
                    glow::UNSIGNED_BYTE,
                    glow::PixelUnpackData::Slice(None),
                );
                gl.bind_framebuffer(glow::DRAW_FRAMEBUFFER, Some(self.panel_fbo));
                gl.framebuffer_texture_2d(
                    glow::DRAW_FRAMEBUFFER,
                    glow::COLOR_ATTACHMENT0,
                    glow::TEXTURE_2D,
                    Some(self.panel_tex),
                    0,
                );
                self.panel_alloc = alloc;
            }
            gl.bind_framebuffer(glow::DRAW_FRAMEBUFFER, Some(self.panel_fbo));
            gl.draw_buffers(&[glow::COLOR_ATTACHMENT0]);
            self.caps
                .scissor(gl, [0, 0, content[0] as i32, content[1] as i32]);
            let [r, g, b, a] = background;
            gl.clear_color(r, g, b, a);
            gl.clear(glow::COLOR_BUFFER_BIT);
            self.upload(gl, data);
            self.draw_cmds(gl, content, self.font);
            gl.bind_framebuffer(glow::DRAW_FRAMEBUFFER, None);
        }
        self.content = content;
    }

    /// Draws the panel into the window (`size` pixels) with its top-left
    /// corner at `offset` (window pixels, top-left origin).
    ///
    /// # Safety
    /// As [`Mesh::upload`], the window's framebuffer bound for drawing.
    pub unsafe fn draw_panel(&mut self, gl: &glow::Context, offset: [i32; 2], size: [u32; 2]) {
        let [cw, ch] = self.content;
        if cw == 0 || ch == 0 {
            return;
        }
        if self.quad != Some((offset, size)) {
            let (x0, y0) = (offset[0] as f32, offset[1] as f32);
            let (x1, y1) = (x0 + cw as f32, y0 + ch as f32);
            // The panel's top row is its texture's last filled one.
            let (u1, v1) = (
                cw as f32 / self.panel_alloc[0] as f32,
                ch as f32 / self.panel_alloc[1] as f32,
            );
            let white = [255u8; 4];
            let corners = [
                ([x0, y0], [0.0, v1]),
                ([x1, y0], [u1, v1]),
                ([x1, y1], [u1, 0.0]),
                ([x0, y1], [0.0, 0.0]),
            ];
            self.vertices.clear();
            for (pos, uv) in corners {
                let v = imgui::DrawVert {
                    pos,
                    uv,
                    col: white,
                };
                // SAFETY: DrawVert is plain old data.
                self.vertices.extend_from_slice(unsafe {
                    std::slice::from_raw_parts(
                        (&v as *const imgui::DrawVert).cast::<u8>(),
                        std::mem::size_of::<imgui::DrawVert>(),
                    )
                });
            }
            self.indices.clear();
            self.indices.extend([0, 1, 2, 0, 2, 3]);
            self.cmds.clear();
            self.cmds.push(Cmd {
                clip: [x0, y0, x1, y1],
                first: 0,
                count: 6,
            });
            // SAFETY: uploads into our own buffers.
            unsafe { self.send(gl) };
            self.quad = Some((offset, size));
        }
        // SAFETY: as above. The panel holds premultiplied colour (imgui's
        // blending over a premultiplied clear).
        unsafe {
            self.caps.blend_func(
                gl,
                [
                    glow::ONE,
                    glow::ONE_MINUS_SRC_ALPHA,
                    glow::ONE,
                    glow::ONE_MINUS_SRC_ALPHA,
                ],
            );
            self.draw_cmds(gl, size, self.panel_tex);
        }
    }

    /// Replaces the font atlas (a new HUD scale).
    ///
    /// # Safety
    /// As [`Mesh::upload`].
    pub unsafe fn replace_font(&self, gl: &glow::Context, font: (u32, u32, &[u8])) {
        let (w, h, data) = font;
        // SAFETY: our texture on the current context (caller).
        unsafe {
            gl.bind_texture(glow::TEXTURE_2D, Some(self.font));
            gl.tex_image_2d(
                glow::TEXTURE_2D,
                0,
                glow::RGBA8 as i32,
                w as i32,
                h as i32,
                0,
                glow::RGBA,
                glow::UNSIGNED_BYTE,
                glow::PixelUnpackData::Slice(Some(data)),
            );
        }
    }
}
