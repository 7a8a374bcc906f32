//! The webhook endpoint operations of [`CloudClient`] (the notification service).

#[allow(clippy::wildcard_imports)]
use super::machinery::*;
#[allow(clippy::wildcard_imports)]
use super::*;

impl CloudClient {
    // ------------------------------------------------------------------ webhook endpoints

    /// One page of the organization's webhook endpoints (each with its signing secret).
    ///
    /// # Errors
    /// [`CloudError::InvalidInput`] (nothing sent) for a page below 0 or a page size
    /// outside 1..=100; [`CloudError::Api`] with 403, 500; [`CloudError::Transport`];
    /// [`CloudError::Authentication`].
    pub async fn list_webhook_endpoints_page(
        &self,
        page: i64,
        per_page: i64,
    ) -> Result<Vec<WebhookEndpoint>, CloudError> {
        let op = LIST_WEBHOOK_ENDPOINTS.at_page(page);
        let per_page = check_page(op, page, per_page)?;
        let (api, org) = (&self.inner.notification, self.organization_id());
        self.call(op, || {
            api.list_webhook_endpoints()
                .organization_id(org)
                .page(page)
                .per_page(per_page)
                .send()
        })
        .await
    }

    /// Every webhook endpoint of the organization, fetched page after page.
    ///
    /// # Errors
    /// The stream yields the errors of [`CloudClient::list_webhook_endpoints_page`] and
    /// ends after the first one.
    pub fn list_webhook_endpoints(
        &self,
    ) -> BoxStream<'static, Result<WebhookEndpoint, CloudError>> {
        self.pages(|client, page, per_page| {
            Box::pin(async move {
                let items = client.list_webhook_endpoints_page(page, per_page).await?;
                Ok((items, None))
            })
        })
    }

    /// Every webhook endpoint of the organization, collected.
    ///
    /// # Errors
    /// As [`CloudClient::list_webhook_endpoints_page`].
    pub async fn list_webhook_endpoints_all(&self) -> Result<Vec<WebhookEndpoint>, CloudError> {
        self.list_webhook_endpoints().try_collect().await
    }

    /// Registers a webhook endpoint (enabled, with a new signing secret).
    ///
    /// Not retried once the request may have reached the service.
    ///
    /// # Errors
    /// [`CloudError::InvalidInput`] (nothing sent) for metadata over its limits;
    /// [`CloudError::Api`] with 422 for a URL that is not an absolute http(s) URL, no or
    /// an unknown event type, 403, 500; [`CloudError::Transport`];
    /// [`CloudError::Authentication`]; [`CloudError::InvalidResponse`] when the answer
    /// holds no endpoint.
    pub async fn create_webhook_endpoint(
        &self,
        request: CreateWebhookEndpointRequest,
    ) -> Result<WebhookEndpoint, CloudError> {
        let op = CREATE_WEBHOOK_ENDPOINT;
        check_metadata(op, None, request.metadata.as_ref())?;
        let (api, org) = (&self.inner.notification, self.organization_id());
        let answer = self
            .call(op, || {
                api.create_webhook_endpoint()
                    .organization_id(org)
                    .body(request.clone())
                    .send()
            })
            .await?;
        answer
            .into_iter()
            .next()
            .ok_or_else(|| CloudError::InvalidResponse {
                operation: op.id,
                reason: "the answer holds no webhook endpoint".to_owned(),
            })
    }

    /// Changes a webhook endpoint's `url`, `enabled_event_types`, `metadata` (which
    /// replaces the whole object) and/or `enabled`; absent fields are left unchanged.
    ///
    /// # Errors
    /// [`CloudError::InvalidInput`] (nothing sent) for metadata over its limits;
    /// [`CloudError::Api`] with 422 for an invalid URL or event type, 404, 403, 500;
    /// [`CloudError::Transport`]; [`CloudError::Authentication`];
    /// [`CloudError::InvalidResponse`] when the answer holds no endpoint.
    pub async fn update_webhook_endpoint(
        &self,
        webhook_endpoint_id: Uuid,
        request: UpdateWebhookEndpointRequest,
    ) -> Result<WebhookEndpoint, CloudError> {
        let op = UPDATE_WEBHOOK_ENDPOINT.on(webhook_endpoint_id);
        check_metadata(op, None, request.metadata.as_ref())?;
        let api = &self.inner.notification;
        let answer = self
            .call(op, || {
                api.update_webhook_endpoint()
                    .webhook_endpoint_id(webhook_endpoint_id)
                    .body(request.clone())
                    .send()
            })
            .await?;
        let position = answer
            .iter()
            .position(|e| e.id == webhook_endpoint_id)
            .unwrap_or(0);
        answer
            .into_iter()
            .nth(position)
            .ok_or_else(|| CloudError::InvalidResponse {
                operation: op.id,
                reason: "the answer holds no webhook endpoint".to_owned(),
            })
    }

    /// Deletes a webhook endpoint, immediately and irreversibly.
    ///
    /// # Errors
    /// [`CloudError::Api`] with 404, 403, 500; [`CloudError::Transport`];
    /// [`CloudError::Authentication`].
    pub async fn delete_webhook_endpoint(
        &self,
        webhook_endpoint_id: Uuid,
    ) -> Result<(), CloudError> {
        let api = &self.inner.notification;
        self.delete(DELETE_WEBHOOK_ENDPOINT.on(webhook_endpoint_id), || {
            api.delete_webhook_endpoint()
                .webhook_endpoint_id(webhook_endpoint_id)
                .send()
        })
        .await
    }

    /// One page of the events that could not be delivered to a webhook endpoint (the
    /// first delivery and its 10 retries failed).
    ///
    /// # Errors
    /// [`CloudError::InvalidInput`] (nothing sent) for a page below 0 or a page size
    /// outside 1..=100; [`CloudError::Api`] with 404 for an unknown endpoint, 403, 500;
    /// [`CloudError::Transport`]; [`CloudError::Authentication`].
    pub async fn list_missed_webhooks_page(
        &self,
        webhook_endpoint_id: Uuid,
        page: i64,
        per_page: i64,
    ) -> Result<Vec<MissedWebhook>, CloudError> {
        let op = LIST_MISSED_WEBHOOKS.on(webhook_endpoint_id).at_page(page);
        let per_page = check_page(op, page, per_page)?;
        let api = &self.inner.notification;
        self.call(op, || {
            api.list_missed_webhooks()
                .webhook_endpoint_id(webhook_endpoint_id)
                .page(page)
                .per_page(per_page)
                .send()
        })
        .await
    }

    /// Every missed event of a webhook endpoint, fetched page after page.
    ///
    /// # Errors
    /// The stream yields the errors of [`CloudClient::list_missed_webhooks_page`] and
    /// ends after the first one.
    pub fn list_missed_webhooks(
        &self,
        webhook_endpoint_id: Uuid,
    ) -> BoxStream<'static, Result<MissedWebhook, CloudError>> {
        self.pages(move |client, page, per_page| {
            Box::pin(async move {
                let items = client
                    .list_missed_webhooks_page(webhook_endpoint_id, page, per_page)
                    .await?;
                Ok((items, None))
            })
        })
    }

    /// Every missed event of a webhook endpoint, collected.
    ///
    /// # Errors
    /// As [`CloudClient::list_missed_webhooks_page`].
    pub async fn list_missed_webhooks_all(
        &self,
        webhook_endpoint_id: Uuid,
    ) -> Result<Vec<MissedWebhook>, CloudError> {
        self.list_missed_webhooks(webhook_endpoint_id)
            .try_collect()
            .await
    }
}
