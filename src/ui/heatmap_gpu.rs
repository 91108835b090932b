//! The moves × buckets heatmap drawn on the GPU: a WGSL shader (`shaders/heatmap.wgsl`) run through an
//! `egui_wgpu` paint callback. The probabilities go to the GPU as a one-channel float texture (a texel per
//! cell, packed by [`pack_heatmap`]); the colour map is in the shader.
//!
//! [`register`] puts the pipeline into the wgpu renderer's callback resources and marks the egui context,
//! so [`gpu_available`] tells the panel which path to take; without it (the glow renderer, or tests without
//! a renderer) [`super::distribution::heatmap_ui`] paints the cells with egui's painter instead. Both paths
//! use [`heat_intensity`], so they draw the same picture.
//!
//! One heatmap per frame: the pipeline keeps a single texture and uniform buffer.

use std::sync::Arc;

use eframe::egui::{self, Color32, Rect};
use eframe::egui_wgpu::{self, wgpu};

/// The shader's source.
pub const SHADER: &str = include_str!("../../shaders/heatmap.wgsl");

/// The most rows or columns the texture takes (WebGPU's guaranteed 2-D texture size); bigger grids are
/// painted by the fallback.
pub const MAX_SIDE: u32 = 2048;

/// How strongly a cell is coloured: its probability relative to the row's peak, square-rooted so small
/// probabilities stay visible; 0 for non-finite or non-positive input.
pub fn heat_intensity(p: f64, peak: f64) -> f32 {
    if !p.is_finite() || !peak.is_finite() || p <= 0.0 {
        return 0.0;
    }
    (p / peak.max(1e-9)).clamp(0.0, 1.0).sqrt() as f32
}

/// What goes to the GPU: one intensity per cell, row-major (a row per move, a column per bucket).
#[derive(Debug, Clone, PartialEq)]
pub struct HeatmapTexels {
    /// Columns: the most buckets of any row.
    pub columns: u32,
    /// Rows: one per move.
    pub rows: u32,
    /// `rows × columns` intensities in 0..1 ([`heat_intensity`]); shorter rows are padded with 0.
    pub values: Vec<f32>,
}

impl HeatmapTexels {
    /// The intensity of a cell (0 outside the grid).
    pub fn get(&self, row: u32, column: u32) -> f32 {
        if row >= self.rows || column >= self.columns {
            return 0.0;
        }
        self.values[(row * self.columns + column) as usize]
    }

    /// The texels as the bytes of an `R32Float` texture (native byte order, as the GPU reads them).
    fn bytes(&self) -> Vec<u8> {
        self.values.iter().flat_map(|v| v.to_ne_bytes()).collect()
    }
}

/// Packs the rows' probabilities for the GPU. `None` when there is nothing to draw or the grid is larger
/// than [`MAX_SIDE`] in either direction (the caller then paints it).
pub fn pack_heatmap(rows: &[&[f64]]) -> Option<HeatmapTexels> {
    let columns = rows.iter().map(|r| r.len()).max().unwrap_or(0);
    if rows.is_empty() || columns == 0 || columns > MAX_SIDE as usize || rows.len() > MAX_SIDE as usize {
        return None;
    }
    let mut values = Vec::with_capacity(rows.len() * columns);
    for probs in rows {
        let peak = probs.iter().copied().filter(|p| p.is_finite()).fold(0.0f64, f64::max);
        values.extend(probs.iter().map(|&p| heat_intensity(p, peak)));
        values.extend(std::iter::repeat_n(0.0, columns - probs.len()));
    }
    Some(HeatmapTexels { columns: columns as u32, rows: rows.len() as u32, values })
}

/// The uniform block of the shader (`Params` in heatmap.wgsl): four vec4s.
fn params_bytes(cb: &HeatmapCallback, linear_output: bool) -> Vec<u8> {
    let grid =
        [cb.texels.columns as f32, cb.texels.rows as f32, cb.gap, if linear_output { 1.0 } else { 0.0 }];
    [cb.background, cb.heat, grid, cb.view].iter().flatten().flat_map(|v| v.to_ne_bytes()).collect()
}

const PARAMS_SIZE: u64 = 4 * 16;

