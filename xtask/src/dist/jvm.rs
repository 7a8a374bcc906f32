//! The JVM and Swift parts of `cargo xtask dist`: the Maven artifact (generated Kotlin
//! plus `libsvc_ffi.so` for linux-x86-64 and linux-aarch64 under JNA's resource paths,
//! POM, sources and javadoc jars) and the Swift package tag.

use std::path::Path;

use anyhow::{Result, bail};

/// Builds the JVM artifacts into `out` (`target/dist/`).
pub fn build(_root: &Path, _out: &Path) -> Result<()> {
    bail!("the JVM artifacts are not built yet")
}

/// Checks the JVM artifacts in `out`.
pub fn check(_root: &Path, _out: &Path) -> Result<()> {
    bail!("the JVM artifacts are not checked yet")
}
