#version 450
// Stand-in game frame for tests/hud_render.rs: fills a storage image with
// one colour, the way a game may write its swapchain image with a compute
// shader before presenting it.
layout(local_size_x = 8, local_size_y = 8) in;
layout(set = 0, binding = 0, rgba8) uniform writeonly image2D frame;
layout(push_constant) uniform Fill {
    vec4 color;
} fill;

void main() {
    ivec2 p = ivec2(gl_GlobalInvocationID.xy);
    if (all(lessThan(p, imageSize(frame)))) {
        imageStore(frame, p, fill.color);
    }
}
