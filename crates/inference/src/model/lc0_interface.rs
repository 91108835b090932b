//! The graph interface of an `lc0` package: its input (the 112 plane masks and the fifty-move count, int64)
//! and outputs (`policy`, `wdl`, `mlh`), and the nodes that unpack the masks into lc0's float planes and turn
//! a scalar value into win/draw/loss — shared by the importer that writes a network's graph
//! ([`super::lc0_import`]) and the one that wraps an ONNX export ([`super::lc0_onnx`]).

use super::onnx_write::{Attr, GraphBuilder};
use crate::lc0::InputFormat;
use crate::lc0::planes::{PLANES, RULE50_PLANE};

/// The graph's input: 112 masks and the fifty-move count per row.
pub const INPUT: &str = "planes";
/// Its width.
pub const INPUT_WIDTH: usize = PLANES + 1;
/// The policy logits output.
pub const POLICY: &str = "policy";
/// The win/draw/loss output.
pub const WDL: &str = "wdl";
/// The moves-left output.
pub const MLH: &str = "mlh";

/// The graph's first part: `[batch, 113]` int64 → `[batch, 112, 8, 8]` float, each mask's bits times its
/// plane's value (1, but the fifty-move count on plane 109). Only operators of opset 11 and later are used
/// (bit `s` is isolated by shifting it to the top and back down), so that the network behind it may be one
/// exported at any opset from 11 on.
pub fn unpack_planes(g: &mut GraphBuilder, input: &str, format: InputFormat) -> String {
    let axis = g.i64s("axis1", &[1], &[1]);
    let (zero, split, end) = (
        g.i64s("z", &[1], &[0]),
        g.i64s("p", &[1], &[PLANES as i64]),
        g.i64s("e", &[1], &[INPUT_WIDTH as i64]),
    );
    let masks = g.op("Slice", &[input, &zero, &split, &axis], vec![]);
    let rule50 = g.op("Slice", &[input, &split, &end, &axis], vec![]);
    let unsigned = g.op("Cast", &[&masks], vec![Attr::Int("to", 13)]);
    let column_shape = g.i64s("column", &[3], &[-1, PLANES as i64, 1]);
    let column = g.op("Reshape", &[&unsigned, &column_shape], vec![]);
    let to_top: Vec<u64> = (0..64).map(|s| 63 - s).collect();
    let to_top = g.u64s("to_top", &[64], &to_top);
    let top = g.op("BitShift", &[&column, &to_top], vec![Attr::Str("direction", "LEFT")]);
    let down = g.u64s("down", &[1], &[63]);
    let bits = g.op("BitShift", &[&top, &down], vec![Attr::Str("direction", "RIGHT")]);
    let bits = g.op("Cast", &[&bits], vec![Attr::Int("to", 1)]);
    let mut r = g.op("Cast", &[&rule50], vec![Attr::Int("to", 1)]);
    if format.hectoplies() {
        let hundred = g.f32s("hundred", &[1], &[100.0]);
        r = g.op("Div", &[&r, &hundred], vec![]);
    }
    let mut onehot = vec![0.0f32; PLANES];
    onehot[RULE50_PLANE] = 1.0;
    let rest: Vec<f32> = onehot.iter().map(|v| 1.0 - v).collect();
    let onehot = g.f32s("rule50_plane", &[1, PLANES as i64], &onehot);
    let rest = g.f32s("other_planes", &[1, PLANES as i64], &rest);
    let scaled = g.op("Mul", &[&r, &onehot], vec![]);
    let scale = g.op("Add", &[&scaled, &rest], vec![]);
    let scale = g.op("Reshape", &[&scale, &column_shape], vec![]);
    let x = g.op("Mul", &[&bits, &scale], vec![]);
    let shape = g.i64s("planes_shape", &[4], &[-1, PLANES as i64, 8, 8]);
    g.op("Reshape", &[&x, &shape], vec![])
}

/// A scalar value `q` in [-1, 1], `[batch, 1]`, as win/draw/loss `((1+q)/2, 0, (1−q)/2)`, `[batch, 3]`.
pub fn q_to_wdl(g: &mut GraphBuilder, q: &str) -> String {
    let m = g.f32s("q_to_wdl", &[1, 3], &[0.5, 0.0, -0.5]);
    let c = g.f32s("q_to_wdl_c", &[1, 3], &[0.5, 0.0, 0.5]);
    let qm = g.op("MatMul", &[q, &m], vec![]);
    g.op("Add", &[&qm, &c], vec![])
}
