//! Resolving the file references that URDFs and workcell files contain.
//!
//! `package://PKG/rest` (also the non-standard `package:///PKG/rest` that some
//! published URDFs carry) resolves, in this order:
//! 1. through the ament index: for each prefix in `AMENT_PREFIX_PATH`, when
//!    `PREFIX/share/ament_index/resource_index/packages/PKG` exists, to
//!    `PREFIX/share/PKG/rest`;
//! 2. relative to the file that names it: the nearest ancestor folder of that
//!    file which is the package itself (a `package.xml` naming `PKG`, or a
//!    folder called `PKG`), as in a source checkout or a `share/` tree.
//!
//! `file:///abs/path` and absolute paths are taken as they are; any other
//! relative path is relative to the folder of the file that names it.

use std::env;
use std::fs;
use std::path::{Path, PathBuf};

/// A reference that could not be resolved.
#[derive(Debug, thiserror::Error, Clone, PartialEq)]
#[non_exhaustive]
pub enum ResolveError {
    /// `package://PKG/…` where no ament prefix and no ancestor holds `PKG`.
    #[error("package `{package}` of `{uri}` was found neither in AMENT_PREFIX_PATH nor in a folder above {referrer}")]
    PackageNotFound {
        /// The whole URI.
        uri: String,
        /// The package name.
        package: String,
        /// The file that names the URI.
        referrer: PathBuf,
    },
    /// A URI scheme other than `package://` and `file://`.
    #[error("unsupported URI scheme in `{uri}` (use package://, file:// or a path)")]
    UnsupportedScheme {
        /// The whole URI.
        uri: String,
    },
    /// The resolved path does not exist.
    #[error("`{uri}` resolves to {path}, which does not exist")]
    Missing {
        /// The whole URI.
        uri: String,
        /// Where it pointed.
        path: PathBuf,
    },
}

/// Resolves `uri` as named in the file `referrer`, and checks the result exists.
pub fn resolve(uri: &str, referrer: &Path) -> Result<PathBuf, ResolveError> {
    let path = resolve_unchecked(uri, referrer)?;
    if path.exists() { Ok(path) } else { Err(ResolveError::Missing { uri: uri.to_string(), path }) }
}

/// Resolves `uri` without checking that the result exists.
pub fn resolve_unchecked(uri: &str, referrer: &Path) -> Result<PathBuf, ResolveError> {
    if let Some(rest) = uri.strip_prefix("package://") {
        let rest = rest.trim_start_matches('/');
        let (package, inner) = rest.split_once('/').unwrap_or((rest, ""));
        let root = package_share_dir(package).or_else(|| package_root_above(package, referrer)).ok_or_else(|| {
            ResolveError::PackageNotFound {
                uri: uri.to_string(),
                package: package.to_string(),
                referrer: referrer.to_path_buf(),
            }
        })?;
        return Ok(root.join(inner));
    }
    if let Some(rest) = uri.strip_prefix("file://") {
        return Ok(PathBuf::from(rest));
    }
    if let Some((scheme, _)) = uri.split_once("://")
        && scheme.chars().all(|c| c.is_ascii_alphanumeric())
    {
        return Err(ResolveError::UnsupportedScheme { uri: uri.to_string() });
    }
    let p = Path::new(uri);
    if p.is_absolute() { Ok(p.to_path_buf()) } else { Ok(referrer.parent().unwrap_or(Path::new(".")).join(p)) }
}

/// `PREFIX/share/PKG` for the first prefix in `AMENT_PREFIX_PATH` whose ament
/// index lists `PKG`.
pub fn package_share_dir(package: &str) -> Option<PathBuf> {
    package_share_dir_in(&env::var_os("AMENT_PREFIX_PATH")?, package)
}