/// The pipeline and the buffers, kept in the renderer's callback resources.
struct HeatmapResources {
    pipeline: wgpu::RenderPipeline,
    layout: wgpu::BindGroupLayout,
    params: wgpu::Buffer,
    /// The texture of the last upload, its bind group and what it holds.
    cells: Option<(wgpu::Texture, wgpu::BindGroup, HeatmapTexels)>,
    linear_output: bool,
    prepared: u64,
}

impl HeatmapResources {
    fn new(device: &wgpu::Device, format: wgpu::TextureFormat, msaa_samples: u32) -> HeatmapResources {
        let module = device.create_shader_module(wgpu::ShaderModuleDescriptor {
            label: Some("mavboard heatmap"),
            source: wgpu::ShaderSource::Wgsl(SHADER.into()),
        });
        let layout = device.create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
            label: Some("mavboard heatmap"),
            entries: &[
                wgpu::BindGroupLayoutEntry {
                    binding: 0,
                    visibility: wgpu::ShaderStages::FRAGMENT,
                    ty: wgpu::BindingType::Buffer {
                        ty: wgpu::BufferBindingType::Uniform,
                        has_dynamic_offset: false,
                        min_binding_size: wgpu::BufferSize::new(PARAMS_SIZE),
                    },
                    count: None,
                },
                wgpu::BindGroupLayoutEntry {
                    binding: 1,
                    visibility: wgpu::ShaderStages::FRAGMENT,
                    ty: wgpu::BindingType::Texture {
                        sample_type: wgpu::TextureSampleType::Float { filterable: false },
                        view_dimension: wgpu::TextureViewDimension::D2,
                        multisampled: false,
                    },
                    count: None,
                },
            ],
        });
        let pipeline_layout = device.create_pipeline_layout(&wgpu::PipelineLayoutDescriptor {
            label: Some("mavboard heatmap"),
            bind_group_layouts: &[Some(&layout)],
            immediate_size: 0,
        });
        let pipeline = device.create_render_pipeline(&wgpu::RenderPipelineDescriptor {
            label: Some("mavboard heatmap"),
            layout: Some(&pipeline_layout),
            vertex: wgpu::VertexState {
                module: &module,
                entry_point: Some("vs_main"),
                compilation_options: wgpu::PipelineCompilationOptions::default(),
                buffers: &[],
            },
            fragment: Some(wgpu::FragmentState {
                module: &module,
                entry_point: Some("fs_main"),
                compilation_options: wgpu::PipelineCompilationOptions::default(),
                targets: &[Some(wgpu::ColorTargetState {
                    format,
                    blend: None,
                    write_mask: wgpu::ColorWrites::ALL,
                })],
            }),
            primitive: wgpu::PrimitiveState::default(),
            depth_stencil: None,
            multisample: wgpu::MultisampleState { count: msaa_samples.max(1), ..Default::default() },
            multiview_mask: None,
            cache: None,
        });
        let params = device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("mavboard heatmap params"),
            size: PARAMS_SIZE,
            usage: wgpu::BufferUsages::UNIFORM | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        });
        HeatmapResources {
            pipeline,
            layout,
            params,
            cells: None,
            linear_output: format.is_srgb(),
            prepared: 0,
        }
    }

    /// Uploads `texels` unless the texture already holds them (a new texture when the size changed).
    fn upload(&mut self, device: &wgpu::Device, queue: &wgpu::Queue, texels: &HeatmapTexels) {
        if self.cells.as_ref().is_some_and(|(_, _, held)| held == texels) {
            return;
        }
        let size = wgpu::Extent3d { width: texels.columns, height: texels.rows, depth_or_array_layers: 1 };
        let reuse = self.cells.take().filter(|(t, _, _)| t.size() == size);
        let (texture, bind_group) = match reuse {
            Some((t, g, _)) => (t, g),
            None => {
                let texture = device.create_texture(&wgpu::TextureDescriptor {
                    label: Some("mavboard heatmap cells"),
                    size,
                    mip_level_count: 1,
                    sample_count: 1,
                    dimension: wgpu::TextureDimension::D2,
                    format: wgpu::TextureFormat::R32Float,
                    usage: wgpu::TextureUsages::TEXTURE_BINDING | wgpu::TextureUsages::COPY_DST,
                    view_formats: &[],
                });
                let view = texture.create_view(&wgpu::TextureViewDescriptor::default());
                let bind_group = device.create_bind_group(&wgpu::BindGroupDescriptor {
                    label: Some("mavboard heatmap"),
                    layout: &self.layout,
                    entries: &[
                        wgpu::BindGroupEntry { binding: 0, resource: self.params.as_entire_binding() },
                        wgpu::BindGroupEntry {
                            binding: 1,
                            resource: wgpu::BindingResource::TextureView(&view),
                        },
                    ],
                });
                (texture, bind_group)
            }
        };
        queue.write_texture(
            texture.as_image_copy(),
            &texels.bytes(),
            wgpu::TexelCopyBufferLayout {
                offset: 0,
                bytes_per_row: Some(4 * texels.columns),
                rows_per_image: Some(texels.rows),
            },
            size,
        );
        self.cells = Some((texture, bind_group, texels.clone()));
    }
}

