//! What a terminal showed, as the text a reader sees: a console host (a
//! Windows pseudo console) renders the screen with escape sequences around
//! the text and may skip a run of spaces with a cursor move.

/// What a pseudo console showed, as text: escape sequences dropped, a
/// cursor move right read as the spaces it skips (a console host renders
/// runs of spaces that way).
pub fn screen_text(raw: &[u8]) -> String {
    let s = String::from_utf8_lossy(raw);
    let mut out = String::new();
    let mut chars = s.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '\u{1b}' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('[') => {
                let mut params = String::new();
                for p in chars.by_ref() {
                    if ('@'..='~').contains(&p) {
                        if p == 'C' {
                            let n = params.parse().unwrap_or(1);
                            out.extend(std::iter::repeat_n(' ', n));
                        }
                        break;
                    }
                    params.push(p);
                }
            }
            Some(']') => {
                while let Some(p) = chars.next() {
                    if p == '\u{7}' || (p == '\u{1b}' && chars.next_if_eq(&'\\').is_some()) {
                        break;
                    }
                }
            }
            _ => {}
        }
    }
    out
}
