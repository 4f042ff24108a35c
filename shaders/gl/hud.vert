// The GL library's HUD (crates/gl/src/hud/mesh.rs): imgui's vertices in
// window pixels (top-left origin) to clip space. The `#version` line (and
// GLES precision) is put in front at run time: 130/150 or 300 es.
in vec2 pos;
in vec2 uv;
in vec4 col;
// xy: scale, zw: offset (pixels -> clip space, y flipped).
uniform vec4 xform;
out vec2 f_uv;
out vec4 f_col;
void main() {
    f_uv = uv;
    f_col = col;
    gl_Position = vec4(pos * xform.xy + xform.zw, 0.0, 1.0);
}
