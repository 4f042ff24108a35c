#version 450
// imgui colour (sRGB-encoded vertex colour x font atlas), written in the
// swapchain's encoding; ENCODING and the maths are those of
// src/hud/encoding.rs (Encoding::encode is the CPU reference).
// 0 = as is (UNORM), 1 = sRGB -> linear (*_SRGB format), 2 = HDR10 PQ with
// white at 200 nits, 3 = scRGB linear with white at 200 nits.
layout(constant_id = 0) const int ENCODING = 0;

layout(set = 0, binding = 0) uniform sampler2D font_atlas;

layout(location = 0) in vec4 v_color;
layout(location = 1) in vec2 v_uv;
layout(location = 0) out vec4 out_color;

const float HDR_WHITE_NITS = 200.0;

vec3 srgb_to_linear(vec3 c) {
    vec3 lo = c / 12.92;
    vec3 hi = pow((c + 0.055) / 1.055, vec3(2.4));
    return mix(lo, hi, greaterThan(c, vec3(0.04045)));
}

// Linear BT.709 to linear BT.2020 primaries (ITU-R BT.2087); GLSL matrices
// are given column by column.
const mat3 BT709_TO_BT2020 = mat3(
    0.627404, 0.069097, 0.016392,
    0.329282, 0.919540, 0.088013,
    0.043314, 0.011361, 0.895595);

// SMPTE ST 2084 inverse EOTF, y = luminance / 10000 nits.
vec3 pq_inverse_eotf(vec3 y) {
    const float m1 = 2610.0 / 16384.0;
    const float m2 = 2523.0 / 4096.0 * 128.0;
    const float c1 = 3424.0 / 4096.0;
    const float c2 = 2413.0 / 4096.0 * 32.0;
    const float c3 = 2392.0 / 4096.0 * 32.0;
    vec3 p = pow(clamp(y, 0.0, 1.0), vec3(m1));
    return pow((c1 + c2 * p) / (1.0 + c3 * p), vec3(m2));
}

void main() {
    vec4 c = v_color * texture(font_atlas, v_uv);
    if (ENCODING == 1) {
        c.rgb = srgb_to_linear(c.rgb);
    } else if (ENCODING == 2) {
        vec3 bt2020 = BT709_TO_BT2020 * srgb_to_linear(c.rgb);
        c.rgb = pq_inverse_eotf(bt2020 * (HDR_WHITE_NITS / 10000.0));
    } else if (ENCODING == 3) {
        c.rgb = srgb_to_linear(c.rgb) * (HDR_WHITE_NITS / 80.0);
    }
    out_color = c;
}
