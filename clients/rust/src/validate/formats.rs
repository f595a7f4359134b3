//! String formats and patterns of the wire schemas, written out by hand so the crate
//! needs no regex engine. Each function says which schema rule it implements.

/// RFC 3339 `date-time` as JSON Schema validators check it: a real calendar date,
/// `T`/`t`/space separator, a time zone (`Z` or an offset), leap seconds only at 23:59 UTC.
pub fn is_date_time(s: &str) -> bool {
    let mut parts = s.split(['T', 't', ' ', '\t', '\n', '\r', '\u{b}', '\u{c}']);
    match (parts.next(), parts.next(), parts.next()) {
        (Some(date), Some(time), None) => is_date(date) && is_time(time),
        _ => false,
    }
}

fn digits(s: &str) -> Option<u32> {
    if s.is_empty() || !s.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    s.parse().ok()
}

fn is_date(s: &str) -> bool {
    let b = s.as_bytes();
    if b.len() != 10 || b[4] != b'-' || b[7] != b'-' {
        return false;
    }
    let (Some(year), Some(month), Some(day)) = (digits(&s[0..4]), digits(&s[5..7]), digits(&s[8..10])) else {
        return false;
    };
    let leap = year % 4 == 0 && (year % 100 != 0 || year % 400 == 0);
    let days = match month {
        1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
        4 | 6 | 9 | 11 => 30,
        2 if leap => 29,
        2 => 28,
        _ => return false,
    };
    (1..=days).contains(&day)
}

fn is_time(s: &str) -> bool {
    let b = s.as_bytes();
    if b.len() < 9 || b[2] != b':' || b[5] != b':' {
        return false;
    }
    let (Some(hour), Some(minute)) = (digits(&s[0..2]), digits(&s[3..5])) else {
        return false;
    };
    let rest = &s[6..];
    let zone_at = rest.find(['z', 'Z', '+', '-']).unwrap_or(rest.len());
    let (seconds_text, zone) = rest.split_at(zone_at);
    let (whole, fraction) = match seconds_text.split_once('.') {
        Some((w, f)) => (w, Some(f)),
        None => (seconds_text, None),
    };
    if whole.len() != 2 || fraction.is_some_and(|f| f.is_empty() || !f.bytes().all(|b| b.is_ascii_digit())) {
        return false;
    }
    let Some(second) = digits(whole) else { return false };
    let (sign, zone_hour, zone_minute) = match zone.as_bytes() {
        [b'z' | b'Z'] => (1i64, 0, 0),
        [sign @ (b'+' | b'-'), h1, h2, tail @ ..] => {
            let Some(h) = digits(std::str::from_utf8(&[*h1, *h2]).unwrap_or("x")) else { return false };
            let minutes = match tail {
                [] => Some(0),
                [b':', m1, m2] | [m1, m2] => digits(std::str::from_utf8(&[*m1, *m2]).unwrap_or("x")),
                _ => None,
            };
            let Some(m) = minutes else { return false };
            (if *sign == b'-' { -1 } else { 1 }, h, m)
        }
        _ => return false,
    };
    if zone_hour > 23 || zone_minute > 59 {
        return false;
    }
    if hour <= 23 && minute <= 59 && second < 60 {
        return true;
    }
    // A leap second is valid only at 23:59:60 UTC.
    let utc_minute = minute as i64 - zone_minute as i64 * sign;
    let utc_hour = hour as i64 - zone_hour as i64 * sign - i64::from(utc_minute < 0);
    (utc_hour == 23 || utc_hour == -1) && (utc_minute == 59 || utc_minute == -1) && second < 61
}

/// Host-stamped timestamps: `YYYY-MM-DDTHH:MM:SS.mmmZ` and a valid date-time.
pub fn is_host_timestamp(s: &str) -> bool {
    let b = s.as_bytes();
    b.len() == 24 && b[19] == b'.' && b[23] == b'Z' && b[20..23].iter().all(u8::is_ascii_digit) && b[10] == b'T' && is_date_time(s)
}

fn is_hex(s: &str, len: usize, upper_too: bool) -> bool {
    s.len() == len && s.bytes().all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b) || (upper_too && (b'A'..=b'F').contains(&b)))
}

fn is_uuid_shape(s: &str, upper_too: bool) -> bool {
    let groups: Vec<&str> = s.split('-').collect();
    groups.len() == 5 && groups.iter().zip([8, 4, 4, 4, 12]).all(|(g, n)| is_hex(g, n, upper_too))
}

/// `^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$`
pub fn is_lower_uuid(s: &str) -> bool {
    is_uuid_shape(s, false)
}

/// JSON Schema `format: uuid` (case-insensitive, optional `urn:uuid:` prefix).
pub fn is_uuid_format(s: &str) -> bool {
    let body = if s.len() >= 9 && s[..9].eq_ignore_ascii_case("urn:uuid:") { &s[9..] } else { s };
    is_uuid_shape(body, true)
}

/// `^[0-9a-fA-F]{8}-(?:[0-9a-fA-F]{4}-){3}[0-9a-fA-F]{12}$` (session bindings).
pub fn is_uuid_shape_any_case(s: &str) -> bool {
    is_uuid_shape(s, true)
}

/// `^[A-Za-z0-9+/]*={0,2}$`
pub fn is_base64(s: &str) -> bool {
    let body = s.trim_end_matches('=');
    s.len() - body.len() <= 2 && body.bytes().all(|c| c.is_ascii_alphanumeric() || c == b'+' || c == b'/')
}

