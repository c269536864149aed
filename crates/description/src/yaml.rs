//! YAML reading shared by the workcell and sphere files: serde-saphyr,
//! with the key path, line and column of the first error.

/// Why a YAML document could not be read into its type.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{key}{}: {message}", location(*.line, *.column))]
pub struct YamlError {
    /// Key path of the problem, e.g. `manipulators[0].joints`
    /// (`(document)` for the document as a whole).
    pub key: String,
    /// 1-based line, where the parser knows it.
    pub line: Option<u64>,
    /// 1-based column, where the parser knows it.
    pub column: Option<u64>,
    /// The parser's message.
    pub message: String,
}

fn location(line: Option<u64>, column: Option<u64>) -> String {
    match (line, column) {
        (Some(l), Some(c)) => format!(" (line {l}, column {c})"),
        (Some(l), None) => format!(" (line {l})"),
        _ => String::new(),
    }
}

/// Parses YAML into `T`.
pub fn parse_yaml<T: serde::de::DeserializeOwned>(text: &str) -> Result<T, YamlError> {
    let mut path = String::new();
    serde_saphyr::with_deserializer_from_str(text, |de| {
        serde_path_to_error::deserialize(de).map_err(|e| {
            path = e.path().to_string();
            e.into_inner()
        })
    })
    .map_err(|e| {
        let at = e.location();
        YamlError {
            key: if path.is_empty() || path == "." { "(document)".into() } else { path },
            line: at.map(|l| l.line()),
            column: at.map(|l| l.column()),
            message: e.to_string(),
        }
    })
}
