//! REST over a serial link that also carries the unit's stream of output logs: the
//! answers are found among hundreds of log frames a second (imuData every millisecond,
//! ekfNav every 10 ms on Port A), over the TCP bridge and the pseudo-terminal.

use serde_json::json;

use super::*;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rest_answers_are_found_among_the_streamed_logs() {
    for link in [Link::Tcp, Link::Pty] {
        let rig = Rig::start(link, config(&[("setup", &password_of("setup"))])).await;
        let http = Unit::http(rig.dev.url()).expect("url");
        http.login(UserName::Setup, pw(&password_of("setup")))
            .await
            .expect("login");
        http.write(
            &json!({"output": {"comA": {"messages": {"imuData": "1ms", "ekfNav": "10ms"}}}}),
            false,
        )
        .await
        .expect("messages enabled");

        let unit = rig.login(UserName::Setup, &password_of("setup")).await;
        for i in 0..30 {
            let info = unit
                .info()
                .await
                .unwrap_or_else(|e| panic!("{link:?} info {i}: {e}"));
            assert!(!info.serial_number.is_empty());
        }
        // A whole tree (large frames) and a write, read back, among the logs.
        let tree = unit.settings().await.expect("the whole tree");
        assert_eq!(tree["output"]["comA"]["messages"]["imuData"], "1ms");
        unit.write(&json!({"oem": {"label": "streaming"}}), false)
            .await
            .expect("write");
        assert_eq!(
            unit.node("oem/label").await.expect("node"),
            json!("streaming")
        );
    }
}