/// `\S`: at least one character that is not white space.
pub fn has_non_space(s: &str) -> bool {
    s.chars().any(|c| !is_js_whitespace(c))
}

/// `^[0-9a-f]{64}$`
pub fn is_sha256(s: &str) -> bool {
    is_hex(s, 64, false)
}

/// A first character from `first`, then up to `max_rest` characters from `rest`.
fn is_identifier(s: &str, first: fn(u8) -> bool, rest: fn(u8) -> bool, max_rest: usize) -> bool {
    let b = s.as_bytes();
    !b.is_empty() && first(b[0]) && b.len() - 1 <= max_rest && b[1..].iter().all(|&c| rest(c))
}

/// `^[a-zA-Z0-9][a-zA-Z0-9._-]{0,79}$`
pub fn is_provider_id(s: &str) -> bool {
    is_identifier(s, |c| c.is_ascii_alphanumeric(), |c| c.is_ascii_alphanumeric() || b"._-".contains(&c), 79)
}

/// `^[a-zA-Z0-9][a-zA-Z0-9._:/\[\]-]{0,199}$`
pub fn is_model_id(s: &str) -> bool {
    is_identifier(s, |c| c.is_ascii_alphanumeric(), |c| c.is_ascii_alphanumeric() || b"._:/[]-".contains(&c), 199)
}

/// `^[a-zA-Z0-9][a-zA-Z0-9._:/-]{0,199}$` (an index descriptor's embedding model).
pub fn is_embedding_model(s: &str) -> bool {
    is_identifier(s, |c| c.is_ascii_alphanumeric(), |c| c.is_ascii_alphanumeric() || b"._:/-".contains(&c), 199)
}

/// `^[a-zA-Z_][a-zA-Z0-9_]{0,63}$`
pub fn is_tool_name(s: &str) -> bool {
    is_identifier(s, |c| c.is_ascii_alphabetic() || c == b'_', |c| c.is_ascii_alphanumeric() || c == b'_', 63)
}

/// `^[a-zA-Z][a-zA-Z0-9._-]{0,79}$`
pub fn is_capability_name(s: &str) -> bool {
    is_identifier(s, |c| c.is_ascii_alphabetic(), |c| c.is_ascii_alphanumeric() || b"._-".contains(&c), 79)
}

/// `^[a-zA-Z0-9][a-zA-Z0-9._:-]{0,127}$` (source ids, revisions, corpora, chunk ids).
pub fn is_opaque_key(s: &str) -> bool {
    is_identifier(s, |c| c.is_ascii_alphanumeric(), |c| c.is_ascii_alphanumeric() || b"._:-".contains(&c), 127)
}

/// Artifact names: `^[^/\\\u0000-\u001f]+$`, and never `.` or `..`.
pub fn is_artifact_name(s: &str) -> bool {
    !s.is_empty() && !s.chars().any(|c| c == '/' || c == '\\' || (c as u32) < 0x20)
}

/// Source URIs: `^(https|app)://\S+$` (display only, never fetched).
pub fn is_source_uri(s: &str) -> bool {
    let rest = s.strip_prefix("https://").or_else(|| s.strip_prefix("app://"));
    rest.is_some_and(|r| !r.is_empty() && !r.chars().any(is_js_whitespace))
}

/// JavaScript's `\s`.
fn is_js_whitespace(c: char) -> bool {
    c.is_whitespace() || c == '\u{feff}'
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn date_times_follow_rfc3339_with_real_dates() {
        for ok in [
            "2026-09-20T12:00:00.000Z",
            "2026-09-20t12:00:00z",
            "2024-02-29T00:00:00+05:30",
            "2026-09-20 12:00:00-0800",
            "2026-12-31T23:59:60Z",
            "2026-09-20T12:00:00.123456789+01",
        ] {
            assert!(is_date_time(ok), "{ok}");
        }
        for bad in [
            "yesterday",
            "2026-02-30T00:00:00Z",
            "2026-09-31T12:00:00.000Z",
            "2026-09-20T12:00:00",
            "2026-09-20T24:00:00Z",
            "2026-09-20T12:00:60Z",
            "2026-09-20T12:00:00.Z",
            "2026-09-20T12:00:00+24:00",
            "2026-09-20TT12:00:00Z",
        ] {
            assert!(!is_date_time(bad), "{bad}");
        }
        assert!(is_host_timestamp("2026-09-20T12:00:00.000Z"));
        assert!(!is_host_timestamp("2026-09-20T12:00:00Z"));
    }

    #[test]
    fn identifiers_follow_their_patterns() {
        assert!(is_model_id("native-model[1m]") && !is_model_id("bad model"));
        assert!(is_embedding_model("BAAI/bge-small-en-v1.5") && is_embedding_model("nomic-embed-text:v1.5"));
        assert!(!is_embedding_model("model[1m]") && !is_embedding_model("/leading") && !is_embedding_model(&"m".repeat(201)));
        assert!(is_provider_id("mock") && !is_provider_id("invalid space") && !is_provider_id(""));
        assert!(is_tool_name("lookup") && !is_tool_name("bad/name") && !is_tool_name("9x"));
        assert!(is_lower_uuid("12345678-1234-4234-8234-123456789abc") && !is_lower_uuid("invalid"));
        assert!(is_uuid_format("URN:UUID:12345678-1234-4234-8234-123456789ABC"));
        assert!(is_source_uri("https://example.test/a") && !is_source_uri("http://example.test") && !is_source_uri("https://a b"));
        assert!(is_artifact_name("review.md") && !is_artifact_name("../accepted.md"));
    }
}