/// One frame's heatmap: the packed cells, the colours and the visible part of the grid.
struct HeatmapCallback {
    texels: Arc<HeatmapTexels>,
    background: [f32; 4],
    heat: [f32; 4],
    /// The share of a row's height left as a gap.
    gap: f32,
    /// The visible part of the grid in cells (x, y, width, height).
    view: [f32; 4],
}

impl egui_wgpu::CallbackTrait for HeatmapCallback {
    fn prepare(
        &self,
        device: &wgpu::Device,
        queue: &wgpu::Queue,
        _screen: &egui_wgpu::ScreenDescriptor,
        _encoder: &mut wgpu::CommandEncoder,
        resources: &mut egui_wgpu::CallbackResources,
    ) -> Vec<wgpu::CommandBuffer> {
        if let Some(r) = resources.get_mut::<HeatmapResources>() {
            r.upload(device, queue, &self.texels);
            queue.write_buffer(&r.params, 0, &params_bytes(self, r.linear_output));
            r.prepared += 1;
        }
        Vec::new()
    }

    fn paint(
        &self,
        _info: egui::PaintCallbackInfo,
        pass: &mut wgpu::RenderPass<'static>,
        resources: &egui_wgpu::CallbackResources,
    ) {
        let Some(r) = resources.get::<HeatmapResources>() else { return };
        let Some((_, bind_group, _)) = r.cells.as_ref() else { return };
        pass.set_pipeline(&r.pipeline);
        pass.set_bind_group(0, bind_group, &[]);
        pass.draw(0..3, 0..1);
    }
}

fn marker() -> egui::Id {
    egui::Id::unique("mavboard_heatmap_gpu")
}

/// Sets up the shader path on a wgpu renderer: builds the pipeline for its target (`msaa_samples` as the
/// renderer was configured; 1 for eframe's default) and tells `ctx` that the heatmap can use it.
pub fn register(render_state: &egui_wgpu::RenderState, msaa_samples: u32, ctx: &egui::Context) {
    let resources = HeatmapResources::new(&render_state.device, render_state.target_format, msaa_samples);
    render_state.renderer.write().callback_resources.insert(resources);
    ctx.data_mut(|d| d.insert_temp(marker(), true));
}

/// Whether [`register`] set up the shader path for this context.
pub fn gpu_available(ctx: &egui::Context) -> bool {
    ctx.data(|d| d.get_temp::<bool>(marker())).unwrap_or(false)
}

/// How many frames the shader path has prepared on this renderer (`None` when it is not registered):
/// lets tests see that the GPU path, not the fallback, drew the heatmap.
pub fn prepared_frames(render_state: &egui_wgpu::RenderState) -> Option<u64> {
    render_state.renderer.read().callback_resources.get::<HeatmapResources>().map(|r| r.prepared)
}

fn rgba(c: Color32) -> [f32; 4] {
    let [r, g, b, a] = c.to_srgba_unmultiplied();
    [r as f32 / 255.0, g as f32 / 255.0, b as f32 / 255.0, a as f32 / 255.0]
}

