//! A noisy serial line ([`DeviceConfig::serial_faults`]): damaged frames are never
//! applied nor answered, the others are served as on a clean line, and the unit counts
//! the writes it applies.

use super::*;
use crate::faults::SerialFaultConfig;

fn noisy(rate: f64) -> DeviceConfig {
    DeviceConfig {
        serial_faults: SerialFaultConfig {
            rate,
            ..SerialFaultConfig::default()
        },
        ..config()
    }
}

/// A settings write of one node.
fn lever_arm(x: f64) -> Vec<u8> {
    serde_json::to_vec(&json!([x, 0.0, -1.2])).expect("JSON")
}

/// The node written, under `/api/v1`.
const NODE: &str = "/settings/aiding/gnss1/leverArmPrimary";

fn full(path: &str) -> String {
    format!("/api/v1{path}")
}

#[tokio::test]
async fn a_line_that_damages_every_chunk_applies_and_answers_nothing() {
    let unit = start(noisy(1.0)).await;
    let before = unit
        .handle("GET", &full(NODE), "", b"")
        .expect("the unit answers");
    let mut client = connect(&unit, Via::SerialTcp).await;
    for x in [0.5, 0.25] {
        let answer = client
            .try_call("POST", &full(NODE), "", Some(&lever_arm(x)), SILENCE)
            .await;
        assert!(answer.is_none(), "a damaged request got {answer:?}");
    }
    assert!(
        client
            .try_call("GET", "/api/v1/info", "", None, SILENCE)
            .await
            .is_none()
    );
    assert_eq!(unit.applied_writes(), 0, "no damaged write was applied");
    assert_eq!(unit.handle("GET", &full(NODE), "", b""), Some(before));
}

#[tokio::test]
async fn a_clean_line_counts_each_applied_write_once() {
    let config = noisy(0.0);
    let counters = config.serial_faults.handle.clone();
    let unit = start(config).await;
    let mut client = connect(&unit, Via::SerialTcp).await;
    let x = serde_json::from_slice::<Value>(&lever_arm(0.5)).expect("JSON");
    let checked = client.post(NODE, "checkOnly=true", &x).await;
    assert_eq!(checked.status, 200, "{:?}", checked.body);
    assert_eq!(unit.applied_writes(), 0, "checkOnly applies nothing");
    for expected in 1..=2 {
        // The same value twice: applied twice, counted twice.
        let written = client.post(NODE, "", &x).await;
        assert_eq!(written.status, 200, "{:?}", written.body);
        assert_eq!(unit.applied_writes(), expected);
    }
    let refused = client.post(NODE, "", &json!("not an array")).await;
    assert_eq!(refused.status, 422);
    assert_eq!(unit.applied_writes(), 2, "a refused write is not applied");
    assert_eq!(counters.counts().dropped + counters.counts().corrupted, 0);
}

#[tokio::test]
async fn some_frames_of_a_noisy_line_get_through_and_the_rest_are_counted() {
    let config = noisy(0.3);
    let counters = config.serial_faults.handle.clone();
    let unit = start(config).await;
    let mut client = connect(&unit, Via::SerialTcp).await;
    let mut answered = 0;
    for _ in 0..40 {
        if let Some(answer) = client
            .try_call("GET", "/api/v1/info", "", None, SILENCE)
            .await
        {
            assert_eq!(answer.status, 200);
            answered += 1;
        }
    }
    let counts = counters.counts();
    // About half of the exchanges (0.7 × 0.7) get through.
    assert!((8..=32).contains(&answered), "{answered} of 40 answered");
    assert!(counts.dropped + counts.corrupted > 0, "{counts:?}");
    assert!(counts.chunks >= 40, "{counts:?}");
}

#[test]
fn the_command_line_sets_the_serial_fault_rate() {
    use clap::Parser as _;
    #[derive(clap::Parser)]
    struct Args {
        #[command(flatten)]
        emulator: crate::cli::EmulatorArgs,
    }
    let parse = |args: &[&str]| {
        Args::try_parse_from(std::iter::once("svc-emulator").chain(args.iter().copied()))
            .expect("valid flags")
            .emulator
            .config()
    };
    let config = parse(&["--serial-fault-rate", "0.2"]).expect("in range");
    let device = config.device.expect("a unit");
    assert_eq!(device.serial_faults.rate, 0.2);
    assert_eq!(
        parse(&[])
            .expect("defaults")
            .device
            .expect("a unit")
            .serial_faults
            .rate,
        0.0
    );
    let error = parse(&["--serial-fault-rate", "1.5"]).expect_err("out of range");
    assert!(error.contains("--serial-fault-rate"), "{error}");
}
