//! Subscriptions to the output logs a unit streams (`svc_core::live`): over the serial
//! link beside the session's REST calls (TCP bridge and pseudo-terminal), as UDP
//! datagrams of an Ethernet port, and from a log file being written.

use futures::StreamExt as _;
use serde_json::json;
use svc_core::live::{LiveError, LogStream, MessageKind, Record, Subscribe};
use svc_emulator::device::outputs::trajectory_at;

use super::*;

fn kind(name: &str) -> MessageKind {
    MessageKind::from_name(name).expect("a known message")
}

/// A unit whose Port A streams `messages`, and a serial session to it.
async fn streaming(link: Link, messages: serde_json::Value) -> (DeviceEmulator, Unit) {
    let dev = DeviceEmulator::start(DeviceConfig {
        pty: link == Link::Pty,
        ..config(&[("setup", &password_of("setup"))])
    })
    .await
    .expect("the emulated unit starts");
    let http = Unit::http(dev.url()).expect("url");
    http.login(UserName::Setup, pw(&password_of("setup")))
        .await
        .expect("login");
    // Everything else off, so that the counts below are the messages asked for.
    let mut all_off = serde_json::Map::new();
    for name in [
        "status", "utcTime", "imuData", "imuShort", "ekfEuler", "ekfQuat", "ekfNav", "gps1Pos",
    ] {
        all_off.insert(name.to_owned(), json!("off"));
    }
    if let Some(wanted) = messages.as_object() {
        for (k, v) in wanted {
            all_off.insert(k.clone(), v.clone());
        }
    }
    http.write(&json!({"output": {"comA": {"messages": all_off}}}), false)
        .await
        .expect("messages enabled");
    let unit = match link {
        Link::Tcp => Unit::serial_tcp_with(dev.serial_tcp(), SERIAL)
            .await
            .expect("bridge"),
        Link::Pty => {
            let path = dev.serial_path().expect("pty");
            Unit::serial_with(path.to_str().expect("utf-8"), 115_200, SERIAL).expect("pty")
        }
        Link::Http => unreachable!("a serial link"),
    };
    (dev, unit)
}

/// The records of `stream` for `millis`, the errors apart.
async fn collect(stream: &mut LogStream, millis: u64) -> (Vec<Record>, Vec<LiveError>) {
    let until = tokio::time::Instant::now() + Duration::from_millis(millis);
    let (mut records, mut errors) = (Vec::new(), Vec::new());
    while let Ok(Some(item)) = tokio::time::timeout_at(until, stream.next()).await {
        match item {
            Ok(record) => records.push(record),
            Err(e) => errors.push(e),
        }
    }
    (records, errors)
}

/// imuData every millisecond and ekfNav every 10 ms on the TCP bridge: two subscribers
/// get their messages, in order, on the trajectory, while REST calls go on.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn subscribers_get_their_messages_while_rest_calls_go_on() {
    let (_rig, unit) = streaming(Link::Tcp, json!({"imuData": "1ms", "ekfNav": "10ms"})).await;
    let mut navs = unit
        .subscribe(Subscribe::only([kind("ekfNav")]))
        .expect("subscribe");
    let mut all = unit.subscribe(Subscribe::all()).expect("subscribe");

    let calls = {
        let unit = unit.clone();
        tokio::spawn(async move {
            for i in 0..20 {
                let info = unit
                    .info()
                    .await
                    .unwrap_or_else(|e| panic!("info {i}: {e}"));
                assert!(!info.serial_number.is_empty());
            }
            unit.settings()
                .await
                .expect("the whole tree among the logs")
        })
    };
    let (got_navs, nav_errors) = collect(&mut navs, 1000).await;
    let (got_all, all_errors) = collect(&mut all, 50).await;
    let tree = calls.await.expect("the calls");
    assert_eq!(tree["output"]["comA"]["messages"]["ekfNav"], "10ms");

    assert!(nav_errors.is_empty(), "{nav_errors:?}");
    assert!(all_errors.is_empty(), "{all_errors:?}");
    // About 100 in a second.
    assert!(
        (60..=130).contains(&got_navs.len()),
        "{} ekfNav",
        got_navs.len()
    );
    let mut last = None;
    for record in &got_navs {
        let Record::EkfNav(nav) = record else {
            panic!("only ekfNav was asked for: {record:?}")
        };
        if let Some(before) = last {
            let step = nav.timestamp.wrapping_sub(before);
            assert!(
                (9_000..=11_000).contains(&step),
                "ekfNav 10 ms apart: {step} us"
            );
        }
        last = Some(nav.timestamp);
        let (position, _, _) = trajectory_at(f64::from(nav.timestamp) / 1e6);
        assert!(
            (nav.position[0] - position[0]).abs() < 1e-4,
            "on the trajectory"
        );
    }
    let stats = navs.stats();
    assert_eq!(stats.dropped, 0);
    assert_eq!(stats.records, got_navs.len() as u64);
    // The other subscriber kept everything meanwhile: ten imuData per ekfNav.
    let imu = got_all
        .iter()
        .filter(|r| matches!(r, Record::ImuData(_)))
        .count();
    let nav = got_all
        .iter()
        .filter(|r| matches!(r, Record::EkfNav(_)))
        .count();
    assert!(imu >= 8 * nav && nav >= 60, "{imu} imuData, {nav} ekfNav");
}

