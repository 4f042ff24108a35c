#version 450
// The test app's --gpu-work load: every invocation runs a dependent chain
// of `iterations` steps (each needs the previous result, so the compiler
// can neither shorten nor vectorise it away) and stores the result, so the
// loop is not dead code. The host calibrates `iterations` against measured
// time, so what one step costs does not matter.
layout(local_size_x = 64) in;
layout(push_constant) uniform Work {
    uint iterations;
} work;
layout(set = 0, binding = 0, std430) writeonly buffer Sink {
    float sink[];
};

void main() {
    float v = float(gl_GlobalInvocationID.x) * 0.001;
    for (uint i = 0u; i < work.iterations; i++) {
        v = fract(v * 1.618034 + 0.31830988);
    }
    sink[gl_GlobalInvocationID.x] = v;
}
