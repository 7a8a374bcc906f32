//! The request machinery of [`CloudClient`]: which operations may be retried, one
//! attempt in its span, paging, and the checks made before anything is sent.

#[allow(clippy::wildcard_imports)]
use super::*;

/// An operation and whether repeating it after it may have been applied is harmless.
#[derive(Clone, Copy, Debug)]
pub(super) struct Op {
    /// The `operationId` of the OpenAPI document.
    pub(super) id: &'static str,
    /// Repeating it gives the same end state (reads, full-replacement updates, deletes,
    /// archive).
    idempotent: bool,
    /// The resource it acts on (container, file, processing, endpoint), for the logs.
    resource: Option<Uuid>,
    /// The page it reads, for the logs.
    page: Option<i64>,
}

impl Op {
    const fn idempotent(id: &'static str) -> Self {
        Self {
            id,
            idempotent: true,
            resource: None,
            page: None,
        }
    }

    const fn once(id: &'static str) -> Self {
        Self {
            id,
            idempotent: false,
            resource: None,
            page: None,
        }
    }

    /// The same operation on `resource` (logged with it).
    pub(super) const fn on(self, resource: Uuid) -> Self {
        Self {
            resource: Some(resource),
            ..self
        }
    }

    /// The same operation reading page `page` (logged with it).
    pub(super) const fn at_page(self, page: i64) -> Self {
        Self {
            page: Some(page),
            ..self
        }
    }

    /// Whether the client repeats a request of this operation after `e` by itself.
    fn may_retry(self, e: &CloudError) -> bool {
        match e {
            // 429: the service refused to handle it now; nothing was applied.
            CloudError::Api { status: 429, .. } => true,
            CloudError::Api { .. } => self.idempotent && e.retry_hint() == RetryHint::Transient,
            CloudError::Transport { kind, .. } => {
                self.idempotent || !kind.may_have_reached_service()
            }
            _ => false,
        }
    }
}

pub(super) const GET_SERVER_INFO: Op = Op::idempotent("getServerInfo");
pub(super) const LIST_CONTAINERS: Op = Op::idempotent("listContainers");
pub(super) const CREATE_CONTAINER: Op = Op::once("createContainer");
pub(super) const GET_CONTAINER: Op = Op::idempotent("getContainer");
pub(super) const UPDATE_CONTAINER: Op = Op::idempotent("updateContainer");
pub(super) const DELETE_CONTAINER: Op = Op::idempotent("deleteContainer");
pub(super) const ADD_CONTAINER_FILES: Op = Op::once("addContainerFiles");
pub(super) const UPDATE_CONTAINER_FILE: Op = Op::idempotent("updateContainerFile");
pub(super) const DELETE_CONTAINER_FILE: Op = Op::idempotent("deleteContainerFile");
pub(super) const LIST_PROCESSINGS: Op = Op::idempotent("listProcessings");
pub(super) const START_PROCESSING: Op = Op::once("startProcessing");
pub(super) const GET_PROCESSING: Op = Op::idempotent("getProcessing");
pub(super) const CANCEL_PROCESSING: Op = Op::once("cancelProcessing");
pub(super) const CANCEL_PROCESSING_BY_CANCEL_PATH: Op = Op::once("cancelProcessingByCancelPath");
pub(super) const ARCHIVE_PROCESSING: Op = Op::idempotent("archiveProcessing");
pub(super) const LIST_PROCESSING_OUTPUTS: Op = Op::idempotent("listProcessingOutputs");
pub(super) const LIST_PROCESSING_ERRORS: Op = Op::idempotent("listProcessingErrors");
pub(super) const LIST_WEBHOOK_ENDPOINTS: Op = Op::idempotent("listWebhookEndpoints");
pub(super) const CREATE_WEBHOOK_ENDPOINT: Op = Op::once("createWebhookEndpoint");
pub(super) const UPDATE_WEBHOOK_ENDPOINT: Op = Op::idempotent("updateWebhookEndpoint");
pub(super) const DELETE_WEBHOOK_ENDPOINT: Op = Op::idempotent("deleteWebhookEndpoint");
pub(super) const LIST_MISSED_WEBHOOKS: Op = Op::idempotent("listMissedWebhooks");

/// One page of a list: its items and, when the service says, the total over all pages.
pub(super) type Page<T> = (Vec<T>, Option<u64>);

impl CloudClient {
    // ------------------------------------------------------------------ machinery

    /// Runs one operation with the retry policy (see [`Op::may_retry`]).
    pub(super) async fn call<T, F, Fut>(&self, op: Op, f: F) -> Result<T, CloudError>
    where
        F: Fn() -> Fut,
        Fut: Future<Output = Result<ResponseValue<T>, ClientError>>,
    {
        self.call_tracked(op, None, f).await
    }

