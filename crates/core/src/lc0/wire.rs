//! The protobuf wire format, read: a message is a sequence of (field number, wire type, value); varints,
//! 32- and 64-bit fixed values and length-delimited bytes (strings, bytes, nested messages, packed
//! repeated fields). Enough to read lc0's `Net` without generated code.

use super::error::Lc0Error;

/// One field's value as the wire carries it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Value<'a> {
    /// Wire type 0.
    Varint(u64),
    /// Wire type 1.
    Fixed64(u64),
    /// Wire type 2: bytes, a string, a nested message or a packed repeated field.
    Bytes(&'a [u8]),
    /// Wire type 5.
    Fixed32(u32),
}

/// The fields of one message, in the order written.
#[derive(Debug, Clone)]
pub struct Fields<'a> {
    buf: &'a [u8],
    pos: usize,
    message: &'static str,
}

impl<'a> Fields<'a> {
    /// The fields of the message in `buf`, named `message` in errors.
    pub fn new(buf: &'a [u8], message: &'static str) -> Fields<'a> {
        Fields { buf, pos: 0, message }
    }

    fn fail(&self, why: &'static str) -> Lc0Error {
        Lc0Error::Wire { message: self.message, offset: self.pos, why }
    }

    fn varint(&mut self) -> Result<u64, Lc0Error> {
        let mut value = 0u64;
        for shift in (0..70).step_by(7) {
            let Some(&byte) = self.buf.get(self.pos) else {
                return Err(self.fail("cut short inside a varint"));
            };
            self.pos += 1;
            if shift == 63 && byte > 1 {
                return Err(self.fail("a varint longer than 64 bits"));
            }
            value |= u64::from(byte & 0x7f) << shift;
            if byte & 0x80 == 0 {
                return Ok(value);
            }
        }
        Err(self.fail("a varint longer than 10 bytes"))
    }

    fn take(&mut self, n: usize) -> Result<&'a [u8], Lc0Error> {
        let end = self.pos.checked_add(n).filter(|e| *e <= self.buf.len());
        let Some(end) = end else {
            return Err(self.fail("a field runs past the end of its message"));
        };
        let bytes = &self.buf[self.pos..end];
        self.pos = end;
        Ok(bytes)
    }

    fn next_field(&mut self) -> Result<(u32, Value<'a>), Lc0Error> {
        let key = self.varint()?;
        let field = u32::try_from(key >> 3).map_err(|_| self.fail("a field number over 32 bits"))?;
        if field == 0 {
            return Err(self.fail("field number 0"));
        }
        let value = match key & 7 {
            0 => Value::Varint(self.varint()?),
            1 => {
                let b = self.take(8)?;
                Value::Fixed64(u64::from_le_bytes(b.try_into().map_err(|_| self.fail("fixed64"))?))
            }
            2 => {
                let len = self.varint()?;
                let len = usize::try_from(len).map_err(|_| self.fail("a length over the address space"))?;
                Value::Bytes(self.take(len)?)
            }
            5 => {
                let b = self.take(4)?;
                Value::Fixed32(u32::from_le_bytes(b.try_into().map_err(|_| self.fail("fixed32"))?))
            }
            3 | 4 => return Err(self.fail("a group (wire types 3 and 4 are not used by lc0)")),
            _ => return Err(self.fail("an unknown wire type")),
        };
        Ok((field, value))
    }
}

impl<'a> Iterator for Fields<'a> {
    type Item = Result<(u32, Value<'a>), Lc0Error>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.pos >= self.buf.len() {
            return None;
        }
        let item = self.next_field();
        if item.is_err() {
            // Stop after the first error: the rest cannot be framed.
            self.pos = self.buf.len();
        }
        Some(item)
    }
}

/// Appends the values of a repeated `uint32` field (packed or not) to `out`.
pub fn push_u32s(value: Value<'_>, out: &mut Vec<u32>, message: &'static str) -> Result<(), Lc0Error> {
    match value {
        Value::Varint(v) => out.push(u32::try_from(v).unwrap_or(u32::MAX)),
        Value::Bytes(b) => {
            let mut packed = Fields::new(b, message);
            while packed.pos < b.len() {
                let v = packed.varint()?;
                out.push(u32::try_from(v).unwrap_or(u32::MAX));
            }
        }
        _ => {
            return Err(Lc0Error::Wire {
                message,
                offset: 0,
                why: "a repeated uint32 of the wrong wire type",
            });
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_each_wire_type_and_stops_at_a_cut() {
        // field 1 varint 300, field 2 bytes "ab", field 3 fixed32 1.0f, field 4 fixed64 7
        let mut buf = vec![0x08, 0xac, 0x02, 0x12, 0x02, b'a', b'b', 0x1d];
        buf.extend_from_slice(&1.0f32.to_le_bytes());
        buf.push(0x21);
        buf.extend_from_slice(&7u64.to_le_bytes());
        let fields: Vec<_> = Fields::new(&buf, "test").collect::<Result<_, _>>().expect("valid");
        assert_eq!(
            fields,
            vec![
                (1, Value::Varint(300)),
                (2, Value::Bytes(b"ab")),
                (3, Value::Fixed32(1.0f32.to_bits())),
                (4, Value::Fixed64(7)),
            ]
        );
        let cut = &buf[..6];
        let err = Fields::new(cut, "test").find_map(Result::err).expect("an error");
        assert!(err.to_string().contains("runs past the end"), "{err}");
        let err = Fields::new(&[0x0b], "test").find_map(Result::err).expect("a group");
        assert!(err.to_string().contains("group"), "{err}");
        let err = Fields::new(&[0x08, 0xff], "test").find_map(Result::err).expect("cut varint");
        assert!(err.to_string().contains("varint"), "{err}");
    }

    #[test]
    fn packed_and_unpacked_repeated_fields() {
        let mut out = Vec::new();
        push_u32s(Value::Varint(5), &mut out, "t").expect("ok");
        push_u32s(Value::Bytes(&[1, 0x80, 0x01]), &mut out, "t").expect("ok");
        assert_eq!(out, vec![5, 1, 128]);
    }
}
