//! Writing an ONNX model from Rust: a small graph builder (initializers, nodes, inputs, outputs) and the
//! protobuf encoding of `onnx.ModelProto` (field numbers of ONNX's `onnx.proto`). Used by the importers that
//! build a graph themselves rather than run an exporter (the lc0 importer).

/// An element type of a tensor (`TensorProto.DataType`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ElemType {
    /// 32-bit float (1).
    F32,
    /// 64-bit signed integer (7).
    I64,
    /// 64-bit unsigned integer (13).
    U64,
}

impl ElemType {
    fn code(self) -> u64 {
        match self {
            ElemType::F32 => 1,
            ElemType::I64 => 7,
            ElemType::U64 => 13,
        }
    }
}

/// A dimension of a graph input or output: fixed, or named (the batch).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Dim {
    /// A fixed size.
    Fixed(i64),
    /// A symbolic size, e.g. "batch".
    Named(&'static str),
}

/// A node attribute.
#[derive(Debug, Clone, PartialEq)]
pub enum Attr {
    /// An integer.
    Int(&'static str, i64),
    /// A list of integers.
    Ints(&'static str, Vec<i64>),
    /// A float.
    Float(&'static str, f32),
    /// A string.
    Str(&'static str, &'static str),
}

/// Protobuf encoding, written.
#[derive(Default)]
struct Buf(Vec<u8>);

impl Buf {
    fn varint(&mut self, mut v: u64) {
        while v >= 0x80 {
            self.0.push((v as u8) | 0x80);
            v >>= 7;
        }
        self.0.push(v as u8);
    }
    fn key(&mut self, field: u32, wire: u8) {
        self.varint((u64::from(field) << 3) | u64::from(wire));
    }
    fn int(&mut self, field: u32, v: i64) {
        self.key(field, 0);
        self.varint(v as u64);
    }
    fn bytes(&mut self, field: u32, b: &[u8]) {
        self.key(field, 2);
        self.varint(b.len() as u64);
        self.0.extend_from_slice(b);
    }
    fn f32(&mut self, field: u32, v: f32) {
        self.key(field, 5);
        self.0.extend_from_slice(&v.to_le_bytes());
    }
    fn msg(&mut self, field: u32, m: Buf) {
        self.bytes(field, &m.0);
    }
}

struct Node {
    op: &'static str,
    inputs: Vec<String>,
    outputs: Vec<String>,
    attrs: Vec<Attr>,
}

struct Initializer {
    name: String,
    elem: ElemType,
    dims: Vec<i64>,
    raw: Vec<u8>,
}

struct Io {
    name: String,
    elem: ElemType,
    dims: Vec<Dim>,
}

/// A node of the graph: built here, or copied as its encoded `NodeProto` from another model.
enum GraphNode {
    Built(Node),
    Raw(Vec<u8>),
}

/// A graph being built: every value is named by a string the builder returns.
#[derive(Default)]
pub struct GraphBuilder {
    nodes: Vec<GraphNode>,
    initializers: Vec<Initializer>,
    raw_initializers: Vec<Vec<u8>>,
    raw_value_info: Vec<Vec<u8>>,
    inputs: Vec<Io>,
    outputs: Vec<Io>,
    counter: usize,
    prefix: String,
}

impl GraphBuilder {
    /// An empty graph.
    pub fn new() -> GraphBuilder {
        GraphBuilder::default()
    }

    /// An empty graph whose generated value names all start with `prefix` (so that they cannot meet the
    /// names of a graph spliced in with [`GraphBuilder::raw_node`]).
    pub fn with_prefix(prefix: &str) -> GraphBuilder {
        GraphBuilder { prefix: prefix.to_owned(), ..GraphBuilder::default() }
    }

    fn fresh(&mut self, hint: &str) -> String {
        self.counter += 1;
        format!("{}{hint}_{}", self.prefix, self.counter)
    }

    /// Appends a node copied from another model: its encoded `NodeProto`, as written (nodes run in the order
    /// they are added).
    pub fn raw_node(&mut self, node: &[u8]) {
        self.nodes.push(GraphNode::Raw(node.to_vec()));
    }

    /// Adds an initializer copied from another model: its encoded `TensorProto`.
    pub fn raw_initializer(&mut self, tensor: &[u8]) {
        self.raw_initializers.push(tensor.to_vec());
    }

    /// Adds a shape hint copied from another model: its encoded `ValueInfoProto`.
    pub fn raw_value_info(&mut self, info: &[u8]) {
        self.raw_value_info.push(info.to_vec());
    }

    /// A node with one named output: `op(inputs) → output` (for renaming a value to a name another part of
    /// the graph expects).
    pub fn op_named(&mut self, op: &'static str, inputs: &[&str], output: &str, attrs: Vec<Attr>) {
        self.nodes.push(GraphNode::Built(Node {
            op,
            inputs: inputs.iter().map(|s| (*s).to_owned()).collect(),
            outputs: vec![output.to_owned()],
            attrs,
        }));
    }

    /// Declares a graph input.
    pub fn input(&mut self, name: &str, elem: ElemType, dims: Vec<Dim>) -> String {
        self.inputs.push(Io { name: name.to_owned(), elem, dims });
        name.to_owned()
    }

    /// Declares `value` a graph output named `name` (an Identity node renames it).
    pub fn output(&mut self, value: &str, name: &str, elem: ElemType, dims: Vec<Dim>) {
        self.op_named("Identity", &[value], name, vec![]);
        self.outputs.push(Io { name: name.to_owned(), elem, dims });
    }

    /// A float constant.
    pub fn f32s(&mut self, hint: &str, dims: &[i64], data: &[f32]) -> String {
        let name = self.fresh(hint);
        let raw = data.iter().flat_map(|v| v.to_le_bytes()).collect();
        self.initializers.push(Initializer {
            name: name.clone(),
            elem: ElemType::F32,
            dims: dims.to_vec(),
            raw,
        });
        name
    }

    /// A 64-bit integer constant.
    pub fn i64s(&mut self, hint: &str, dims: &[i64], data: &[i64]) -> String {
        let name = self.fresh(hint);
        let raw = data.iter().flat_map(|v| v.to_le_bytes()).collect();
        self.initializers.push(Initializer {
            name: name.clone(),
            elem: ElemType::I64,
            dims: dims.to_vec(),
            raw,
        });
        name
    }

    /// An unsigned 64-bit integer constant.
    pub fn u64s(&mut self, hint: &str, dims: &[i64], data: &[u64]) -> String {
        let name = self.fresh(hint);
        let raw = data.iter().flat_map(|v| v.to_le_bytes()).collect();
        self.initializers.push(Initializer {
            name: name.clone(),
            elem: ElemType::U64,
            dims: dims.to_vec(),
            raw,
        });
        name
    }

    /// A node with one output; returns the output's name.
    pub fn op(&mut self, op: &'static str, inputs: &[&str], attrs: Vec<Attr>) -> String {
        let out = self.fresh(op);
        self.op_named(op, inputs, &out, attrs);
        out
    }

    /// The model's bytes: ONNX IR version 8, the default domain at `opset`.
    pub fn finish(self, opset: i64, producer: &str, doc: &str) -> Vec<u8> {
        self.finish_with(8, &[(String::new(), opset)], producer, doc)
    }

    /// The model's bytes at IR version `ir_version`, importing each `(domain, version)` of `opsets`.
    pub fn finish_with(
        self,
        ir_version: i64,
        opsets: &[(String, i64)],
        producer: &str,
        doc: &str,
    ) -> Vec<u8> {
        let mut graph = Buf::default();
        for n in &self.nodes {
            let n = match n {
                GraphNode::Raw(bytes) => {
                    graph.bytes(1, bytes);
                    continue;
                }
                GraphNode::Built(n) => n,
            };
            let mut node = Buf::default();
            for i in &n.inputs {
                node.bytes(1, i.as_bytes());
            }
            for o in &n.outputs {
                node.bytes(2, o.as_bytes());
            }
            node.bytes(3, n.outputs[0].as_bytes());
            node.bytes(4, n.op.as_bytes());
            for a in &n.attrs {
                node.msg(5, attribute(a));
            }
            graph.msg(1, node);
        }
        graph.bytes(2, b"lc0");
        for t in &self.initializers {
            let mut tensor = Buf::default();
            for d in &t.dims {
                tensor.int(1, *d);
            }
            tensor.int(2, t.elem.code() as i64);
            tensor.bytes(8, t.name.as_bytes());
            tensor.bytes(9, &t.raw);
            graph.msg(5, tensor);
        }
        for t in &self.raw_initializers {
            graph.bytes(5, t);
        }
        graph.bytes(10, doc.as_bytes());
        for i in &self.inputs {
            graph.msg(11, value_info(i));
        }
        for o in &self.outputs {
            graph.msg(12, value_info(o));
        }
        for v in &self.raw_value_info {
            graph.bytes(13, v);
        }
        let mut model = Buf::default();
        model.int(1, ir_version);
        model.bytes(2, producer.as_bytes());
        model.bytes(3, env!("CARGO_PKG_VERSION").as_bytes());
        model.msg(7, graph);
        for (domain, version) in opsets {
            let mut opset_id = Buf::default();
            opset_id.bytes(1, domain.as_bytes());
            opset_id.int(2, *version);
            model.msg(8, opset_id);
        }
        model.0
    }
}

fn attribute(a: &Attr) -> Buf {
    let mut b = Buf::default();
    match a {
        Attr::Int(name, v) => {
            b.bytes(1, name.as_bytes());
            b.int(3, *v);
            b.int(20, 2);
        }
        Attr::Ints(name, v) => {
            b.bytes(1, name.as_bytes());
            for x in v {
                b.int(8, *x);
            }
            b.int(20, 7);
        }
        Attr::Float(name, v) => {
            b.bytes(1, name.as_bytes());
            b.f32(2, *v);
            b.int(20, 1);
        }
        Attr::Str(name, v) => {
            b.bytes(1, name.as_bytes());
            b.bytes(4, v.as_bytes());
            b.int(20, 3);
        }
    }
    b
}

fn value_info(io: &Io) -> Buf {
    let mut shape = Buf::default();
    for d in &io.dims {
        let mut dim = Buf::default();
        match d {
            Dim::Fixed(v) => dim.int(1, *v),
            Dim::Named(n) => dim.bytes(2, n.as_bytes()),
        }
        shape.msg(1, dim);
    }
    let mut tensor = Buf::default();
    tensor.int(1, io.elem.code() as i64);
    tensor.msg(2, shape);
    let mut ty = Buf::default();
    ty.msg(1, tensor);
    let mut vi = Buf::default();
    vi.bytes(1, io.name.as_bytes());
    vi.msg(2, ty);
    vi
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn varints_and_a_small_graph_encode() {
        let mut b = Buf::default();
        b.varint(300);
        assert_eq!(b.0, vec![0xac, 0x02]);
        let mut g = GraphBuilder::new();
        let x = g.input("x", ElemType::F32, vec![Dim::Named("batch"), Dim::Fixed(2)]);
        let one = g.f32s("one", &[2], &[1.0, 1.0]);
        let y = g.op("Add", &[&x, &one], vec![]);
        g.output(&y, "y", ElemType::F32, vec![Dim::Named("batch"), Dim::Fixed(2)]);
        let bytes = g.finish(18, "test", "");
        // ir_version 8 first, then the producer.
        assert_eq!(&bytes[..2], &[0x08, 0x08]);
        assert!(bytes.windows(3).any(|w| w == b"Add"));
    }
}
