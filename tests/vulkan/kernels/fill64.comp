// fill64.comp - out[i] = base + i for i < count, with a 64-bit scalar
// before a 32-bit one, so the push-constant block has the argv parameter
// block's natural alignment (tests/vulkan/test_launch.cpp).
#version 450
#extension GL_ARB_gpu_shader_int64 : require
layout(local_size_x = 64) in;
layout(push_constant) uniform Scalars {
    uint64_t unused;  // a u64 record: 8 bytes at offset 0
    uint base;        // a u32 record at offset 8
    uint count;       // a u32 record at offset 12
} scalars;
layout(set = 0, binding = 0) writeonly buffer Out { uint values[]; };

void main()
{
    const uint i = gl_GlobalInvocationID.x;
    if (i < scalars.count) values[i] = scalars.base + i;
}
