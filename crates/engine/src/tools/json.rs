//! A JSON tree that keeps its keys in the order they were written, so a
//! generated schema is byte for byte what clients have always been sent
//! (serde_json's map sorts its keys).

use crate::errors::js_number;

/// An ordered JSON value.
#[derive(Debug, Clone, PartialEq)]
pub enum Json {
    /// `true` / `false`.
    Bool(bool),
    /// A finite number, written as JavaScript writes it.
    Num(f64),
    /// A string.
    Str(String),
    /// An array.
    Arr(Vec<Json>),
    /// An object, keys in insertion order.
    Obj(Vec<(String, Json)>),
}

impl Json {
    /// An object from `(key, value)` pairs.
    pub fn obj<K: Into<String>>(pairs: impl IntoIterator<Item = (K, Json)>) -> Json {
        Json::Obj(pairs.into_iter().map(|(k, v)| (k.into(), v)).collect())
    }

    /// A string value.
    pub fn str(s: impl Into<String>) -> Json {
        Json::Str(s.into())
    }

    /// An array of strings.
    pub fn strs<S: AsRef<str>>(items: &[S]) -> Json {
        Json::Arr(items.iter().map(|s| Json::str(s.as_ref())).collect())
    }

    /// Compact text, as `JSON.stringify(value)` writes it.
    pub fn compact(&self) -> String {
        let mut out = String::new();
        self.write(&mut out, None, 0);
        out
    }

    /// Indented text, as `JSON.stringify(value, null, 2)` writes it.
    pub fn pretty(&self) -> String {
        let mut out = String::new();
        self.write(&mut out, Some(2), 0);
        out
    }

    fn write(&self, out: &mut String, indent: Option<usize>, depth: usize) {
        let newline = |out: &mut String, depth: usize| {
            if let Some(n) = indent {
                out.push('\n');
                out.push_str(&" ".repeat(n * depth));
            }
        };
        match self {
            Json::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
            Json::Num(n) => out.push_str(&js_number(*n)),
            Json::Str(s) => out.push_str(&quote(s)),
            Json::Arr(items) if items.is_empty() => out.push_str("[]"),
            Json::Obj(pairs) if pairs.is_empty() => out.push_str("{}"),
            Json::Arr(items) => {
                out.push('[');
                for (i, item) in items.iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    newline(out, depth + 1);
                    item.write(out, indent, depth + 1);
                }
                newline(out, depth);
                out.push(']');
            }
            Json::Obj(pairs) => {
                out.push('{');
                for (i, (k, v)) in pairs.iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    newline(out, depth + 1);
                    out.push_str(&quote(k));
                    out.push(':');
                    if indent.is_some() {
                        out.push(' ');
                    }
                    v.write(out, indent, depth + 1);
                }
                newline(out, depth);
                out.push('}');
            }
        }
    }
}

/// A JSON string literal (serde_json escapes as `JSON.stringify` does for
/// the text a schema holds).
pub fn quote(s: &str) -> String {
    serde_json::Value::String(s.to_string()).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_keep_their_order_and_numbers_print_as_javascript_prints_them() {
        let v = Json::obj([
            ("z", Json::Num(200000.0)),
            ("a", Json::Arr(vec![Json::Bool(true), Json::str("é\"…")])),
            ("m", Json::obj::<&str>([])),
        ]);
        assert_eq!(v.compact(), r#"{"z":200000,"a":[true,"é\"…"],"m":{}}"#);
        assert_eq!(
            v.pretty(),
            "{\n  \"z\": 200000,\n  \"a\": [\n    true,\n    \"é\\\"…\"\n  ],\n  \"m\": {}\n}"
        );
    }
}
