//! The processing operations of [`CloudClient`].

#[allow(clippy::wildcard_imports)]
use super::machinery::*;
#[allow(clippy::wildcard_imports)]
use super::*;

impl CloudClient {
    // ------------------------------------------------------------------ processings

    /// Starts a processing of a container with a complete processing configuration
    /// (`processingJson`). Uses one processing credit.
    ///
    /// Not retried once the request may have reached the service: a second start would
    /// answer 409 or start a second processing.
    ///
    /// # Errors
    /// [`CloudError::InvalidInput`] (nothing sent) for metadata over its limits;
    /// [`CloudError::Api`] with 409 while the organization has a processing `pending` or
    /// `processing` or while a registered file is not uploaded, 403 without a credit
    /// left, 404 for an unknown container, 422, 500; [`CloudError::Transport`];
    /// [`CloudError::Authentication`].
    pub async fn start_processing(
        &self,
        request: StartProcessingRequest,
    ) -> Result<Processing, CloudError> {
        let op = START_PROCESSING.on(request.container_id);
        check_metadata(op, None, request.metadata.as_ref())?;
        let (api, org) = (&self.inner.cloud, self.organization_id());
        self.call(op, || {
            api.start_processing()
                .organization_id(org)
                .body(request.clone())
                .send()
        })
        .await
    }

    /// A processing with its status and progress.
    ///
    /// # Errors
    /// [`CloudError::Api`] with 404, 403, 500; [`CloudError::Transport`];
    /// [`CloudError::Authentication`].
    pub async fn get_processing(&self, processing_id: Uuid) -> Result<Processing, CloudError> {
        let api = &self.inner.cloud;
        self.call(GET_PROCESSING.on(processing_id), || {
            api.get_processing().processing_id(processing_id).send()
        })
        .await
    }

    /// Cancels a `pending` or `processing` processing (it becomes `canceled`).
    ///
    /// Sent to the specification's route (`POST /processings/{id}`); when the service
    /// answers 404 or 405 there, to the route of the vendor's API collection
    /// (`POST /processings/{id}/cancel`), which the client then keeps using. A 404 on
    /// both (no such processing) returns the first.
    ///
    /// Not retried once the request may have reached the service.
    ///
    /// # Errors
    /// [`CloudError::Api`] with 409 when it is not running, 404, 403, 500;
    /// [`CloudError::Transport`]; [`CloudError::Authentication`].
    pub async fn cancel_processing(&self, processing_id: Uuid) -> Result<(), CloudError> {
        use std::sync::atomic::Ordering;
        let learned = &self.inner.cancel_at_cancel_path;
        let at_cancel_path = learned.load(Ordering::Relaxed);
        let first = self.cancel_at(processing_id, at_cancel_path).await;
        match first {
            // The route may be missing (a service that serves only the other one); a
            // processing that does not exist answers 404 on both.
            Err(e) if matches!(e.status(), Some(404 | 405)) => {
                tracing::info!(
                    status = e.status(),
                    route = if at_cancel_path {
                        "/cancel"
                    } else {
                        "the processing's"
                    },
                    "cancel: the route answered as missing; trying the other"
                );
                match self.cancel_at(processing_id, !at_cancel_path).await {
                    Ok(()) => {
                        learned.store(!at_cancel_path, Ordering::Relaxed);
                        Ok(())
                    }
                    Err(other) if matches!(other.status(), Some(404 | 405)) => Err(e),
                    Err(other) => Err(other),
                }
            }
            other => other,
        }
    }

    /// One cancel request: at the specification's route, or at the vendor
    /// collection's (`at_cancel_path`).
    async fn cancel_at(&self, processing_id: Uuid, at_cancel_path: bool) -> Result<(), CloudError> {
        let api = &self.inner.cloud;
        if at_cancel_path {
            self.call(CANCEL_PROCESSING_BY_CANCEL_PATH.on(processing_id), || {
                api.cancel_processing_by_cancel_path()
                    .processing_id(processing_id)
                    .send()
            })
            .await
        } else {
            self.call(CANCEL_PROCESSING.on(processing_id), || {
                api.cancel_processing().processing_id(processing_id).send()
            })
            .await
        }
    }

    /// Archives a processing (it becomes `archived`) and deletes its result files.
    /// Archiving an archived processing changes nothing, so it is retried like a read.
    ///
    /// # Errors
    /// [`CloudError::Api`] with 404, 403, 500; [`CloudError::Transport`];
    /// [`CloudError::Authentication`].
    pub async fn archive_processing(&self, processing_id: Uuid) -> Result<Processing, CloudError> {
        let api = &self.inner.cloud;
        self.call(ARCHIVE_PROCESSING.on(processing_id), || {
            api.archive_processing().processing_id(processing_id).send()
        })
        .await
    }

    /// The output files of a `processed` processing, each with a pre-signed download
    /// address (download them with [`crate::transfer`]).
    ///
    /// # Errors
    /// [`CloudError::Api`] with 409 when the processing is not `processed`, 404, 403,
    /// 500; [`CloudError::Transport`]; [`CloudError::Authentication`].
    pub async fn list_processing_outputs(
        &self,
        processing_id: Uuid,
    ) -> Result<Vec<OutputFile>, CloudError> {
        let api = &self.inner.cloud;
        self.call(LIST_PROCESSING_OUTPUTS.on(processing_id), || {
            api.list_processing_outputs()
                .processing_id(processing_id)
                .send()
        })
        .await
    }

    /// The errors and warnings recorded for a processing.
    ///
    /// # Errors
    /// [`CloudError::Api`] with 404, 403, 500; [`CloudError::Transport`];
    /// [`CloudError::Authentication`].
    pub async fn list_processing_errors(
        &self,
        processing_id: Uuid,
    ) -> Result<Vec<ProcessingError>, CloudError> {
        let api = &self.inner.cloud;
        self.call(LIST_PROCESSING_ERRORS.on(processing_id), || {
            api.list_processing_errors()
                .processing_id(processing_id)
                .send()
        })
        .await
    }

    /// One page of the organization's processings (`page` from 0, `per_page`
    /// 1..=100), with the total number of processings (`num_items`).
    ///
    /// # Errors
    /// [`CloudError::InvalidInput`] (nothing sent) for a page below 0 or a page size
    /// outside 1..=100; [`CloudError::Api`] with 403, 500; [`CloudError::Transport`];
    /// [`CloudError::Authentication`].
    pub async fn list_processings_page(
        &self,
        page: i64,
        per_page: i64,
    ) -> Result<ProcessingList, CloudError> {
        let op = LIST_PROCESSINGS.at_page(page);
        let per_page = check_page(op, page, per_page)?;
        let (api, org) = (&self.inner.cloud, self.organization_id());
        self.call(op, || {
            api.list_processings()
                .organization_id(org)
                .page(page)
                .per_page(per_page)
                .send()
        })
        .await
    }

    /// Every processing of the organization, fetched page after page as the stream is
    /// read.
    ///
    /// # Errors
    /// The stream yields the errors of [`CloudClient::list_processings_page`] and ends
    /// after the first one.
    pub fn list_processings(&self) -> BoxStream<'static, Result<Processing, CloudError>> {
        self.pages(|client, page, per_page| {
            Box::pin(async move {
                let list = client.list_processings_page(page, per_page).await?;
                Ok((list.processings, Some(list.num_items)))
            })
        })
    }

    /// Every processing of the organization, collected.
    ///
    /// # Errors
    /// As [`CloudClient::list_processings_page`].
    pub async fn list_processings_all(&self) -> Result<Vec<Processing>, CloudError> {
        self.list_processings().try_collect().await
    }
}
