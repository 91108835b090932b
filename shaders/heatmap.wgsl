// The moves × buckets heatmap of the action-values panel (src/ui/heatmap_gpu.rs).
//
// One texel per cell: row = move, column = value bucket, holding the bucket's intensity in 0..1 (its
// probability relative to the row's peak, square-rooted; packed on the CPU by `pack_heatmap`). The colour
// map blends the panel background into the theme's heat colour by that intensity, as the painter fallback
// does. The callback's viewport is the visible part of the grid; one triangle covers it.

struct Params {
    // Panel background (sRGB, 0..1).
    background: vec4<f32>,
    // Heat colour at intensity 1 (sRGB, 0..1).
    heat: vec4<f32>,
    // x: columns (buckets), y: rows (moves), z: the share of a row left as a gap at its bottom,
    // w: 1 when the target stores linear colour (an sRGB framebuffer), else 0.
    grid: vec4<f32>,
    // The part of the grid the viewport shows, in cells: x, y: its top-left corner; z, w: its size.
    // (The callback draws only the visible part, so a grid scrolled partly out of view still maps right.)
    view: vec4<f32>,
};

@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var cells: texture_2d<f32>;

struct VertexOut {
    @builtin(position) position: vec4<f32>,
    // 0..1 across the grid, y down.
    @location(0) uv: vec2<f32>,
};

@vertex
fn vs_main(@builtin(vertex_index) index: u32) -> VertexOut {
    // A triangle that covers the viewport: (-1,-1), (3,-1), (-1,3).
    let x = f32(i32(index & 1u) * 4 - 1);
    let y = f32(i32(index >> 1u) * 4 - 1);
    var out: VertexOut;
    out.position = vec4<f32>(x, y, 0.0, 1.0);
    out.uv = vec2<f32>(x * 0.5 + 0.5, 0.5 - y * 0.5);
    return out;
}

fn srgb_to_linear(c: vec3<f32>) -> vec3<f32> {
    let low = c / 12.92;
    let high = pow((c + 0.055) / 1.055, vec3<f32>(2.4));
    return select(high, low, c <= vec3<f32>(0.04045));
}

@fragment
fn fs_main(in: VertexOut) -> @location(0) vec4<f32> {
    let columns = params.grid.x;
    let rows = params.grid.y;
    let cell = clamp(params.view.xy + in.uv * params.view.zw, vec2<f32>(0.0), vec2<f32>(columns, rows) - 0.5);
    var colour = params.background.rgb;
    // The bottom of each row stays background, so rows read as separate bars.
    if (fract(cell.y) < 1.0 - params.grid.z) {
        let t = clamp(textureLoad(cells, vec2<i32>(floor(cell)), 0).r, 0.0, 1.0);
        colour = mix(params.background.rgb, params.heat.rgb, t);
    }
    if (params.grid.w > 0.5) {
        colour = srgb_to_linear(colour);
    }
    return vec4<f32>(colour, 1.0);
}
