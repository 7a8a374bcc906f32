//! The cancellation of the foreign task awaiting a call, as Swift's `Task.isCancelled`
//! reports it through `setTaskCancellation`, ends the call and its work. The probe is
//! process-wide: these tests run in a child process.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use super::{config, in_child, kind, rig};
use futures::executor::block_on;
use svc_ffi::*;

/// The foreign task's state, set from another thread as Swift's `Task.cancel()` would.
struct Flag(AtomicBool);

impl TaskCancellation for Flag {
    fn is_cancelled(&self) -> Result<bool, ListenerError> {
        Ok(self.0.load(Ordering::SeqCst))
    }
}

/// A link over which the unit never answers.
struct Silent;

#[async_trait::async_trait]
impl ByteLink for Silent {
    async fn read(&self, _max_bytes: i32) -> Result<Vec<u8>, LinkError> {
        tokio::time::sleep(Duration::from_millis(20)).await;
        Ok(Vec::new())
    }

    async fn write(&self, _data: Vec<u8>) -> Result<(), LinkError> {
        Ok(())
    }
}

/// Runs `call` with the flag raised after 300 ms: it must end with `Canceled`, soon.
fn cancelled_soon<T: std::fmt::Debug>(
    flag: &Arc<Flag>,
    call: impl std::future::Future<Output = Result<T, SvcError>>,
) {
    flag.0.store(false, Ordering::SeqCst);
    let raiser = {
        let flag = flag.clone();
        std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(300));
            flag.0.store(true, Ordering::SeqCst);
        })
    };
    let started = Instant::now();
    let (name, e) = kind(block_on(call));
    assert_eq!(name, "canceled", "{e}");
    assert!(
        started.elapsed() < Duration::from_secs(2),
        "{:?}",
        started.elapsed()
    );
    raiser.join().expect("raiser");
    flag.0.store(false, Ordering::SeqCst);
}

#[test]
fn child_a_cancelled_foreign_task_ends_its_calls() {
    if std::env::var_os("SVC_FFI_CHILD").is_none() {
        return;
    }
    let flag = Arc::new(Flag(AtomicBool::new(false)));
    set_task_cancellation(Some(flag.clone()));
    let rig = rig(Duration::from_millis(200));

    // Not cancelled: calls end as usual.
    let unit = InsUnit::http(rig.info.device_url.clone().expect("device")).expect("unit");
    block_on(unit.info()).expect("info");

    // A unit call over a link that never answers (9 s of retries otherwise).
    let silent = InsUnit::over_link(Arc::new(Silent), "silent".into(), None);
    cancelled_soon(&flag, silent.info());

    // A cloud call to a service that accepts and never answers (30 s otherwise), and a
    // pager's page.
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    let address = format!("http://{}", listener.local_addr().expect("address"));
    let hung = CloudClient::create(CloudConfig {
        base_url: address.clone(),
        auth_url: Some(address),
        ..config(&rig.info)
    })
    .expect("client");
    cancelled_soon(&flag, hung.server_info());
    let pager = hung.list_containers();
    cancelled_soon(&flag, pager.next_page());

    // A cancelled wait for a workflow cancels the workflow, its scope... (processings
    // of 2 s: the wait is cancelled before their end.)
    let slow = super::rig(Duration::from_secs(2));
    let client = CloudClient::create(config(&slow.info)).expect("client");
    // (The cloud runs one processing at a time: the one started goes on there.)
    let queued = || WorkflowOptions {
        wait_for_free_organization: true,
        ..super::options()
    };
    let task = Workflow::new(client.clone())
        .start(super::workflow::sample_job(None), queued(), None)
        .expect("start");
    cancelled_soon(&flag, task.wait());
    let (name, e) = kind(block_on(task.wait()));
    assert_eq!(name, "canceled", "{e}");
    // ...unless it was detached: then the wait ends and the workflow goes on.
    let task = Workflow::new(client)
        .start(super::workflow::sample_job(None), queued(), None)
        .expect("start");
    task.detach();
    cancelled_soon(&flag, task.wait());
    assert!(block_on(task.wait()).expect("the outcome").succeeded);

    set_task_cancellation(None);
    drop(listener);
}

#[test]
fn a_cancelled_foreign_task_ends_its_calls() {
    assert!(in_child(
        "cancel::child_a_cancelled_foreign_task_ends_its_calls",
        &[]
    ));
}

/// A wait given a `WaitSignal` (Swift's `outcome()` fires it from its `Task`'s
/// cancellation handler) ends as soon as it is fired, with no probe installed, and
/// cancels the workflow unless it was detached.
#[test]
fn a_fired_wait_signal_ends_the_wait_and_cancels_unless_detached() {
    let slow = super::rig(Duration::from_secs(2));
    let client = CloudClient::create(config(&slow.info)).expect("client");
    let queued = || WorkflowOptions {
        wait_for_free_organization: true,
        ..super::options()
    };
    for detached in [false, true] {
        let task = Workflow::new(client.clone())
            .start(super::workflow::sample_job(None), queued(), None)
            .expect("start");
        if detached {
            task.detach();
        }
        let signal = WaitSignal::new();
        let firing = Arc::clone(&signal);
        let fire = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(200));
            firing.fire();
        });
        let began = Instant::now();
        let (name, e) = kind(block_on(task.wait_until(signal)));
        assert_eq!(name, "canceled", "{e}");
        assert!(
            began.elapsed() < Duration::from_secs(2),
            "{:?}",
            began.elapsed()
        );
        fire.join().expect("the firing thread");
        if detached {
            assert!(block_on(task.wait()).expect("the outcome").succeeded);
        } else {
            let (name, e) = kind(block_on(task.wait()));
            assert_eq!(name, "canceled", "the workflow itself: {e}");
        }
    }
    // Fired before the wait begins: it ends at once.
    let signal = WaitSignal::new();
    signal.fire();
    let task = Workflow::new(client)
        .start(super::workflow::sample_job(None), queued(), None)
        .expect("start");
    let (name, _) = kind(block_on(task.wait_until(signal)));
    assert_eq!(name, "canceled");
}
