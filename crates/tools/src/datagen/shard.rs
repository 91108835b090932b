//! Shards: zstd-compressed JSON-lines files of records, written atomically.

use std::io::Write;
use std::path::{Path, PathBuf};

use super::DatagenError;
use super::record::LabelRecord;

/// The zstd level used for shards (a good size/speed balance for JSON text).
pub const ZSTD_LEVEL: i32 = 9;

/// The file name of shard `index`: `shard-00042.jsonl.zst`.
pub fn shard_file_name(index: usize) -> String {
    format!("shard-{index:05}.jsonl.zst")
}

/// Writes `bytes` to `path` so that readers see either the old file or the complete new one: a temporary
/// file beside it is written, flushed to disk, then renamed over it.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<(), DatagenError> {
    let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let tmp: PathBuf = path.with_file_name(format!(".{name}.tmp"));
    let write = || -> std::io::Result<()> {
        let mut f = std::fs::File::create(&tmp)?;
        f.write_all(bytes)?;
        f.sync_all()
    };
    write().map_err(|e| DatagenError::io(&tmp, e))?;
    std::fs::rename(&tmp, path).map_err(|e| DatagenError::io(path, e))
}

/// Encodes records as zstd-compressed JSON lines.
pub fn encode_records(records: &[LabelRecord]) -> Result<Vec<u8>, DatagenError> {
    let mut text = Vec::new();
    for r in records {
        serde_json::to_writer(&mut text, r)
            .map_err(|e| DatagenError::Settings(format!("a record cannot be written as JSON: {e}")))?;
        text.push(b'\n');
    }
    zstd::encode_all(&text[..], ZSTD_LEVEL).map_err(|e| DatagenError::io("(zstd encoder)", e))
}

/// Writes shard `index` into `dir` atomically; returns its size in bytes.
pub fn write_shard(dir: &Path, index: usize, records: &[LabelRecord]) -> Result<u64, DatagenError> {
    let bytes = encode_records(records)?;
    write_atomic(&dir.join(shard_file_name(index)), &bytes)?;
    Ok(bytes.len() as u64)
}

/// Reads a shard back.
pub fn read_shard(path: &Path) -> Result<Vec<LabelRecord>, DatagenError> {
    let compressed = std::fs::read(path).map_err(|e| DatagenError::io(path, e))?;
    let corrupt = |reason: String| DatagenError::Corrupt { path: path.to_path_buf(), reason };
    let text = zstd::decode_all(&compressed[..]).map_err(|e| corrupt(format!("not valid zstd data: {e}")))?;
    let text = String::from_utf8(text).map_err(|_| corrupt("not UTF-8 text".into()))?;
    text.lines()
        .enumerate()
        .map(|(i, line)| serde_json::from_str(line).map_err(|e| corrupt(format!("line {}: {e}", i + 1))))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::datagen::record::{MoveLabel, Split};
    use crate::datagen::score::LabelScore;

    #[test]
    fn shards_round_trip_and_leave_no_temp_file() {
        let dir = std::env::temp_dir().join(format!("mavboard-shard-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("temp dir");
        let records: Vec<LabelRecord> = (0..3)
            .map(|i| LabelRecord {
                game: crate::datagen::record::LabelGame::Chess,
                fen: format!("8/8/8/8/8/8/k7/K{i}6 w - - 0 1"),
                chess960: i == 1,
                moves: vec![MoveLabel { uci: "a1b1".into(), score: LabelScore::Cp(i) }],
                best: "a1b1".into(),
                depth: 6,
                nodes: 10,
                source: "t".into(),
                ply: 0,
                split: Split::Train,
                search_path: Vec::new(),
            })
            .collect();
        let size = write_shard(&dir, 3, &records).expect("written");
        let path = dir.join("shard-00003.jsonl.zst");
        assert_eq!(std::fs::metadata(&path).expect("exists").len(), size);
        assert_eq!(read_shard(&path).expect("reads"), records);
        let names: Vec<String> = std::fs::read_dir(&dir)
            .expect("dir")
            .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
            .collect();
        assert_eq!(names, ["shard-00003.jsonl.zst"]);
        std::fs::write(&path, b"garbage").expect("overwrite");
        assert!(matches!(read_shard(&path), Err(DatagenError::Corrupt { .. })));
        let _ = std::fs::remove_dir_all(&dir);
    }
}