/// [`package_share_dir`] over an explicit prefix list (`:`-separated).
pub fn package_share_dir_in(prefixes: &std::ffi::OsStr, package: &str) -> Option<PathBuf> {
    env::split_paths(prefixes).find_map(|prefix| {
        let marker = prefix.join("share/ament_index/resource_index/packages").join(package);
        marker.is_file().then(|| prefix.join("share").join(package))
    })
}

/// The nearest ancestor of `referrer` that is the package `package`: a folder
/// whose `package.xml` names it, or a folder of that name.
pub fn package_root_above(package: &str, referrer: &Path) -> Option<PathBuf> {
    let start = referrer.canonicalize().unwrap_or_else(|_| referrer.to_path_buf());
    start.ancestors().skip(1).find_map(|dir| {
        let named = dir.file_name().is_some_and(|n| n == package);
        let manifest =
            fs::read_to_string(dir.join("package.xml")).ok().is_some_and(|xml| manifest_names(&xml, package));
        (named || manifest).then(|| dir.to_path_buf())
    })
}

fn manifest_names(xml: &str, package: &str) -> bool {
    xml.split("<name>").nth(1).and_then(|s| s.split("</name>").next()).is_some_and(|n| n.trim() == package)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn package_uri_resolves_to_the_checkout_that_names_the_package() {
        let here = Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../..")).join("urdf/wg_arm6.urdf");
        let p = resolve_unchecked("package://workcell_guard/urdf/meshes/x.stl", &here).unwrap();
        assert_eq!(
            p,
            Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../..")).canonicalize().unwrap().join("urdf/meshes/x.stl")
        );
    }

    #[test]
    fn triple_slash_package_uri_is_accepted() {
        let dir = tempfile::tempdir().unwrap();
        let pkg = dir.path().join("my_pkg/urdf");
        fs::create_dir_all(&pkg).unwrap();
        let urdf = pkg.join("r.urdf");
        fs::write(&urdf, "").unwrap();
        let p = resolve_unchecked("package:///my_pkg/meshes/a.STL", &urdf).unwrap();
        assert!(p.ends_with("my_pkg/meshes/a.STL"), "{p:?}");
    }

    #[test]
    fn the_ament_index_finds_a_package_share_directory() {
        let dir = tempfile::tempdir().unwrap();
        let (a, b) = (dir.path().join("ws_a/install"), dir.path().join("ws_b/install"));
        fs::create_dir_all(a.join("share/ament_index/resource_index/packages")).unwrap();
        fs::create_dir_all(b.join("share/ament_index/resource_index/packages")).unwrap();
        fs::create_dir_all(b.join("share/cell_pkg/urdf")).unwrap();
        fs::write(b.join("share/ament_index/resource_index/packages/cell_pkg"), "").unwrap();
        let prefixes = env::join_paths([&a, &b]).unwrap();
        assert_eq!(package_share_dir_in(&prefixes, "cell_pkg"), Some(b.join("share/cell_pkg")));
        // A share folder without its index marker is not a package.
        fs::create_dir_all(a.join("share/other_pkg")).unwrap();
        assert_eq!(package_share_dir_in(&prefixes, "other_pkg"), None);
    }

    #[test]
    fn unknown_package_is_an_error_naming_it() {
        let dir = tempfile::tempdir().unwrap();
        let urdf = dir.path().join("r.urdf");
        let e = resolve("package://no_such_pkg/a.stl", &urdf).unwrap_err();
        assert!(matches!(e, ResolveError::PackageNotFound { ref package, .. } if package == "no_such_pkg"));
    }

    #[test]
    fn relative_paths_are_relative_to_the_naming_file() {
        let p = resolve_unchecked("meshes/a.obj", Path::new("/x/y/r.urdf")).unwrap();
        assert_eq!(p, Path::new("/x/y/meshes/a.obj"));
        assert!(matches!(
            resolve_unchecked("http://example.invalid/a.stl", Path::new("/r.urdf")),
            Err(ResolveError::UnsupportedScheme { .. })
        ));
    }
}
