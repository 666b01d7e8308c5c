//! Reading the CSV snapshot back: a strict RFC 4180 parser, so a test checks fields, not text.

/// RFC 4180: fields separated by commas, quoted fields may hold commas, quotes (doubled) and
/// line breaks; records end with a newline.
pub fn parse_csv(text: &str) -> Vec<Vec<String>> {
    let mut records = Vec::new();
    let mut record = Vec::new();
    let mut field = String::new();
    let mut chars = text.chars().peekable();
    let mut quoted = false;
    while let Some(c) = chars.next() {
        if quoted {
            match c {
                '"' if chars.peek() == Some(&'"') => {
                    chars.next();
                    field.push('"');
                }
                '"' => quoted = false,
                _ => field.push(c),
            }
        } else {
            match c {
                '"' => {
                    assert!(
                        field.is_empty(),
                        "a quote inside an unquoted field: {field:?}"
                    );
                    quoted = true;
                }
                ',' => record.push(std::mem::take(&mut field)),
                '\n' => {
                    record.push(std::mem::take(&mut field));
                    records.push(std::mem::take(&mut record));
                }
                _ => field.push(c),
            }
        }
    }
    assert!(!quoted, "unterminated quote");
    assert!(
        field.is_empty() && record.is_empty(),
        "the last record has no newline"
    );
    records
}