/// Over the pseudo-terminal at 115 200 baud.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_serial_port_streams_to_its_subscriber() {
    let (_rig, unit) = streaming(Link::Pty, json!({"ekfNav": "20ms", "utcTime": "100ms"})).await;
    let mut stream = unit
        .subscribe(Subscribe::only([kind("ekfNav"), kind("utcTime")]))
        .expect("subscribe");
    let info = unit.info().await.expect("info among the logs");
    assert!(!info.serial_number.is_empty());
    let (records, errors) = collect(&mut stream, 1000).await;
    assert!(errors.is_empty(), "{errors:?}");
    let navs = records
        .iter()
        .filter(|r| matches!(r, Record::EkfNav(_)))
        .count();
    let utc = records
        .iter()
        .filter(|r| matches!(r, Record::UtcTime(_)))
        .count();
    assert!((30..=60).contains(&navs), "{navs} ekfNav");
    assert!((5..=12).contains(&utc), "{utc} utcTime");
}

/// A subscriber that does not read: its buffer fills, the frames after are dropped and
/// counted, and reported where they are missing; REST calls are not delayed.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_slow_subscriber_loses_counted_frames_and_never_delays_rest() {
    let (_rig, unit) = streaming(Link::Tcp, json!({"imuData": "1ms"})).await;
    let mut slow = unit
        .subscribe(Subscribe::all().with_capacity(16))
        .expect("subscribe");
    let started = Instant::now();
    for _ in 0..10 {
        unit.info().await.expect("info");
    }
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert!(started.elapsed() < Duration::from_secs(5));

    let mut frames = 0;
    let mut dropped = 0;
    while frames < 16 {
        let frame = slow.try_next_frame().expect("the buffered frames first");
        assert_eq!(frame.expect("16 buffered").kind(), Some(kind("imuData")));
        frames += 1;
    }
    // The 16 buffered, then the gap in their place.
    match slow.try_next_frame() {
        Err(LiveError::Dropped { frames }) => dropped += frames,
        other => panic!("the gap after the buffer: {other:?}"),
    }
    assert!(dropped > 100, "{dropped} dropped in 300 ms at 1 kHz");
    // The stream goes on, and every drop is accounted for.
    let (more, errors) = collect(&mut slow, 200).await;
    assert!(!more.is_empty());
    for e in &errors {
        match e {
            LiveError::Dropped { frames } => dropped += frames,
            other => panic!("{other}"),
        }
    }
    assert_eq!(slow.stats().dropped, dropped);
}

