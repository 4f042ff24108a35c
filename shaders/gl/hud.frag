// The GL library's HUD: imgui's colour (sRGB-encoded, written as it is:
// GL_FRAMEBUFFER_SRGB is off while the HUD draws) times the font atlas.
in vec2 f_uv;
in vec4 f_col;
uniform sampler2D tex;
out vec4 out_color;
void main() {
    out_color = f_col * texture(tex, f_uv);
}
