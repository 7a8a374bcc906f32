//! REST over a serial link that also carries the unit's output logs: the round trip of
//! `Unit::info` over the emulated unit's TCP serial bridge, with Port A quiet against
//! Port A streaming more than a 921,600-baud line carries (imuData, ekfNav, ekfEuler and
//! ekfQuat every millisecond: about 300 KB/s of frames around each answer), without and
//! with a subscriber taking every frame (`svc_core::live`: between requests a reader
//! holds the line on its behalf and hands it over to each request).
//!
//! `cargo bench -p svc-benches --bench serial_stream`. Under `cargo test` (no `--bench`
//! argument) each entry runs once, as a smoke test.

use std::time::Duration;

use criterion::Criterion;
use serde_json::json;
use svc_core::unit::{Password, Unit, UserName};
use svc_emulator::device::{DeviceConfig, DeviceEmulator};

const QUIET: &str = r#"{"output":{"comA":{"messages":{"status":"off","utcTime":"off","ekfEuler":"off","ekfNav":"off","gps1Pos":"off"}}}}"#;

fn main() {
    let runtime = tokio::runtime::Runtime::new().expect("a tokio runtime");
    let mut criterion = Criterion::default()
        .configure_from_args()
        .measurement_time(Duration::from_secs(5));
    let device = runtime
        .block_on(DeviceEmulator::start(DeviceConfig {
            pty: false,
            ..DeviceConfig::default()
        }))
        .expect("the emulated unit starts");
    let unit = runtime
        .block_on(async {
            let unit = Unit::serial_tcp(device.serial_tcp()).await?;
            unit.login(UserName::Setup, Password::new("")).await?;
            Ok::<_, svc_core::unit::UnitError>(unit)
        })
        .expect("a serial session");
    let streaming = json!({"output": {"comA": {"messages": {
        "imuData": "1ms", "ekfNav": "1ms", "ekfEuler": "1ms", "ekfQuat": "1ms"
    }}}});
    let mut group = criterion.benchmark_group("serial_rest_among_logs");
    for (name, messages) in [
        (
            "info_port_a_quiet",
            serde_json::from_str(QUIET).expect("JSON"),
        ),
        (
            "info_port_a_streaming_4khz",
            json!({"output": {"comA": {"messages": {
                "imuData": "1ms", "ekfNav": "1ms", "ekfEuler": "1ms", "ekfQuat": "1ms"
            }}}}),
        ),
    ] {
        runtime
            .block_on(unit.write(&messages, false))
            .expect("Port A's messages set");
        group.bench_function(name, |b| {
            b.iter(|| runtime.block_on(unit.info()).expect("an answer"));
        });
    }
    // The same stream, every frame taken by a subscriber meanwhile.
    runtime
        .block_on(unit.write(&streaming, false))
        .expect("Port A's messages set");
    let mut stream = {
        let _inside = runtime.enter();
        unit.subscribe(svc_core::live::Subscribe::all())
            .expect("a subscription")
    };
    let taken = runtime.spawn(async move {
        let mut frames = 0_u64;
        while let Some(Ok(_)) = stream.next_frame().await {
            frames += 1;
        }
        frames
    });
    group.bench_function("info_port_a_streaming_4khz_subscribed", |b| {
        b.iter(|| runtime.block_on(unit.info()).expect("an answer"));
    });
    group.finish();
    criterion.final_summary();
    taken.abort();
    drop(unit);
    runtime.block_on(device.shutdown());
}
