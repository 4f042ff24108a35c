#version 450
// Full-viewport quad from the vertex index (no vertex buffers).
void main() {
    vec2 p = vec2(float(gl_VertexIndex & 1) * 2.0 - 1.0, float(gl_VertexIndex >> 1) * 2.0 - 1.0);
    gl_Position = vec4(p, 0.0, 1.0);
}
