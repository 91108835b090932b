//! The checksum that ties an inspection graph to the weights file it shares with `model.onnx`.

use std::path::Path;

/// The checksum mav.json `inspection.weights` records for the file the graph reads its weights from: the
/// file padded with zeros to a multiple of 8 bytes, read as little-endian u64 words wᵢ, and Σ wᵢ·(2i + 1)
/// mod 2⁶⁴, as 16 hex digits (the same as `mavtrain.inspect_export.weights_checksum`).
/// The file is read in blocks, so memory stays small whatever its size.
pub fn weights_checksum(path: &Path) -> std::io::Result<String> {
    use std::io::Read;
    let mut file = std::io::BufReader::with_capacity(1 << 20, std::fs::File::open(path)?);
    let mut total = 0u64;
    let mut i = 0u64;
    let mut word = [0u8; 8];
    loop {
        // One word: up to 8 bytes (a short read is completed; the file's end pads with zeros).
        let mut got = 0;
        while got < 8 {
            match file.read(&mut word[got..])? {
                0 => break,
                n => got += n,
            }
        }
        if got == 0 {
            break;
        }
        word[got..].fill(0);
        let odd = i.wrapping_mul(2).wrapping_add(1);
        total = total.wrapping_add(u64::from_le_bytes(word).wrapping_mul(odd));
        i += 1;
        if got < 8 {
            break;
        }
    }
    Ok(format!("{total:016x}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn weights_checksum_weighs_each_word_by_its_place() {
        let path = std::env::temp_dir().join(format!("mavboard-checksum-{}", std::process::id()));
        // words 1 and 2 (the second padded with zeros): 1·1 + 2·3
        std::fs::write(&path, [1u8, 0, 0, 0, 0, 0, 0, 0, 2]).expect("writes");
        assert_eq!(weights_checksum(&path).expect("reads"), "0000000000000007");
        // the same words swapped: 2·1 + 1·3
        std::fs::write(&path, [2u8, 0, 0, 0, 0, 0, 0, 0, 1]).expect("writes");
        assert_eq!(weights_checksum(&path).expect("reads"), "0000000000000005");
        let _ = std::fs::remove_file(&path);
    }
}