/// Adds the shader-drawn cells of `texels` to `painter` over `grid` (the whole grid, of which the painter's
/// clip rectangle shows a part). Rows are `row_height` points, with a one-point gap.
pub fn paint_cells(
    painter: &egui::Painter,
    grid: Rect,
    texels: HeatmapTexels,
    background: Color32,
    heat: Color32,
    row_height: f32,
) {
    let visible = grid.intersect(painter.clip_rect());
    if !visible.is_positive() {
        return;
    }
    let cell_w = grid.width() / texels.columns as f32;
    let view = [
        (visible.left() - grid.left()) / cell_w,
        (visible.top() - grid.top()) / row_height,
        visible.width() / cell_w,
        visible.height() / row_height,
    ];
    let callback = HeatmapCallback {
        texels: Arc::new(texels),
        background: rgba(background),
        heat: rgba(heat),
        gap: (1.0 / row_height).clamp(0.0, 0.5),
        view,
    };
    painter.add(egui_wgpu::Callback::new_paint_callback(visible, callback));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn intensity_is_relative_to_the_row_peak_and_square_rooted() {
        assert_eq!(heat_intensity(0.5, 0.5), 1.0);
        assert!((heat_intensity(0.25, 1.0) - 0.5).abs() < 1e-6);
        assert_eq!(heat_intensity(0.0, 1.0), 0.0);
        assert_eq!(heat_intensity(f64::NAN, 1.0), 0.0);
        assert_eq!(heat_intensity(-0.1, 1.0), 0.0);
        assert_eq!(heat_intensity(0.3, 0.0), 1.0);
    }

    #[test]
    fn packing_is_row_major_with_ragged_rows_padded() {
        let a = [0.0, 0.25, 1.0];
        let b = [0.5, 0.5];
        let t = pack_heatmap(&[&a, &b]).expect("something to draw");
        assert_eq!((t.columns, t.rows), (3, 2));
        assert_eq!(t.values, vec![0.0, 0.5, 1.0, 1.0, 1.0, 0.0]);
        assert_eq!(t.get(0, 2), 1.0);
        assert_eq!(t.get(1, 2), 0.0);
        assert_eq!(t.get(5, 0), 0.0);
        // 4 bytes per texel, in the order of the values.
        let bytes = t.bytes();
        assert_eq!(bytes.len(), 24);
        assert_eq!(&bytes[8..12], &1.0f32.to_ne_bytes());
    }

    #[test]
    fn packing_refuses_nothing_and_too_much() {
        assert!(pack_heatmap(&[]).is_none());
        assert!(pack_heatmap(&[&[]]).is_none());
        let wide = vec![0.1; MAX_SIDE as usize + 1];
        assert!(pack_heatmap(&[&wide]).is_none());
        let row = [1.0];
        let tall: Vec<&[f64]> = vec![&row; MAX_SIDE as usize + 1];
        assert!(pack_heatmap(&tall).is_none());
    }

    #[test]
    fn non_finite_probabilities_do_not_spoil_the_row() {
        let t = pack_heatmap(&[&[f64::NAN, 0.4, f64::INFINITY, 0.1]]).expect("drawn");
        assert_eq!(t.values[0], 0.0);
        assert_eq!(t.values[1], 1.0);
        assert_eq!(t.values[2], 0.0);
        assert!((t.values[3] - 0.5).abs() < 1e-6);
    }

    #[test]
    fn the_uniform_block_matches_the_shader_layout() {
        let texels = pack_heatmap(&[&[0.2, 0.8]]).expect("drawn");
        let cb = HeatmapCallback {
            texels: Arc::new(texels),
            background: [0.1, 0.2, 0.3, 1.0],
            heat: [0.4, 0.5, 0.6, 1.0],
            gap: 0.25,
            view: [0.0, 0.0, 2.0, 1.0],
        };
        let bytes = params_bytes(&cb, true);
        assert_eq!(bytes.len() as u64, PARAMS_SIZE);
        let f = |i: usize| {
            f32::from_ne_bytes([bytes[4 * i], bytes[4 * i + 1], bytes[4 * i + 2], bytes[4 * i + 3]])
        };
        assert_eq!([f(8), f(9), f(10), f(11)], [2.0, 1.0, 0.25, 1.0]);
        assert_eq!([f(12), f(14)], [0.0, 2.0]);
        // The shader declares the same four vec4 fields.
        let params =
            SHADER.split("struct Params {").nth(1).and_then(|r| r.split("};").next()).expect("Params");
        assert_eq!(params.matches(": vec4<f32>,").count(), 4);
    }
}