/// A stream keeps its link open: the session it came from is dropped (as a binding's
/// garbage collector does), the records go on; closed by the app, it ends for good.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stream_outlives_its_session_until_it_is_closed() {
    let (_rig, unit) = streaming(Link::Tcp, json!({"ekfNav": "10ms"})).await;
    let mut stream = unit.subscribe(Subscribe::all()).expect("subscribe");
    assert!(matches!(stream.next().await, Some(Ok(Record::EkfNav(_)))));
    drop(unit);
    let more = tokio::time::timeout(Duration::from_secs(5), async {
        let mut records = 0;
        while records < 30 {
            match stream.next().await {
                Some(Ok(Record::EkfNav(_))) => records += 1,
                Some(Ok(_)) => {}
                other => return Err(format!("{other:?}")),
            }
        }
        Ok(records)
    })
    .await
    .expect("records after the session was dropped");
    assert_eq!(more, Ok(30));
    assert!(!stream.is_closed());
    stream.closer().close();
    let end = tokio::time::timeout(Duration::from_secs(5), async {
        loop {
            match stream.next().await {
                Some(Ok(_)) => continue,
                other => return other,
            }
        }
    })
    .await
    .expect("the stream ends");
    assert!(end.is_none(), "{end:?}");
    assert!(stream.is_closed());
}

/// Over HTTP there is nothing to subscribe to: a clear error naming UDP.
#[tokio::test]
async fn an_http_session_has_no_stream() {
    let rig = Rig::start(Link::Http, config(&[])).await;
    let unit = Unit::http(rig.dev.url()).expect("url");
    match unit.subscribe(Subscribe::all()) {
        Err(UnitError::InvalidRequest { reason, .. }) => {
            assert!(reason.contains("UDP"), "{reason}")
        }
        other => panic!("{other:?}"),
    }
}

/// An Ethernet port in UDP: the unit's datagrams, received on the port `LogStream::udp`
/// listens on, after the reboot the port settings need.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn udp_datagrams_of_an_ethernet_port() {
    let rig = Rig::start(Link::Http, config(&[("setup", &password_of("setup"))])).await;
    let unit = Unit::http(rig.dev.url()).expect("url");
    unit.login(UserName::Setup, pw(&password_of("setup")))
        .await
        .expect("login");
    let mut stream = LogStream::udp("127.0.0.1:0", Subscribe::only([kind("ekfNav")]))
        .await
        .expect("bind");
    let port = stream.local_addr().expect("bound").port();
    unit.write(
        &json!({"ports": {"eth1": {"protocol": "udp", "udpIp": "127.0.0.1", "udpOutPort": port}},
                "output": {"eth1": {"messages": {"ekfNav": "10ms", "utcTime": "100ms"}}}}),
        false,
    )
    .await
    .expect("write");
    unit.save().await.expect("save");
    unit.reboot().await.expect("reboot");
    let first = tokio::time::timeout(Duration::from_secs(10), stream.next())
        .await
        .expect("datagrams after the reboot");
    assert!(matches!(first, Some(Ok(Record::EkfNav(_)))), "{first:?}");
    let (records, errors) = collect(&mut stream, 500).await;
    assert!(errors.is_empty(), "{errors:?}");
    assert!(records.len() >= 30, "{} ekfNav in 500 ms", records.len());
    assert!(
        records.iter().all(|r| matches!(r, Record::EkfNav(_))),
        "only ekfNav"
    );
    assert!(stream.source().starts_with("udp 127.0.0.1:"));
}

/// A log file being written: its records as they are appended, a frame cut across
/// two writes included; the stream ends once the file stops growing.
#[tokio::test]
async fn a_file_being_written_is_read_as_it_grows() {
    use std::io::Write as _;
    let dir = tempfile::tempdir().expect("dir");
    let path = dir.path().join("session.bin");
    let mut file = std::fs::File::create(&path).expect("create");
    let frame = |t: u32| {
        svc_logs::encode_frame(
            &Record::EkfNav(svc_core::live::records::EkfNav {
                timestamp: t,
                ..Default::default()
            }),
            0,
        )
        .expect("encode")
    };
    file.write_all(&frame(1)).expect("write");
    file.flush().expect("flush");
    let mut stream = LogStream::follow(&path, Subscribe::all(), Some(Duration::from_millis(400)))
        .await
        .expect("follow");
    let writer = tokio::spawn(async move {
        for t in 2..=20u32 {
            tokio::time::sleep(Duration::from_millis(10)).await;
            let bytes = frame(t);
            let (a, b) = bytes.split_at(bytes.len() / 2);
            file.write_all(a).expect("write");
            file.flush().expect("flush");
            tokio::time::sleep(Duration::from_millis(2)).await;
            file.write_all(b).expect("write");
            file.flush().expect("flush");
        }
    });
    let mut stamps = Vec::new();
    while let Some(item) = tokio::time::timeout(Duration::from_secs(5), stream.next())
        .await
        .expect("the stream ends once the file is idle")
    {
        match item.expect("no error") {
            Record::EkfNav(nav) => stamps.push(nav.timestamp),
            other => panic!("{other:?}"),
        }
    }
    writer.await.expect("writer");
    assert_eq!(stamps, (1..=20).collect::<Vec<_>>());
    assert_eq!(stream.stats().records, 20);
}

