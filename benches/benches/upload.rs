//! Group `upload_256MiB`: uploading one 256 MiB file to the emulator's object storage
//! through its pre-signed POST form, with `svc_core::transfer` (streamed from disk,
//! Content-Length, every field in order, `file` last) against `curl -F` sending the same
//! form to the same storage, in the same run. Throughput is reported by criterion; peak
//! memory is printed after the group:
//! - svc_core: the growth of this process's peak RSS (`VmHWM`, reset through
//!   `/proc/self/clear_refs`) during one upload — the client *and* the in-process storage;
//! - curl: the peak RSS of the curl process (`getrusage(RUSAGE_CHILDREN)`).
//!
//! Run with `cargo bench -p svc-benches --bench upload`. Under `cargo test` (no `--bench`
//! argument) it uploads 8 MiB once per function, as a smoke test.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use criterion::{Criterion, Throughput};
use svc_core::cloud::{
    ContainerFileType, ContainerRegion, CreateContainerFile, CreateContainerRequest, UploadInfo,
};
use svc_core::transfer::{TransferOptions, Transfers, UploadJob};

mod common;

use common::{children_peak_kib, storage_emulator, vm_kib};

fn write_file(path: &Path, size: u64) {
    use std::io::Write;
    let mut file = std::io::BufWriter::new(std::fs::File::create(path).expect("create the file"));
    let block: Vec<u8> = (0..1 << 20).map(|i| (i * 31 % 251) as u8).collect();
    let mut left = size;
    while left > 0 {
        let n = left.min(block.len() as u64) as usize;
        file.write_all(&block[..n]).expect("write the file");
        left -= n as u64;
    }
    file.flush().expect("flush the file");
}

fn curl_upload(info: &UploadInfo, path: &Path) -> bool {
    let mut command = Command::new("curl");
    command.args(["-sS", "-o", "/dev/null", "-w", "%{http_code}"]);
    for (k, v) in &info.fields {
        // `--form-string`: values are sent as they are (no `@`/`<` interpretation).
        command.arg("--form-string").arg(format!("{k}={v}"));
    }
    command
        .arg("-F")
        .arg(format!("file=@{}", path.display()))
        .arg(&info.url);
    match command.output() {
        Ok(out) => String::from_utf8_lossy(&out.stdout).trim() == "204",
        Err(_) => false,
    }
}

fn main() {
    let benching = std::env::args().any(|a| a == "--bench");
    let size: u64 = if benching { 256 << 20 } else { 8 << 20 };
    let runtime = tokio::runtime::Runtime::new().expect("a tokio runtime");
    let dir = tempfile::tempdir().expect("a temporary folder");
    let path: PathBuf = dir.path().join("survey.bin");
    write_file(&path, size);

    let (emulator, client) = storage_emulator(&runtime);
    let request = CreateContainerRequest {
        region: ContainerRegion::EuWest3,
        metadata: None,
        files: vec![CreateContainerFile {
            path: "survey.bin".into(),
            type_: ContainerFileType::Input,
            size: size as i64,
            metadata: None,
        }],
    };
    let container = runtime
        .block_on(client.create_container(request))
        .expect("a container");
    let upload_info = container.files[0]
        .upload_info
        .clone()
        .expect("a pending file has a form");
    let transfers = Transfers::new(reqwest::Client::new(), TransferOptions::default());
    let job = UploadJob {
        local_path: path.clone(),
        container_path: "survey.bin".into(),
        size,
        upload_info: upload_info.clone(),
    };
    let upload = |job: UploadJob| {
        runtime
            .block_on(async { transfers.upload(vec![job]).wait().await })
            .expect("the upload succeeds");
    };

    let curl_available = curl_upload(&upload_info, &path);
    let mut criterion = Criterion::default().configure_from_args();
    if benching {
        criterion = criterion
            .sample_size(10)
            .measurement_time(Duration::from_secs(40));
    }
    {
        let mut group = criterion.benchmark_group(if benching {
            "upload_256MiB"
        } else {
            "upload_8MiB"
        });
        group.throughput(Throughput::Bytes(size));
        group.bench_function("svc_core", |b| b.iter(|| upload(job.clone())));
        if curl_available {
            group.bench_function("curl", |b| {
                b.iter(|| assert!(curl_upload(&upload_info, &path), "curl upload"))
            });
        } else {
            eprintln!("upload: curl is not available here; only svc_core was measured");
        }
        group.finish();
    }
    criterion.final_summary();

    // Peak memory of one upload each.
    let reset = std::fs::write("/proc/self/clear_refs", "5").is_ok();
    let before = vm_kib("VmRSS:");
    upload(job.clone());
    let peak = vm_kib("VmHWM:");
    match (reset, before, peak) {
        (true, Some(before), Some(peak)) => eprintln!(
            "upload peak memory, svc_core: process peak RSS {} KiB ({} KiB above the RSS before) \
             during a {} MiB upload (client and in-process storage together)",
            peak,
            peak.saturating_sub(before),
            size >> 20
        ),
        _ => eprintln!("upload peak memory, svc_core: not measurable on this system"),
    }
    if curl_available {
        let _ = curl_upload(&upload_info, &path);
        match children_peak_kib() {
            Some(kib) => {
                eprintln!("upload peak memory, curl: {kib} KiB (peak RSS of the curl process)")
            }
            None => eprintln!("upload peak memory, curl: not measurable on this system"),
        }
    }
    runtime.block_on(emulator.shutdown());
}
