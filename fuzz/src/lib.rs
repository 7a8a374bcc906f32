//! Helpers shared by the fuzz targets.

use serde_json::Value;

/// Whether two JSON texts hold the same value (numbers compared exactly: the
/// workspace enables serde_json's `float_roundtrip`, so a float written and read back
/// is the same float).
pub fn same_json(a: &[u8], b: &[u8]) -> bool {
    match (
        serde_json::from_slice::<Value>(a),
        serde_json::from_slice::<Value>(b),
    ) {
        (Ok(a), Ok(b)) => a == b,
        _ => false,
    }
}

/// A folder of this process for the files a target writes: in memory (`/dev/shm`) where
/// there is one, since a disk's write-back would dominate each run's time.
pub fn scratch_dir(name: &str) -> std::path::PathBuf {
    let shm = std::path::Path::new("/dev/shm");
    let base = if shm.is_dir() {
        shm.to_path_buf()
    } else {
        std::env::temp_dir()
    };
    let dir = base.join(format!("svc-fuzz-{name}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("creating a scratch folder");
    dir
}
