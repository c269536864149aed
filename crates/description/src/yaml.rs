//! YAML reading shared by the workcell and sphere files: serde-saphyr
//! with the key path of the first error.

/// Parses YAML into `T`, reporting `(key path, message)` on failure.
pub fn parse_yaml<T: serde::de::DeserializeOwned>(text: &str) -> Result<T, (String, String)> {
    let mut path = String::new();
    serde_saphyr::with_deserializer_from_str(text, |de| {
        serde_path_to_error::deserialize(de).map_err(|e| {
            path = e.path().to_string();
            e.into_inner()
        })
    })
    .map_err(|e| (if path.is_empty() || path == "." { "(document)".into() } else { path }, e.to_string()))
}