/// A file truncated while followed ends the stream with a reason.
#[tokio::test]
async fn a_truncated_file_ends_the_stream() {
    let dir = tempfile::tempdir().expect("dir");
    let path = dir.path().join("session.bin");
    let nav = Record::EkfNav(svc_core::live::records::EkfNav::default());
    let mut bytes = Vec::new();
    for _ in 0..3 {
        bytes.extend(svc_logs::encode_frame(&nav, 0).expect("encode"));
    }
    std::fs::write(&path, &bytes).expect("write");
    let mut stream = LogStream::follow(&path, Subscribe::all(), None)
        .await
        .expect("follow");
    for _ in 0..3 {
        assert!(matches!(stream.next().await, Some(Ok(Record::EkfNav(_)))));
    }
    std::fs::write(&path, b"").expect("truncate");
    match tokio::time::timeout(Duration::from_secs(5), stream.next()).await {
        Ok(Some(Err(LiveError::Closed { reason }))) => {
            assert!(reason.contains("truncated"), "{reason}")
        }
        other => panic!("{other:?}"),
    }
    assert!(
        LogStream::follow(dir.path().join("none"), Subscribe::all(), None)
            .await
            .is_err()
    );
}

/// A unit that takes `startup` to be ready, streaming what tells on Port A.
async fn starting_unit(startup: Duration, messages: serde_json::Value) -> (DeviceEmulator, Unit) {
    let dev = DeviceEmulator::start(DeviceConfig {
        pty: false,
        startup,
        ..config(&[])
    })
    .await
    .expect("the emulated unit starts");
    let http = Unit::http(dev.url()).expect("url");
    http.write(&json!({"output": {"comA": {"messages": messages}}}), false)
        .await
        .expect("messages enabled");
    let unit = Unit::serial_tcp_with(dev.serial_tcp(), SERIAL)
        .await
        .expect("bridge");
    (dev, unit)
}

fn readiness_messages() -> serde_json::Value {
    json!({"gps1Pos": "100ms", "ekfNav": "50ms", "utcTime": "100ms", "imuData": "off",
           "ekfEuler": "off", "ekfQuat": "off", "status": "off", "imuShort": "off"})
}

/// `wait_ready` returns once the GNSS has a fix, the filter is aligned and UTC is
/// valid, which the emulated unit reaches `startup` after power-on.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn wait_ready_returns_once_the_unit_is_ready() {
    use svc_core::live::records::SolutionMode;
    use svc_core::live::{FixLevel, ReadyCriteria};
    // Before the power-on: however long the setup takes on a loaded machine, readiness
    // comes at least 1.5 s after this.
    let started = Instant::now();
    let (_dev, unit) = starting_unit(Duration::from_millis(1500), readiness_messages()).await;
    let ready = unit
        .wait_ready(&ReadyCriteria::default(), Duration::from_secs(10))
        .await
        .expect("ready");
    // Not before the filter is aligned (1.5 s after power-on).
    assert!(
        started.elapsed() >= Duration::from_millis(1500),
        "{:?}",
        started.elapsed()
    );
    // Any fix will do (the last gps1Pos may be of the single point phase still).
    assert!(
        matches!(ready.fix, Some(Some(fix)) if fix >= FixLevel::Single),
        "{ready:?}"
    );
    assert_eq!(ready.filter, Some(SolutionMode::NavPosition));
    assert_eq!(ready.utc_valid, Some(true));
    // Once ready, at once (by the next gps1Pos).
    let again = Instant::now();
    let ready = unit
        .wait_ready(
            &ReadyCriteria {
                min_fix: Some(FixLevel::RtkFixed),
                ..ReadyCriteria::default()
            },
            Duration::from_secs(5),
        )
        .await
        .expect("still ready");
    assert!(again.elapsed() < Duration::from_millis(500));
    assert_eq!(ready.fix, Some(Some(FixLevel::RtkFixed)));
}

