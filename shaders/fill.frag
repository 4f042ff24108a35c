#version 450
// SEED differs per pipeline so the driver compiles each one anew
// (the test app's --pipelines-at workload).
layout(constant_id = 0) const float SEED = 0.0;
layout(location = 0) out vec4 color;
void main() {
    float v = SEED + gl_FragCoord.x * 0.001;
    for (int i = 0; i < 16; i++) {
        v = fract(sin(v * 12.9898 + float(i)) * 43758.5453);
    }
    color = vec4(v, v, v, 1.0);
}
