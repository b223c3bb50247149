// fill64.comp - out[i] = base + i for i < count, with a 64-bit scalar
// between two 32-bit ones, so the push-constant block must have the argv
// parameter block's natural alignment, padding included
// (tests/vulkan/test_launch.cpp). The u64 is read
// as a uvec2 (8-byte aligned in std430 too), so no shaderInt64 is needed.
#version 450
layout(local_size_x = 64) in;
layout(push_constant) uniform Scalars {
    uint base;     // a u32 record at offset 0, then 4 bytes of padding
    uvec2 unused;  // a u64 record: 8 bytes at offset 8
    uint count;    // a u32 record at offset 16
} scalars;
layout(set = 0, binding = 0) writeonly buffer Out { uint values[]; };

void main()
{
    const uint i = gl_GlobalInvocationID.x;
    if (i < scalars.count) values[i] = scalars.base + i;
}
