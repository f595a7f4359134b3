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
    /// With [`with_ids`](SseDecoder::with_ids): the `id` field of the frame being read,
    /// and that of every completed frame, in order.
    id: Option<String>,
    ids: Option<std::collections::VecDeque<Option<String>>>,
}

fn too_large() -> DriverError {
    DriverError::new(codes::RESPONSE_TOO_LARGE, format!("an event frame exceeds {MAX_FRAME_BYTES} bytes"))
}

impl SseDecoder {
    pub fn new() -> Self {
        SseDecoder { start: Some(Vec::new()), ..Default::default() }
    }

    /// A decoder that also keeps each frame's `id` field (see [`next_id`](Self::next_id)).
    pub fn with_ids() -> Self {
        SseDecoder { ids: Some(Default::default()), ..Self::new() }
    }

    /// The `id` field of the oldest completed frame not asked about yet (`Some(None)`
    /// when it had none); frames and ids come in the same order.
    pub fn next_id(&mut self) -> Option<Option<String>> {
        self.ids.as_mut()?.pop_front()
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
            match find_line_end(bytes) {
                Some(end) => {
                    self.after_cr = bytes[end] == b'\r';
                    if self.line.is_empty() {
                        // The whole line is in this read: no copy.
                        if self.frame_bytes + end > MAX_FRAME_BYTES {
                            return Err(too_large());
                        }
                        self.end_line(&bytes[..end], frames)?;
                    } else {
                        self.append(&bytes[..end])?;
                        let mut line = std::mem::take(&mut self.line);
                        self.end_line(&line, frames)?;
                        line.clear();
                        self.line = line;
                    }
                    bytes = &bytes[end + 1..];
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

    fn end_line(&mut self, line: &[u8], frames: &mut Vec<String>) -> Result<(), DriverError> {
        if line.is_empty() {
            self.frame_bytes = 0;
            let id = self.id.take();
            if let Some(data) = self.data.take() {
                frames.push(data);
                if let Some(ids) = &mut self.ids {
                    ids.push_back(id);
                }
            }
            return Ok(());
        }
        self.frame_bytes += line.len();
        // check_utf8 has seen every byte, and lines end at ASCII bytes, so only the kept
        // value is turned into a str. The field name ends at the first colon; a line
        // without one is a field name with an empty value, so a bare `data` line is an
        // empty data line.
        if self.ids.is_some() {
            if let Some(value) = if line == b"id" { Some(&b""[..]) } else { line.strip_prefix(b"id:") } {
                let value = value.strip_prefix(b" ").unwrap_or(value);
                self.id = Some(std::str::from_utf8(value).map_err(|_| invalid_utf8())?.to_owned());
                return Ok(());
            }
        }
        let data_value = if line == b"data" { Some(&b""[..]) } else { line.strip_prefix(b"data:") };
        if let Some(value) = data_value {
            let value = value.strip_prefix(b" ").unwrap_or(value);
            let value = std::str::from_utf8(value).map_err(|_| invalid_utf8())?;
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

/// The index of the first CR or LF: eight bytes at a time, then byte by byte in the word
/// that holds one.
fn find_line_end(bytes: &[u8]) -> Option<usize> {
    const LO: u64 = 0x0101_0101_0101_0101;
    const HI: u64 = 0x8080_8080_8080_8080;
    let mut i = 0;
    while i + 8 <= bytes.len() {
        let word = u64::from_le_bytes(bytes[i..i + 8].try_into().expect("eight bytes"));
        let lf = word ^ (LO * u64::from(b'\n'));
        let cr = word ^ (LO * u64::from(b'\r'));
        if ((lf.wrapping_sub(LO) & !lf) | (cr.wrapping_sub(LO) & !cr)) & HI != 0 {
            break;
        }
        i += 8;
    }
    bytes[i..].iter().position(|&b| b == b'\n' || b == b'\r').map(|p| p + i)
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

    /// The decoder benchmark (bench/decoders.ts): decodes the recorded stream named by
    /// AD_SSE_BENCH_FILE in 64 KiB reads and prints MB/s. Run in release mode:
    /// `AD_SSE_BENCH_FILE=… cargo test --release --lib -- --ignored --nocapture sse_throughput`.
    #[test]
    #[ignore]
    fn sse_throughput() {
        let path = std::env::var("AD_SSE_BENCH_FILE").expect("AD_SSE_BENCH_FILE");
        let body = std::fs::read(path).unwrap();
        let rounds: usize = std::env::var("AD_SSE_BENCH_ROUNDS").ok().and_then(|r| r.parse().ok()).unwrap_or(5);
        for _ in 0..rounds {
            let started = std::time::Instant::now();
            let mut decoder = SseDecoder::new();
            let mut frames = Vec::new();
            let mut count = 0usize;
            for piece in body.chunks(65_536) {
                decoder.feed(piece, &mut frames).unwrap();
                count += frames.len();
                frames.clear();
            }
            decoder.finish().unwrap();
            let seconds = started.elapsed().as_secs_f64();
            println!("AD_SSE_BENCH {{\"frames\":{count},\"mbPerS\":{:.1}}}", body.len() as f64 / 1e6 / seconds);
        }
    }

    #[test]
    fn frame_ids_are_kept_in_order_when_asked_for() {
        let text = b"id: 1\ndata: a\n\nid: 7\n\ndata: b\n\nid:3\r\ndata: c\r\n\r\n";
        for width in 1..=text.len() {
            let mut decoder = SseDecoder::with_ids();
            let mut frames = Vec::new();
            for piece in text.chunks(width) {
                decoder.feed(piece, &mut frames).unwrap();
            }
            assert_eq!(frames, ["a", "b", "c"]);
            let ids: Vec<_> = std::iter::from_fn(|| decoder.next_id()).collect();
            // The id of a frame without data is dropped with it.
            assert_eq!(ids, [Some("1".to_owned()), None, Some("3".to_owned())], "width {width}");
        }
        let mut plain = SseDecoder::new();
        plain.feed(b"id: 1\ndata: a\n\n", &mut Vec::new()).unwrap();
        assert_eq!(plain.next_id(), None);
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
