//! Why an lc0 weights file cannot be read.

/// An lc0 weights file that cannot be read or is of a kind not read here. Each message names the field or
/// the byte offset and what was expected.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Lc0Error {
    /// The file is not gzip, or its gzip stream is corrupt or cut short.
    #[error("not a readable gzip file: {0} (an lc0 network is a .pb.gz file)")]
    Gzip(String),
    /// The unpacked file is larger than any network this reader takes.
    #[error(
        "the file's {packed} bytes unpack to more than {limit}: refused before unpacking further (no network \
         compresses so well: a corrupt file or a gzip bomb)"
    )]
    TooLarge {
        /// The limit in bytes.
        limit: u64,
        /// The gzip stream's size in bytes.
        packed: u64,
    },
    /// The protobuf stream is malformed at this byte offset.
    #[error("corrupt protobuf at byte {offset} of {message}: {why}")]
    Wire {
        /// The message being read.
        message: &'static str,
        /// The byte offset within that message.
        offset: usize,
        /// What was wrong.
        why: &'static str,
    },
    /// The file's magic number is not lc0's.
    #[error("not an lc0 network: magic number {found:#x}, expected 0x1c0")]
    Magic {
        /// The magic number read.
        found: u32,
    },
    /// A field holds a value this reader does not know (a newer or different kind of network).
    #[error(
        "unsupported network: {field} = {value} ({what}); this mavboard reads residual networks (classical or \
         squeeze-excitation, classical or convolution policy, scalar or WDL value, moves-left) and attention-body \
         transformers with a dense position encoding or lc0's position table (Leela's BT family)"
    )]
    Unsupported {
        /// The protobuf field, as net.proto names it.
        field: &'static str,
        /// Its value.
        value: String,
        /// What it means.
        what: String,
    },
    /// A layer's size does not fit the network's shape.
    #[error("layer {layer}: {found} values, expected {expected}")]
    Shape {
        /// The layer, as net.proto names it.
        layer: String,
        /// Values expected.
        expected: usize,
        /// Values found.
        found: usize,
    },
    /// A layer's bytes are not a whole number of values of its encoding.
    #[error("layer {layer}: {bytes} bytes is not a whole number of {encoding} values")]
    Encoding {
        /// The layer.
        layer: String,
        /// The byte count.
        bytes: usize,
        /// The encoding's name.
        encoding: &'static str,
    },
    /// A required part of the network is missing.
    #[error("the network has no {0}")]
    Missing(String),
    /// The network needs a newer lc0 than the reader follows.
    #[error("the network needs lc0 {version} or newer (min_version); this reader follows lc0 0.32")]
    TooNew {
        /// The version the file asks for.
        version: String,
    },
}
