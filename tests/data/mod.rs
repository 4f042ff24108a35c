//! Where the public frame-time captures are: `../shared/data` beside the
//! checkout (CI clones the repo next to `shared/`).

use std::path::{Path, PathBuf};

/// The folder of the shared captures.
pub fn data_dir() -> PathBuf {
    // The checkout's top folder, whichever crate of the workspace the test
    // belongs to.
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .ancestors()
        .find(|d| d.join("layer-manifest").is_dir())
        .expect("the test runs inside the checkout")
        .join("../shared/data")
}

/// One shared capture by file name.
#[allow(dead_code)]
pub fn shared_data(name: &str) -> PathBuf {
    data_dir().join(name)
}
