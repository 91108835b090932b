//! One tag pair as a line of PGN: how the writer writes it, how long that line is, and the longest line the
//! readers take (so that a game the reader accepts is written into text it reads again).

/// The longest tag line (in bytes, its newline included) the readers take, and the longest a game they
/// read is written with.
pub const TAG_LINE_BYTES: usize = 4096;

/// Writes one tag pair so that it reads back: the name as a PGN symbol (ASCII letters, digits and
/// `_+#=:-`; any other character becomes `_`, an empty name is `_`), the value as a one-line PGN string (`"` and `\`
/// escaped, control characters such as a newline, which would end the tag, written as spaces). A reader
/// that kept such characters from a broken file would otherwise write a tag that breaks the whole game.
pub(super) fn push_tag(text: &mut String, name: &str, value: &str) {
    text.push('[');
    if name.is_empty() {
        text.push('_');
    }
    for c in name.chars() {
        // Found by the `pgn` fuzz target: a name with `*` or `(` in it (read from a broken file) was
        // written as a tag that read back as two games.
        let symbol = c.is_ascii_alphanumeric() || matches!(c, '_' | '+' | '#' | '=' | ':' | '-');
        text.push(if symbol { c } else { '_' });
    }
    text.push_str(" \"");
    for c in value.chars() {
        if c == '"' || c == '\\' {
            text.push('\\');
        }
        text.push(if c.is_control() { ' ' } else { c });
    }
    text.push_str("\"]\n");
}

/// The bytes [`push_tag`] writes for one tag pair, its newline included (the reader refuses a tag that
/// would be written longer than [`TAG_LINE_BYTES`], so that what it reads writes back into
/// text it reads again).
pub(super) fn written_tag_len(name: &str, value: &str) -> usize {
    let name_len = if name.is_empty() { 1 } else { name.chars().count() };
    let value_len: usize = value
        .chars()
        .map(|c| usize::from(c == '"' || c == '\\') + if c.is_control() { 1 } else { c.len_utf8() })
        .sum();
    "[ \"\"]\n".len() + name_len + value_len
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_written_length_of_a_tag_is_what_is_written() {
        for (name, value) in [
            ("Event", "plain"),
            ("", ""),
            ("Wh\u{e9}te*", "a \"quoted\" \\ value\nwith a newline \u{fffd}\u{1} and \u{e9}"),
            ("X", &"\u{fffd}".repeat(100)),
        ] {
            let mut text = String::new();
            push_tag(&mut text, name, value);
            assert_eq!(written_tag_len(name, value), text.len(), "{name:?} {value:?}");
        }
    }
}
