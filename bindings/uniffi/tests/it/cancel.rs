//! A call whose future the foreign side drops (Kotlin frees it when the coroutine is
//! cancelled; Swift's generated code cancels then frees it when the `Task` is) stops
//! its work: nothing goes on in the background.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use svc_ffi::*;

/// A link over which the unit never answers; it counts the requests written to it.
#[derive(Default)]
struct Silent {
    writes: AtomicUsize,
}

#[async_trait::async_trait]
impl ByteLink for Silent {
    async fn read(&self, _max_bytes: Count) -> Result<Vec<u8>, LinkError> {
        tokio::time::sleep(Duration::from_millis(20)).await;
        Ok(Vec::new())
    }

    async fn write(&self, _data: Vec<u8>) -> Result<(), LinkError> {
        self.writes.fetch_add(1, Ordering::SeqCst);
        Ok(())
    }
}

#[test]
fn a_dropped_call_stops_its_work() {
    let link = Arc::new(Silent::default());
    // A GET is sent again every 200 ms of silence, 50 times: 10 s in all.
    let options = SerialOptions {
        answer_timeout: Some(Duration::from_millis(200)),
        get_attempts: Count(50),
        max_write_bytes: None,
    };
    let unit = InsUnit::over_link(link.clone(), "silent".into(), Some(options));
    // Another executor than the library's, as the foreign side's.
    let foreign = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    // The call is given up after 500 ms.
    let given_up = foreign
        .block_on(async { tokio::time::timeout(Duration::from_millis(500), unit.info()).await });
    assert!(given_up.is_err(), "the unit never answers");
    assert!(
        link.writes.load(Ordering::SeqCst) >= 2,
        "the call ran and retried"
    );
    // Its work ends with it: no request is sent again (five more in a second otherwise).
    let after = link.writes.load(Ordering::SeqCst);
    std::thread::sleep(Duration::from_millis(1_000));
    assert_eq!(
        link.writes.load(Ordering::SeqCst),
        after,
        "the call went on"
    );
}
