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

/// Whether `c` may stand in a tag name: a PGN symbol's characters (ASCII letters, digits and `_+#=:-`),
/// the ones [`push_tag`] keeps.
pub(super) fn is_name_byte(c: u8) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, b'_' | b'+' | b'#' | b'=' | b':' | b'-')
}

/// For one line of text (without its newline): the length of the tag name it starts with when it is a
/// tag pair that lost its opening `[` (`Event "x"]`: a name, blanks, a quoted value, then `]` and nothing
/// but blanks), so that the readers take it as a broken tag line rather than as movetext; `None` otherwise.
pub(super) fn without_bracket(line: &[u8]) -> Option<usize> {
    let name = line.iter().position(|&c| !is_name_byte(c)).unwrap_or(line.len());
    let rest = &line[name..];
    let value = rest.trim_ascii_start();
    let fits = name > 0
        && value.len() < rest.len()
        && value.starts_with(b"\"")
        && value.trim_ascii_end().ends_with(b"]")
        && value[1..].contains(&b'"');
    fits.then_some(name)
}

/// Whether a line (from its `[`, without its newline) is the `Event` tag, which begins a new game even
/// after a game with no termination marker (the Seven Tag Roster puts it first).
pub(super) fn is_event_tag(line: &[u8]) -> bool {
    line.strip_prefix(b"[")
        .map(<[u8]>::trim_ascii_start)
        .and_then(|rest| rest.strip_prefix(b"Event"))
        .is_some_and(|rest| matches!(rest.first(), Some(b' ' | b'\t' | b'"')))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tag_lines_without_their_bracket_and_event_tags_are_recognised() {
        assert_eq!(without_bracket(b"Event \"Missing begin header character\"]"), Some(5));
        assert_eq!(without_bracket(b"Site \"a\"]  \r"), Some(4));
        for line in ["1. e4 e5", "Event", "Event \"x\"", "Nf3 \"a\"] e5", "\"x\"]", "e4 \"]"] {
            assert_eq!(without_bracket(line.as_bytes()), None, "{line}");
        }
        assert!(is_event_tag(b"[Event \"x\"]") && is_event_tag(b"[ Event\"x\"]"));
        assert!(!is_event_tag(b"[EventDate \"x\"]") && !is_event_tag(b"[Site \"x\"]"));
    }

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