/// Not ready in time: what was missing, in words, as a timeout.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn wait_ready_says_what_was_missing() {
    use svc_core::ErrorKind;
    use svc_core::live::{FixLevel, ReadyCriteria};
    let (_dev, unit) = starting_unit(Duration::from_secs(30), readiness_messages()).await;
    let err = unit
        .wait_ready(&ReadyCriteria::default(), Duration::from_millis(400))
        .await
        .expect_err("not ready in 400 ms");
    assert_eq!(err.kind(), ErrorKind::Timeout);
    let UnitError::NotReady(not) = &err else {
        panic!("{err:?}")
    };
    assert_eq!(not.missing.len(), 3, "{:?}", not.missing);
    assert!(not.missing[0].contains("no solution"), "{:?}", not.missing);
    assert!(not.missing[1].contains("VerticalGyro"), "{:?}", not.missing);
    assert!(not.missing[2].contains("UTC"), "{:?}", not.missing);
    assert!(not.closed.is_none());

    // A condition no enabled message can tell is named with what to enable.
    let (_dev, unit) = starting_unit(
        Duration::ZERO,
        json!({"gps1Pos": "off", "ekfNav": "50ms", "utcTime": "100ms"}),
    )
    .await;
    let err = unit
        .wait_ready(
            &ReadyCriteria {
                min_fix: Some(FixLevel::Single),
                aligned: true,
                utc: true,
            },
            Duration::from_millis(400),
        )
        .await
        .expect_err("no GNSS message");
    let UnitError::NotReady(not) = &err else {
        panic!("{err:?}")
    };
    assert_eq!(not.missing.len(), 1, "{:?}", not.missing);
    assert!(not.missing[0].contains("enable"), "{:?}", not.missing);
    // Without the GNSS condition it is ready.
    unit.wait_ready(
        &ReadyCriteria {
            min_fix: None,
            ..ReadyCriteria::default()
        },
        Duration::from_secs(5),
    )
    .await
    .expect("aligned with UTC");
}

/// Batches of rows from a followed file: every frame, in tables, though the file holds
/// far more frames than the buffer (a file source waits for room: nothing is dropped).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fill_takes_every_frame_of_a_file_into_tables() {
    use svc_core::live::records::ImuShort;
    let dir = tempfile::tempdir().expect("dir");
    let path = dir.path().join("session.bin");
    let mut bytes = Vec::new();
    for t in 0..50_000u32 {
        let imu = Record::ImuShort(ImuShort {
            timestamp: t * 1000,
            ..ImuShort::default()
        });
        bytes.extend(svc_logs::encode_frame(&imu, 0).expect("encode"));
    }
    bytes.extend(b"\xff\x5a\x01"); // a frame cut at the end
    std::fs::write(&path, &bytes).expect("write");
    let mut stream = LogStream::follow(
        &path,
        Subscribe::all().with_capacity(1024),
        Some(Duration::from_millis(200)),
    )
    .await
    .expect("follow");
    let mut tables = svc_logs::tables::Tables::new();
    let mut rows = 0;
    let mut calls = 0;
    loop {
        let filled = stream
            .fill(&mut tables, 10_000, Duration::from_secs(5))
            .await
            .expect("fill");
        assert_eq!(filled.dropped, 0);
        rows += filled.records;
        calls += 1;
        if filled.ended {
            break;
        }
        assert!(calls < 10_000, "never ended");
    }
    assert_eq!(rows, 50_000);
    tables.finish().expect("finish");
    let mut table_rows = 0;
    let mut last = None;
    while let Some((kind, batch)) = tables.next_batch() {
        assert_eq!(kind, self::kind("imuShort"));
        table_rows += batch.num_rows();
        last = Some(batch);
    }
    assert_eq!(table_rows, 50_000);
    assert!(last.is_some());
    // Ended: the next calls say so again.
    assert!(
        stream
            .fill(&mut tables, 10, Duration::from_millis(10))
            .await
            .expect("ended")
            .ended
    );
    assert_eq!(stream.stats().records, 50_000);
}
