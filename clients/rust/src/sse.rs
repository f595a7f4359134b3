//! Incremental `text/event-stream` decoding: strict UTF-8, LF / CRLF / CR line endings
//! (also when a CR and its LF arrive in different reads), a leading BOM dropped,
//! comments and non-`data` fields ignored, `data` lines joined with `\n`, a frame size
//! limit, and a frame dispatched on each blank line.
use crate::error::{codes, DriverError};

/// Largest frame: the bytes of its lines (field names and comments included,
/// line terminators and the BOM excluded).
pub const MAX_FRAME_BYTES: usize = 2_000_000;
const BOM: &[u8] = b"\xEF\xBB\xBF";

#[derive(Default)]
pub struct SseDecoder {
    /// Bytes seen before the BOM decision (at most 3).
    start: Option<Vec<u8>>,
    /// An incomplete UTF-8 sequence at the end of the last read.
    utf8_tail: Vec<u8>,
    line: Vec<u8>,
    after_cr: bool,
    frame_bytes: usize,
    data: Option<String>,
}

fn too_large() -> DriverError {
    DriverError::new(codes::RESPONSE_TOO_LARGE, format!("an event frame exceeds {MAX_FRAME_BYTES} bytes"))
}

impl SseDecoder {
    pub fn new() -> Self {
        SseDecoder { start: Some(Vec::new()), ..Default::default() }
    }

    /// Feeds one read; returns the data of every frame it completed.
    pub fn feed(&mut self, chunk: &[u8], frames: &mut Vec<String>) -> Result<(), DriverError> {
        let mut bytes = chunk;
        let joined;
        if let Some(mut start) = self.start.take() {
            start.extend_from_slice(bytes);
            if start.len() < BOM.len() && BOM.starts_with(&start) {
                self.start = Some(start);
                return Ok(());
            }
            let skip = if start.starts_with(BOM) { BOM.len() } else { 0 };
            joined = start;
            bytes = &joined[skip..];
        }
        self.check_utf8(bytes)?;
        while !bytes.is_empty() {
            if self.after_cr && bytes[0] == b'\n' {
                bytes = &bytes[1..];
            }
            self.after_cr = false;
            match bytes.iter().position(|&b| b == b'\n' || b == b'\r') {
                Some(end) => {
                    self.append(&bytes[..end])?;
                    self.after_cr = bytes[end] == b'\r';
                    bytes = &bytes[end + 1..];
                    self.end_line(frames)?;
                }
                None => {
                    self.append(bytes)?;
                    bytes = &[];
                }
            }
        }
        Ok(())
    }

    /// The end of the body: a partial line or frame means the stream was cut off.
    pub fn finish(&mut self) -> Result<(), DriverError> {
        // A lone prefix of the BOM is an unfinished UTF-8 sequence too.
        if !self.utf8_tail.is_empty() || self.start.as_ref().is_some_and(|s| !s.is_empty()) {
            return Err(invalid_utf8());
        }
        if !self.line.is_empty() || self.data.is_some() {
            return Err(DriverError::new(codes::INCOMPLETE_STREAM, "the stream ends inside an event frame"));
        }
        Ok(())
    }

    /// Rejects invalid UTF-8 as soon as it arrives; a sequence split across reads waits.
    fn check_utf8(&mut self, bytes: &[u8]) -> Result<(), DriverError> {
        let joined;
        let bytes = if self.utf8_tail.is_empty() {
            bytes
        } else {
            joined = [std::mem::take(&mut self.utf8_tail).as_slice(), bytes].concat();
            &joined
        };
        match std::str::from_utf8(bytes) {
            Ok(_) => Ok(()),
            Err(e) if e.error_len().is_some() => Err(invalid_utf8()),
            Err(e) => {
                self.utf8_tail = bytes[e.valid_up_to()..].to_vec();
                Ok(())
            }
        }
    }

    fn append(&mut self, bytes: &[u8]) -> Result<(), DriverError> {
        if self.frame_bytes + self.line.len() + bytes.len() > MAX_FRAME_BYTES {
            return Err(too_large());
        }
        self.line.extend_from_slice(bytes);
        Ok(())
    }

    fn end_line(&mut self, frames: &mut Vec<String>) -> Result<(), DriverError> {
        let line = std::mem::take(&mut self.line);
        if line.is_empty() {
            self.frame_bytes = 0;
            frames.extend(self.data.take());
            return Ok(());
        }
        self.frame_bytes += line.len();
        // Lines end at ASCII bytes, so a line of a valid UTF-8 stream is valid UTF-8.
        let line = String::from_utf8(line).map_err(|_| invalid_utf8())?;
        // The field name ends at the first colon; a line without one is a field name with
        // an empty value, so a bare `data` line is an empty data line.
        let (field, value) = line.split_once(':').unwrap_or((&line, ""));
        if field == "data" {
            let value = value.strip_prefix(' ').unwrap_or(value);
            match &mut self.data {
                Some(data) => {
                    data.push('\n');
                    data.push_str(value);
                }
                None => self.data = Some(value.to_owned()),
            }
        }
        Ok(())
    }
}

fn invalid_utf8() -> DriverError {
    DriverError::new(codes::INVALID_STREAM, "the stream is not valid UTF-8")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn decode_in_pieces(body: &[u8], width: usize) -> Result<Vec<String>, DriverError> {
        let mut decoder = SseDecoder::new();
        let mut frames = Vec::new();
        for piece in body.chunks(width) {
            decoder.feed(piece, &mut frames)?;
        }
        decoder.finish()?;
        Ok(frames)
    }

    #[test]
    fn frames_survive_any_split_and_line_ending() {
        let text = "\u{feff}: comment\r\nid: 1\r\ndata: {\"a\":\r\ndata:\"🌍\"}\r\n\r\nevent: x\rdata: 2\r\rdata:3\n\n";
        for width in 1..=text.len() {
            let frames = decode_in_pieces(text.as_bytes(), width).unwrap();
            assert_eq!(frames, vec!["{\"a\":\n\"🌍\"}", "2", "3"], "width {width}");
        }
    }

    #[test]
    fn malformed_bodies_fail_with_their_codes() {
        let code = |body: &[u8]| decode_in_pieces(body, 3).unwrap_err().code;
        assert_eq!(code(b"data: \xFF\n\n"), codes::INVALID_STREAM);
        assert_eq!(code(b"data: \xF0\x9F"), codes::INVALID_STREAM);
        assert_eq!(code(b"data: {}"), codes::INCOMPLETE_STREAM);
        assert_eq!(code(b"data: {}\n"), codes::INCOMPLETE_STREAM);
        let mut big = b"data: ".to_vec();
        big.resize(MAX_FRAME_BYTES + 1, b'a');
        assert_eq!(code(&big), codes::RESPONSE_TOO_LARGE);
        let mut fits = b"data: ".to_vec();
        fits.resize(MAX_FRAME_BYTES, b'a');
        fits.extend_from_slice(b"\n\n");
        assert_eq!(decode_in_pieces(&fits, 65_536).unwrap().len(), 1);
    }
}