    /// As [`CloudClient::call`]; sets `lost` when an attempt failed after its request
    /// may have reached the service (its answer was lost).
    pub(super) async fn call_tracked<T, F, Fut>(
        &self,
        op: Op,
        lost: Option<&AtomicBool>,
        f: F,
    ) -> Result<T, CloudError>
    where
        F: Fn() -> Fut,
        Fut: Future<Output = Result<ResponseValue<T>, ClientError>>,
    {
        let f = &f;
        let span = tracing::info_span!(
            "cloud",
            op = op.id,
            resource_id = op.resource.map(display),
            page = op.page
        );
        let started = std::time::Instant::now();
        // A failure to obtain a token was already retried by the token cache, with the
        // same policy: the operation is not repeated for it (that would multiply the
        // requests to a failing identity provider).
        let no_token = AtomicBool::new(false);
        let no_token = &no_token;
        let result = self
            .inner
            .config
            .retry
            .run_explained(
                move |number| async move {
                    let result = self.attempt(op, number, f, no_token).await;
                    if let (Some(lost), Err(CloudError::Transport { kind, .. })) = (lost, &result)
                        && kind.may_have_reached_service()
                    {
                        lost.store(true, Ordering::Relaxed);
                    }
                    result
                },
                |e| !no_token.load(Ordering::Relaxed) && op.may_retry(e),
                ToString::to_string,
            )
            .instrument(span.clone())
            .await;
        let elapsed_ms = crate::observe::millis(started.elapsed());
        match &result {
            Ok(_) => tracing::debug!(parent: &span, elapsed_ms, "operation succeeded"),
            Err(e) => tracing::debug!(
                parent: &span,
                elapsed_ms,
                status = e.status(),
                kind = %e.kind(),
                error = %e,
                "operation failed"
            ),
        }
        result
    }

    /// One attempt (number `number` of the operation): with a valid token; on 401 the
    /// token is discarded, a new one obtained and the request repeated once. Sets
    /// `no_token` when no token could be had.
    async fn attempt<T, F, Fut>(
        &self,
        op: Op,
        number: u32,
        f: &F,
        no_token: &AtomicBool,
    ) -> Result<T, CloudError>
    where
        F: Fn() -> Fut,
        Fut: Future<Output = Result<ResponseValue<T>, ClientError>>,
    {
        let tokens = &self.inner.tokens;
        let token = |result: Result<(svc_cloud_api::AccessToken, u64), CloudError>| {
            result.inspect_err(|_| no_token.store(true, Ordering::Relaxed))
        };
        let (_, generation) = token(tokens.token().await)?;
        let error = match request(op, number, f).await {
            Ok(value) => return Ok(value),
            Err(e) => e,
        };
        if error.status() != Some(401) {
            return Err(error);
        }
        tracing::info!(
            op = op.id,
            token_generation = generation,
            "the service answered 401: renewing the access token and repeating once"
        );
        tokens.invalidate(generation);
        token(tokens.token().await)?;
        request(op, number, f).await
    }

    /// A `DELETE`: a 404 after an attempt whose answer was lost means that attempt
    /// deleted it.
    pub(super) async fn delete<F, Fut>(&self, op: Op, f: F) -> Result<(), CloudError>
    where
        F: Fn() -> Fut,
        Fut: Future<Output = Result<ResponseValue<()>, ClientError>>,
    {
        let lost = AtomicBool::new(false);
        match self.call_tracked(op, Some(&lost), f).await {
            Err(e) if e.status() == Some(404) && lost.load(Ordering::Relaxed) => Ok(()),
            result => result,
        }
    }

    /// Every item of a list, page after page of [`CloudConfig::page_size`] items, until
    /// a short page or the total the service gave; stops after the first error.
    pub(super) fn pages<T, F>(&self, fetch: F) -> BoxStream<'static, Result<T, CloudError>>
    where
        T: Send + 'static,
        F: Fn(CloudClient, i64, i64) -> BoxFuture<'static, Result<Page<T>, CloudError>>
            + Send
            + 'static,
    {
        struct State<F> {
            client: CloudClient,
            fetch: F,
            page: i64,
            seen: u64,
            done: bool,
        }
        let per_page = self.inner.config.page_size;
        let start = State {
            client: self.clone(),
            fetch,
            page: 0,
            seen: 0,
            done: false,
        };
        stream::unfold(start, move |mut s| async move {
            if s.done {
                return None;
            }
            match (s.fetch)(s.client.clone(), s.page, per_page).await {
                Ok((items, total)) => {
                    let count = items.len() as u64;
                    s.seen += count;
                    s.page += 1;
                    s.done = count < per_page.unsigned_abs() || total.is_some_and(|t| s.seen >= t);
                    Some((Ok(items), s))
                }
                Err(e) => {
                    s.done = true;
                    Some((Err(e), s))
                }
            }
        })
        .flat_map(|page| match page {
            Ok(items) => stream::iter(items.into_iter().map(Ok)).left_stream(),
            Err(e) => stream::once(async move { Err(e) }).right_stream(),
        })
        .boxed()
    }
}

