//! The container operations of [`CloudClient`].

#[allow(clippy::wildcard_imports)]
use super::machinery::*;
#[allow(clippy::wildcard_imports)]
use super::*;

impl CloudClient {
    // ------------------------------------------------------------------ containers

    /// Creates a container in the organization, with the files of `request.files`
    /// registered at once (each `pending`, with its `uploadInfo`).
    ///
    /// Not retried once the request may have reached the service (see the
    /// [module documentation](crate::cloud)).
    ///
    /// # Errors
    /// [`CloudError::InvalidInput`] (nothing sent) for metadata over its limits, an
    /// invalid file path or a negative size; [`CloudError::Api`] with 409 for two files
    /// with the same path, 422 for a region the service does not know, 403, 500;
    /// [`CloudError::Transport`] (for a cut answer: the container most likely exists);
    /// [`CloudError::Authentication`].
    pub async fn create_container(
        &self,
        request: CreateContainerRequest,
    ) -> Result<Container, CloudError> {
        let op = CREATE_CONTAINER;
        check_metadata(op, None, request.metadata.as_ref())?;
        check_files(op, &request.files)?;
        let (api, org) = (&self.inner.cloud, self.organization_id());
        self.call(op, || {
            api.create_container()
                .organization_id(org)
                .body(request.clone())
                .send()
        })
        .await
    }

    /// A container with its files (and the `uploadInfo` of `pending` ones).
    ///
    /// # Errors
    /// [`CloudError::Api`] with 404 for an unknown container (or one of another
    /// organization), 403, 500; [`CloudError::Transport`]; [`CloudError::Authentication`].
    pub async fn get_container(&self, container_id: Uuid) -> Result<Container, CloudError> {
        let api = &self.inner.cloud;
        self.call(GET_CONTAINER.on(container_id), || {
            api.get_container().container_id(container_id).send()
        })
        .await
    }

    /// Updates a container; `request.metadata` replaces the whole metadata object.
    ///
    /// # Errors
    /// [`CloudError::InvalidInput`] (nothing sent) for metadata over its limits;
    /// [`CloudError::Api`] with 404, 403, 500; [`CloudError::Transport`];
    /// [`CloudError::Authentication`].
    pub async fn update_container(
        &self,
        container_id: Uuid,
        request: UpdateContainerRequest,
    ) -> Result<Container, CloudError> {
        let op = UPDATE_CONTAINER.on(container_id);
        check_metadata(op, None, request.metadata.as_ref())?;
        let api = &self.inner.cloud;
        self.call(op, || {
            api.update_container()
                .container_id(container_id)
                .body(request.clone())
                .send()
        })
        .await
    }

    /// Deletes a container and all its files, immediately and irreversibly; its
    /// processings remain (with `containerId` null).
    ///
    /// # Errors
    /// [`CloudError::Api`] with 409 while one of its processings is `pending` or
    /// `processing`, 404 for an unknown container, 403, 500; [`CloudError::Transport`];
    /// [`CloudError::Authentication`].
    pub async fn delete_container(&self, container_id: Uuid) -> Result<(), CloudError> {
        let api = &self.inner.cloud;
        self.delete(DELETE_CONTAINER.on(container_id), || {
            api.delete_container().container_id(container_id).send()
        })
        .await
    }

    /// Registers files in a container; each is `pending` with its `uploadInfo` (upload
    /// them with [`crate::transfer`]).
    ///
    /// Not retried once the request may have reached the service.
    ///
    /// # Errors
    /// [`CloudError::InvalidInput`] (nothing sent) for an invalid path, metadata over
    /// its limits or a negative size; [`CloudError::Api`] with 409 for a path another
    /// file holds, 404 for an unknown container, 403, 500; [`CloudError::Transport`];
    /// [`CloudError::Authentication`].
    pub async fn add_container_files(
        &self,
        container_id: Uuid,
        files: Vec<CreateContainerFile>,
    ) -> Result<Vec<ContainerFile>, CloudError> {
        let op = ADD_CONTAINER_FILES.on(container_id);
        check_files(op, &files)?;
        let body = cloud::types::AddContainerFilesRequest { files };
        let api = &self.inner.cloud;
        self.call(op, || {
            api.add_container_files()
                .container_id(container_id)
                .body(body.clone())
                .send()
        })
        .await
    }

    /// Changes a container file's `type`, `path` and/or `metadata` (which replaces the
    /// whole object); absent fields are left unchanged.
    ///
    /// # Errors
    /// [`CloudError::InvalidInput`] (nothing sent) for an invalid path or metadata over
    /// its limits; [`CloudError::Api`] with 409 for a path another file of the container
    /// holds, 422 for a type the service does not know, 404, 403, 500;
    /// [`CloudError::Transport`]; [`CloudError::Authentication`].
    pub async fn update_container_file(
        &self,
        container_file_id: Uuid,
        request: UpdateContainerFileRequest,
    ) -> Result<ContainerFile, CloudError> {
        let op = UPDATE_CONTAINER_FILE.on(container_file_id);
        if let Some(path) = &request.path {
            limits::check_container_path(path)
                .map_err(|l| CloudError::invalid_input(op.id, None, l))?;
        }
        check_metadata(op, None, request.metadata.as_ref())?;
        let api = &self.inner.cloud;
        self.call(op, || {
            api.update_container_file()
                .container_file_id(container_file_id)
                .body(request.clone())
                .send()
        })
        .await
    }

    /// Deletes a container file, immediately and irreversibly.
    ///
    /// # Errors
    /// [`CloudError::Api`] with 404, 403, 500; [`CloudError::Transport`];
    /// [`CloudError::Authentication`].
    pub async fn delete_container_file(&self, container_file_id: Uuid) -> Result<(), CloudError> {
        let api = &self.inner.cloud;
        self.delete(DELETE_CONTAINER_FILE.on(container_file_id), || {
            api.delete_container_file()
                .container_file_id(container_file_id)
                .send()
        })
        .await
    }

    /// One page of the organization's containers (`page` from 0, `per_page` 1..=100),
    /// with the total number of containers (`num_items`).
    ///
    /// # Errors
    /// [`CloudError::InvalidInput`] (nothing sent) for a page below 0 or a page size
    /// outside 1..=100; [`CloudError::Api`] with 403, 500; [`CloudError::Transport`];
    /// [`CloudError::Authentication`].
    pub async fn list_containers_page(
        &self,
        page: i64,
        per_page: i64,
    ) -> Result<ContainerList, CloudError> {
        let op = LIST_CONTAINERS.at_page(page);
        let per_page = check_page(op, page, per_page)?;
        let (api, org) = (&self.inner.cloud, self.organization_id());
        self.call(op, || {
            api.list_containers()
                .organization_id(org)
                .page(page)
                .per_page(per_page)
                .send()
        })
        .await
    }

    /// Every container of the organization, fetched page after page as the stream is
    /// read.
    ///
    /// # Errors
    /// The stream yields the errors of [`CloudClient::list_containers_page`] and ends
    /// after the first one.
    pub fn list_containers(&self) -> BoxStream<'static, Result<Container, CloudError>> {
        self.pages(|client, page, per_page| {
            Box::pin(async move {
                let list = client.list_containers_page(page, per_page).await?;
                Ok((list.containers, Some(list.num_items)))
            })
        })
    }

    /// Every container of the organization, collected.
    ///
    /// # Errors
    /// As [`CloudClient::list_containers_page`].
    pub async fn list_containers_all(&self) -> Result<Vec<Container>, CloudError> {
        self.list_containers().try_collect().await
    }
}
