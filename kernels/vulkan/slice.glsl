// slice.glsl - the part of a tile loop one dispatch covers
// (docs/adr/0026-gpu-device-scheduler.md). The device's scheduler cuts a
// long dispatch into several, each its own submission, over consecutive
// ranges of its tiles or of its dot products' k; the push constants name
// the tiles [first, end), end 0 meaning every tile, and k [k_first, k_end)
// in elements (multiples of the kernel's BK), k_end 0 meaning all of it.
// A part with k_first > 0 goes on from the partial sums the part before
// stored in the result (only kernels with an FP32 result are cut over k:
// backends/vulkan/src/lowering_matmul.hpp). The pipeline layout of every
// program carries the block.
layout(push_constant) uniform TileSlice {
    uint first;
    uint end;
    uint k_first;
    uint k_end;
} tile_slice;

uint slice_end(uint tiles)
{
    return tile_slice.end == 0u ? tiles : min(tile_slice.end, tiles);
}

uint slice_k_end(uint depth)
{
    return tile_slice.k_end == 0u ? depth : min(tile_slice.k_end, depth);
}
