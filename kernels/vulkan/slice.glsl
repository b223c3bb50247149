// slice.glsl - the part of a tile loop one dispatch covers
// (docs/adr/0026-gpu-device-scheduler.md). The device's scheduler cuts a
// long dispatch into several over consecutive ranges of its tiles, each its
// own submission; the push constants name the range [first, end), end 0
// meaning every tile. The pipeline layout of every program carries them.
layout(push_constant) uniform TileSlice {
    uint first;
    uint end;
} tile_slice;

uint slice_end(uint tiles)
{
    return tile_slice.end == 0u ? tiles : min(tile_slice.end, tiles);
}
