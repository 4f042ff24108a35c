// The GL library's HUD (crates/gl/src/hud/mesh.rs): imgui's vertices in
// window pixels (top-left origin) to clip space. The `#version` line (and
// GLES precision) is put in front at run time: 130/150 or 300 es, with
// STEADYHUD_CLIP_DISTANCES defined on desktop GL.
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
#ifdef STEADYHUD_CLIP_DISTANCES
    // Desktop GL: every clip distance the game may have enabled is
    // positive, so its planes never cut the HUD and the library need not
    // read or change them (one query each, per swap).
    gl_ClipDistance[0] = 1.0;
    gl_ClipDistance[1] = 1.0;
    gl_ClipDistance[2] = 1.0;
    gl_ClipDistance[3] = 1.0;
    gl_ClipDistance[4] = 1.0;
    gl_ClipDistance[5] = 1.0;
    gl_ClipDistance[6] = 1.0;
    gl_ClipDistance[7] = 1.0;
#endif
}
