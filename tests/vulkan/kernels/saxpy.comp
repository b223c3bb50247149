// saxpy.comp - y[i] = a * x[i] + y[i] for i < n: a test kernel launched as
// a raw SPIR-V module (tests/vulkan/test_launch.cpp). The push constants are
// the launch's scalars in argv order (a: f32, n: u32); x and y are its
// pointer arguments, storage buffers 0 and 1 of set 0.
#version 450
layout(local_size_x = 64) in;
layout(push_constant) uniform Scalars {
    float a;
    uint n;
} scalars;
layout(set = 0, binding = 0) readonly buffer X { float x[]; };
layout(set = 0, binding = 1) buffer Y { float y[]; };

void main()
{
    const uint i = gl_GlobalInvocationID.x;
    if (i < scalars.n) y[i] = scalars.a * x[i] + y[i];
}