/// One HTTP request of `op` (attempt `number`), in a span of its own with its status
/// and duration. The address is not logged (the generated client builds it; it never
/// holds a secret, the token travels in a header).
async fn request<T, F, Fut>(op: Op, number: u32, f: &F) -> Result<T, CloudError>
where
    F: Fn() -> Fut,
    Fut: Future<Output = Result<ResponseValue<T>, ClientError>>,
{
    let span = tracing::debug_span!("http", op = op.id, attempt = number, status = Empty);
    async {
        let started = std::time::Instant::now();
        tracing::trace!("request sent");
        let result = match f().await {
            Ok(value) => {
                tracing::Span::current().record("status", value.status().as_u16());
                Ok(value.into_inner())
            }
            Err(e) => {
                let error = CloudError::from_client(op.id, e).await;
                if let Some(status) = error.status() {
                    tracing::Span::current().record("status", status);
                }
                Err(error)
            }
        };
        let elapsed_ms = crate::observe::millis(started.elapsed());
        match &result {
            Ok(_) => tracing::debug!(elapsed_ms, "response"),
            Err(e) => tracing::debug!(elapsed_ms, kind = %e.kind(), error = %e, "request failed"),
        }
        result
    }
    .instrument(span)
    .await
}

/// Checks paging parameters; returns `per_page` as the generated client takes it.
pub(super) fn check_page(op: Op, page: i64, per_page: i64) -> Result<u64, CloudError> {
    limits::check_page(page, per_page).map_err(|l| CloudError::invalid_input(op.id, None, l))?;
    Ok(per_page.unsigned_abs())
}

pub(super) fn check_metadata(
    op: Op,
    at: Option<&str>,
    metadata: Option<&Metadata>,
) -> Result<(), CloudError> {
    match metadata {
        Some(m) => limits::check_metadata(m).map_err(|l| CloudError::invalid_input(op.id, at, l)),
        None => Ok(()),
    }
}

/// Checks files to register: paths, metadata and sizes, naming the file by its index.
pub(super) fn check_files(op: Op, files: &[CreateContainerFile]) -> Result<(), CloudError> {
    for (i, f) in files.iter().enumerate() {
        limits::check_container_path(&f.path)
            .map_err(|l| CloudError::invalid_input(op.id, Some(&format!("files[{i}].path")), l))?;
        check_metadata(
            op,
            Some(&format!("files[{i}].metadata")),
            f.metadata.as_ref(),
        )?;
        if f.size < 0 {
            return Err(CloudError::InvalidInput {
                operation: op.id,
                reason: format!("files[{i}].size must not be negative, got {}", f.size),
                limit: None,
            });
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn transport(kind: TransportKind) -> CloudError {
        CloudError::Transport {
            operation: "x",
            kind,
            reason: "r".into(),
            source: None,
        }
    }

    fn api(status: u16) -> CloudError {
        CloudError::Api {
            operation: "x",
            status,
            title: String::new(),
            details: String::new(),
        }
    }

    #[test]
    fn creations_are_retried_only_when_the_request_did_not_reach_the_service() {
        let post = CREATE_CONTAINER;
        assert!(post.may_retry(&transport(TransportKind::Connect)));
        for kind in [
            TransportKind::Timeout,
            TransportKind::Interrupted,
            TransportKind::Other,
        ] {
            assert!(!post.may_retry(&transport(kind)), "{kind:?}");
        }
        assert!(!post.may_retry(&api(500)));
        assert!(post.may_retry(&api(429)));
    }

    #[test]
    fn reads_are_retried_on_transient_failures_only() {
        let get = GET_CONTAINER;
        for kind in [
            TransportKind::Connect,
            TransportKind::Timeout,
            TransportKind::Interrupted,
            TransportKind::Other,
        ] {
            assert!(get.may_retry(&transport(kind)), "{kind:?}");
        }
        assert!(get.may_retry(&api(500)));
        assert!(get.may_retry(&api(503)));
        for status in [400, 401, 403, 404, 409, 422] {
            assert!(!get.may_retry(&api(status)), "{status}");
        }
        assert!(!get.may_retry(&CloudError::Authentication {
            status: None,
            error: "e".into(),
            description: "d".into(),
        }));
    }
}
