//! The cloud service: `/api/v1/info` and every `/api/v2` operation of `openapi/cloud.yaml`,
//! with the rules its descriptions state.
//!
//! Order of checks in each route: authentication (401/403), request syntax (400),
//! invalid values (422), existence (404), state conflicts (409).

use std::sync::Arc;

use axum::Router;
use axum::body::Bytes;
use axum::extract::{Path, RawQuery};
use axum::response::{IntoResponse as _, Response};
use axum::routing::{get, post};
use serde_json::Value;
use svc_cloud_api::cloud::types::{
    AddContainerFilesRequest, ContainerList, CreateContainerFile, CreateContainerRequest,
    ErrorCount, OutputFile, Processing, ProcessingList, ServerInfo, StartProcessingRequest,
    UpdateContainerFileRequest, UpdateContainerRequest,
};
use svc_cloud_api::enums::{
    ContainerFileStatus, ContainerFileType, ContainerRegion, ProcessingStatus, ProcessingType,
    RegionStatus,
};
use uuid::Uuid;

use crate::http::{
    Api, ApiError, ApiResult, Authorized, InOrganization, check_enum, check_metadata_value,
    check_path_value, ok, page_of, paging, parse_body, uuid_segment,
};
use crate::idp::SCOPE_CLOUD;
use crate::state::{
    App, Caller, ContainerRecord, Db, FileRecord, ProcessingRecord, is_running, now,
};
use crate::storage::Storage;

pub fn router(app: Arc<App>) -> Router {
    let served = |id: &str| !app.config.missing_operations.iter().any(|m| m == id);
    let processing = if served("cancelProcessing") {
        get(get_processing).post(cancel_processing)
    } else {
        get(get_processing)
    };
    let mut router = Router::new();
    if served("cancelProcessingByCancelPath") {
        // The vendor collection's route for the same action.
        router = router.route("/api/v2/processings/{id}/cancel", post(cancel_processing));
    }
    router
        .route("/api/v1/info", get(server_info))
        .route(
            "/api/v2/organizations/{org}/containers",
            get(list_containers).post(create_container),
        )
        .route(
            "/api/v2/containers/{id}",
            get(get_container)
                .patch(update_container)
                .delete(delete_container),
        )
        .route("/api/v2/containers/{id}/files", post(add_files))
        .route(
            "/api/v2/container-files/{id}",
            axum::routing::patch(update_file).delete(delete_file),
        )
        .route(
            "/api/v2/organizations/{org}/processings",
            get(list_processings).post(start_processing),
        )
        .route("/api/v2/processings/{id}", processing)
        .route("/api/v2/processings/{id}/archive", post(archive_processing))
        .route("/api/v2/processings/{id}/output", get(list_outputs))
        .route("/api/v2/processings/{id}/errors", get(list_errors))
        .fallback(|| async { ApiError::new(axum::http::StatusCode::NOT_FOUND, "no such route") })
        .with_state(app)
}

/// The cloud service's routes: tokens with the `cloud` scope.
pub struct CloudApi;

impl Api for CloudApi {
    const SCOPE: &'static str = SCOPE_CLOUD;

    /// Containers past their expiration date go before any route looks at them.
    fn before(app: &App) {
        app.purge_expired();
    }
}

/// The caller of a route.
type Cloud = Authorized<CloudApi>;
/// The caller of an organization-scoped route, and the organization.
type CloudOrg = InOrganization<CloudApi>;

async fn server_info(_: Cloud) -> ApiResult<Response> {
    let regions = ContainerRegion::KNOWN
        .iter()
        .map(|r| ((*r).to_owned(), RegionStatus::Online))
        .collect();
    Ok(ok(ServerInfo {
        version: Some(format!("{}-emulator", env!("CARGO_PKG_VERSION"))),
        engine_versions: vec!["gnss-engine-1.0.0".into(), "ins-engine-1.0.0".into()],
        api_version: Some("2.0".into()),
        regions_status: regions,
    }))
}

// ---------------------------------------------------------------------------------------
// Containers

async fn list_containers(
    InOrganization { app, org, .. }: CloudOrg,
    RawQuery(query): RawQuery,
) -> ApiResult<Response> {
    let (page, per_page) = paging(query.as_deref())?;
    let (num_items, views) = {
        let db = app.db();
        let all: Vec<&ContainerRecord> = db
            .containers
            .values()
            .filter(|c| c.organization_id == org)
            .collect();
        let views: Vec<_> = page_of(&all, page, per_page)
            .into_iter()
            .map(|c| app.container_view_unsigned(&db, c))
            .collect();
        (all.len() as u64, views)
    };
    // The forms are signed without the lock: other requests go on meanwhile.
    let containers = views
        .into_iter()
        .map(|view| view.sign(&app.storage))
        .collect();
    Ok(ok(ContainerList {
        num_items,
        containers,
    }))
}

fn check_new_files(files: Option<&Value>) -> ApiResult<()> {
    let Some(files) = files else { return Ok(()) };
    let Some(files) = files.as_array() else {
        return Err(ApiError::bad_request("`files` must be an array"));
    };
    for (i, f) in files.iter().enumerate() {
        check_enum(
            f.get("type"),
            &format!("files[{i}].type"),
            ContainerFileType::KNOWN,
        )?;
        check_path_value(f.get("path"), &format!("files[{i}].path"))?;
        check_metadata_value(f.get("metadata"), &format!("files[{i}].metadata"))?;
        if let Some(size) = f.get("size").and_then(Value::as_i64).filter(|s| *s < 0) {
            return Err(ApiError::invalid(format!(
                "`files[{i}].size` must not be negative, got {size}"
            )));
        }
    }
    Ok(())
}

/// Registers files in a container, all or nothing: a path held by another file of the
/// container, or repeated in the request, answers 409.
fn register_files(
    app: &App,
    db: &mut Db,
    container_id: Uuid,
    creator: Uuid,
    files: Vec<CreateContainerFile>,
) -> ApiResult<Vec<Uuid>> {
    let container = db
        .containers
        .get(&container_id)
        .ok_or_else(|| ApiError::not_found("container", container_id))?;
    let bucket = Storage::bucket_for_region(container.region.as_str());
    let mut taken: Vec<String> = container
        .files
        .iter()
        .filter_map(|f| db.files.get(f))
        .map(|f| f.path.clone())
        .collect();
    for f in &files {
        if taken.contains(&f.path) {
            return Err(ApiError::conflict(format!(
                "a file already has the path `{}` in this container",
                f.path
            )));
        }
        taken.push(f.path.clone());
    }
    let at = now();
    let mut ids = Vec::new();
    for f in files {
        let id = Uuid::new_v4();
        let record = FileRecord {
            id,
            container_id,
            type_: f.type_,
            status: ContainerFileStatus::Pending,
            size: u64::try_from(f.size).unwrap_or(0),
            path: f.path,
            metadata: f.metadata.unwrap_or_default(),
            created_at: at,
            updated_at: at,
            creator_id: creator,
            key: format!("containers/{container_id}/files/{id}"),
            bucket: bucket.clone(),
        };
        db.files.insert(id, record);
        ids.push(id);
    }
    if let Some(container) = db.containers.get_mut(&container_id) {
        container.files.extend(ids.iter().copied());
        container.updated_at = at;
    }
    let _ = app;
    Ok(ids)
}

async fn create_container(
    InOrganization {
        app, caller, org, ..
    }: CloudOrg,
    body: Bytes,
) -> ApiResult<Response> {
    let request: CreateContainerRequest = parse_body(&body, false, |v| {
        check_enum(v.get("region"), "region", ContainerRegion::KNOWN)?;
        check_metadata_value(v.get("metadata"), "metadata")?;
        check_new_files(v.get("files"))
    })?;
    let at = now();
    let id = Uuid::new_v4();
    let mut db = app.db();
    db.containers.insert(
        id,
        ContainerRecord {
            id,
            organization_id: org,
            region: request.region,
            metadata: request.metadata.unwrap_or_default(),
            created_at: at,
            updated_at: at,
            expiration_date: svc_cloud_api::Timestamp(at.0 + app.config.container_lifetime),
            creator_id: caller.user_id,
            files: Vec::new(),
        },
    );
    if let Err(e) = register_files(&app, &mut db, id, caller.user_id, request.files) {
        db.containers.shift_remove(&id);
        return Err(e);
    }
    let record = db
        .containers
        .get(&id)
        .ok_or_else(|| ApiError::internal("container vanished"))?;
    Ok(ok(app.container_view(&db, record)))
}

/// The container, if it exists and belongs to the caller's organization (404 otherwise).
fn own_container<'a>(db: &'a Db, caller: &Caller, id: Uuid) -> ApiResult<&'a ContainerRecord> {
    db.containers
        .get(&id)
        .filter(|c| c.organization_id == caller.organization_id)
        .ok_or_else(|| ApiError::not_found("container", id))
}

async fn get_container(
    Path(id): Path<String>,
    Authorized { app, caller, .. }: Cloud,
) -> ApiResult<Response> {
    let id = uuid_segment(&id, "container")?;
    let db = app.db();
    let record = own_container(&db, &caller, id)?;
    Ok(ok(app.container_view(&db, record)))
}

async fn update_container(
    Path(id): Path<String>,
    Authorized { app, caller, .. }: Cloud,
    body: Bytes,
) -> ApiResult<Response> {
    let id = uuid_segment(&id, "container")?;
    let request: UpdateContainerRequest = parse_body(&body, true, |v| {
        check_metadata_value(v.get("metadata"), "metadata")
    })?;
    let mut db = app.db();
    own_container(&db, &caller, id)?;
    if let Some(record) = db.containers.get_mut(&id) {
        if let Some(metadata) = request.metadata {
            record.metadata = metadata;
        }
        record.updated_at = now();
    }
    let record = own_container(&db, &caller, id)?;
    Ok(ok(app.container_view(&db, record)))
}

async fn delete_container(
    Path(id): Path<String>,
    Authorized { app, caller, .. }: Cloud,
) -> ApiResult<Response> {
    let id = uuid_segment(&id, "container")?;
    let objects = {
        let mut db = app.db();
        own_container(&db, &caller, id)?;
        if crate::state::has_running_processing(&db, id) {
            return Err(ApiError::conflict(format!(
                "container {id} has a processing that is pending or processing; cancel it or wait for it to end"
            )));
        }
        crate::state::remove_container(&mut db, id).unwrap_or_default()
    };
    app.delete_objects(objects);
    Ok(ok(serde_json::json!({})))
}

async fn add_files(
    Path(id): Path<String>,
    Authorized { app, caller, .. }: Cloud,
    body: Bytes,
) -> ApiResult<Response> {
    let id = uuid_segment(&id, "container")?;
    let request: AddContainerFilesRequest =
        parse_body(&body, false, |v| check_new_files(v.get("files")))?;
    let mut db = app.db();
    own_container(&db, &caller, id)?;
    let ids = register_files(&app, &mut db, id, caller.user_id, request.files)?;
    let files: Vec<_> = ids
        .iter()
        .filter_map(|f| db.files.get(f))
        .map(|f| app.file_view(f))
        .collect();
    // 201 Created, as the service answers (its own API collection checks for it).
    Ok((axum::http::StatusCode::CREATED, axum::Json(files)).into_response())
}

/// The file, if its container belongs to the caller's organization (404 otherwise).
fn own_file<'a>(db: &'a Db, caller: &Caller, id: Uuid) -> ApiResult<&'a FileRecord> {
    db.files
        .get(&id)
        .filter(|f| own_container(db, caller, f.container_id).is_ok())
        .ok_or_else(|| ApiError::not_found("container file", id))
}

async fn update_file(
    Path(id): Path<String>,
    Authorized { app, caller, .. }: Cloud,
    body: Bytes,
) -> ApiResult<Response> {
    let id = uuid_segment(&id, "container file")?;
    let request: UpdateContainerFileRequest = parse_body(&body, true, |v| {
        check_enum(v.get("type"), "type", ContainerFileType::KNOWN)?;
        check_path_value(v.get("path"), "path")?;
        check_metadata_value(v.get("metadata"), "metadata")
    })?;
    let mut db = app.db();
    let file = own_file(&db, &caller, id)?;
    if let Some(path) = &request.path {
        let container = own_container(&db, &caller, file.container_id)?;
        let collision = container
            .files
            .iter()
            .filter(|f| **f != id)
            .filter_map(|f| db.files.get(f))
            .any(|f| &f.path == path);
        if collision {
            return Err(ApiError::conflict(format!(
                "another file of the container has the path `{path}`"
            )));
        }
    }
    let at = now();
    if let Some(file) = db.files.get_mut(&id) {
        if let Some(type_) = request.type_ {
            file.type_ = type_;
        }
        if let Some(path) = request.path {
            file.path = path;
        }
        if let Some(metadata) = request.metadata {
            file.metadata = metadata;
        }
        file.updated_at = at;
    }
    let file = own_file(&db, &caller, id)?;
    Ok(ok(app.file_view(file)))
}

async fn delete_file(
    Path(id): Path<String>,
    Authorized { app, caller, .. }: Cloud,
) -> ApiResult<Response> {
    let id = uuid_segment(&id, "container file")?;
    let object = {
        let mut db = app.db();
        let container_id = own_file(&db, &caller, id)?.container_id;
        let file = db.files.remove(&id);
        if let Some(container) = db.containers.get_mut(&container_id) {
            container.files.retain(|f| *f != id);
            container.updated_at = now();
        }
        file.map(|f| (f.bucket, f.key))
    };
    app.delete_objects(object.into_iter().collect());
    Ok(ok(serde_json::json!({})))
}

// ---------------------------------------------------------------------------------------
// Processings

async fn list_processings(
    InOrganization { app, org, .. }: CloudOrg,
    RawQuery(query): RawQuery,
) -> ApiResult<Response> {
    let (page, per_page) = paging(query.as_deref())?;
    let db = app.db();
    let all: Vec<&Processing> = db
        .processings
        .values()
        .map(|p| &p.processing)
        .filter(|p| p.organization_id == Some(org))
        .collect();
    let processings = page_of(&all, page, per_page).into_iter().cloned().collect();
    Ok(ok(ProcessingList {
        num_items: all.len() as u64,
        processings,
    }))
}

async fn start_processing(
    InOrganization {
        app, caller, org, ..
    }: CloudOrg,
    body: Bytes,
) -> ApiResult<Response> {
    let request: StartProcessingRequest = parse_body(&body, false, |v| {
        if let Some(json) = v.get("processingJson").filter(|j| !j.is_object()) {
            return Err(ApiError::invalid(format!(
                "`processingJson` must be a JSON object (a complete processing configuration), got {}",
                kind_of(json)
            )));
        }
        if let Some(name) = v.get("name").filter(|n| !n.is_string() && !n.is_null()) {
            return Err(ApiError::bad_request(format!(
                "`name` must be a string or null, got {}",
                kind_of(name)
            )));
        }
        check_metadata_value(v.get("metadata"), "metadata")
    })?;
    let processing = {
        let mut db = app.db();
        let container = own_container(&db, &caller, request.container_id)?;
        let region = container.region.clone();
        let credits = db.organizations.get(&org).map(|o| o.credits).unwrap_or(0);
        if credits == 0 {
            return Err(ApiError::forbidden(
                "The organization has no processing credit left",
            ));
        }
        if let Some(ongoing) = db
            .processings
            .values()
            .find(|p| p.processing.organization_id == Some(org) && is_running(&p.processing))
        {
            return Err(ApiError::conflict(format!(
                "The organization already has an ongoing processing ({}); only one runs at a time",
                ongoing.processing.id
            )));
        }
        let not_ready: Vec<&str> = container
            .files
            .iter()
            .filter_map(|f| db.files.get(f))
            .filter(|f| f.status != ContainerFileStatus::Ready)
            .map(|f| f.path.as_str())
            .collect();
        if !not_ready.is_empty() {
            return Err(ApiError::conflict(format!(
                "Not every registered file is uploaded; waiting for: {}",
                not_ready.join(", ")
            )));
        }
        if let Some(o) = db.organizations.get_mut(&org) {
            o.credits -= 1;
        }
        let at = now();
        let type_ = processing_type(&request.processing_json);
        let processing = Processing {
            id: Uuid::new_v4(),
            name: request.name,
            type_: Some(type_),
            status: ProcessingStatus::Pending,
            region: Some(region.clone()),
            processing_result: None,
            processing_duration: None,
            processing_step: None,
            processing_progress: None,
            archive_scheduled_at: None,
            created_at: Some(at),
            updated_at: Some(at),
            creator_id: Some(caller.user_id),
            organization_id: Some(org),
            container_id: Some(request.container_id),
            error_count: Some(ErrorCount {
                errors: 0,
                warnings: 0,
            }),
            mission_length: None,
            mission_location_country: None,
            mission_location_region: None,
            mission_location_place: None,
            metadata: Some(request.metadata.unwrap_or_default()),
            processing_json: request.processing_json,
        };
        db.processings.insert(
            processing.id,
            ProcessingRecord {
                processing: processing.clone(),
                errors: Vec::new(),
                outputs: Vec::new(),
                bucket: Storage::bucket_for_region(region.as_str()),
            },
        );
        processing
    };
    crate::engine::spawn(app.clone(), processing.id);
    Ok(ok(processing))
}

/// A processing's `type` from its settings document: the processing type the settings
/// name, `processing.type` (without it, a top-level `type`, as in
/// `samples/processing.json`), is `ins` when it starts with `ins` (`insSingle`, ...: GNSS
/// fused with inertial data), `gnss` otherwise (`gnssSingle`, ...) and when none is named.
fn processing_type(settings: &serde_json::Map<String, Value>) -> ProcessingType {
    let named = settings
        .get("processing")
        .and_then(|p| p.get("type"))
        .and_then(Value::as_str)
        .or_else(|| settings.get("type").and_then(Value::as_str));
    match named {
        Some(name) if name.starts_with("ins") => ProcessingType::Ins,
        _ => ProcessingType::Gnss,
    }
}

fn kind_of(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

fn own_processing<'a>(db: &'a Db, caller: &Caller, id: Uuid) -> ApiResult<&'a ProcessingRecord> {
    db.processings
        .get(&id)
        .filter(|p| p.processing.organization_id == Some(caller.organization_id))
        .ok_or_else(|| ApiError::not_found("processing", id))
}

async fn get_processing(
    Path(id): Path<String>,
    Authorized { app, caller, .. }: Cloud,
) -> ApiResult<Response> {
    let id = uuid_segment(&id, "processing")?;
    let db = app.db();
    Ok(ok(own_processing(&db, &caller, id)?.processing.clone()))
}

async fn cancel_processing(
    Path(id): Path<String>,
    Authorized { app, caller, .. }: Cloud,
) -> ApiResult<Response> {
    let id = uuid_segment(&id, "processing")?;
    let processing = {
        let mut db = app.db();
        let record = own_processing(&db, &caller, id)?;
        if !is_running(&record.processing) {
            return Err(ApiError::conflict(format!(
                "processing {id} is `{}`; only a pending or processing one can be canceled",
                record.processing.status
            )));
        }
        let record = db
            .processings
            .get_mut(&id)
            .ok_or_else(|| ApiError::not_found("processing", id))?;
        record.processing.status = ProcessingStatus::Canceled;
        record.processing.updated_at = Some(now());
        record.processing.clone()
    };
    crate::notify::publish(&app, &processing, false);
    Ok(ok(processing))
}

async fn archive_processing(
    Path(id): Path<String>,
    Authorized { app, caller, .. }: Cloud,
) -> ApiResult<Response> {
    let id = uuid_segment(&id, "processing")?;
    let (processing, changed, objects) = {
        let mut db = app.db();
        own_processing(&db, &caller, id)?;
        let record = db
            .processings
            .get_mut(&id)
            .ok_or_else(|| ApiError::not_found("processing", id))?;
        let at = now();
        let changed = record.processing.status != ProcessingStatus::Archived;
        if changed {
            record.processing.status = ProcessingStatus::Archived;
            record.processing.archive_scheduled_at = Some(at);
            record.processing.updated_at = Some(at);
        }
        let bucket = record.bucket.clone();
        let objects: Vec<_> = record
            .outputs
            .drain(..)
            .map(|(_, key)| (bucket.clone(), key))
            .collect();
        (record.processing.clone(), changed, objects)
    };
    // Archiving deletes every result file of the processing.
    app.delete_objects(objects);
    if changed {
        crate::notify::publish(&app, &processing, false);
    }
    Ok(ok(processing))
}

async fn list_outputs(
    Path(id): Path<String>,
    Authorized { app, caller, .. }: Cloud,
) -> ApiResult<Response> {
    let id = uuid_segment(&id, "processing")?;
    let db = app.db();
    let record = own_processing(&db, &caller, id)?;
    if record.processing.status != ProcessingStatus::Processed {
        return Err(ApiError::conflict(format!(
            "processing {id} is `{}`; outputs are listed only when it is `processed`",
            record.processing.status
        )));
    }
    let outputs: Vec<OutputFile> = record
        .outputs
        .iter()
        .map(|(path, key)| OutputFile {
            path: path.clone(),
            url: app.storage.presign_download(&record.bucket, key),
        })
        .collect();
    Ok(ok(outputs))
}

async fn list_errors(
    Path(id): Path<String>,
    Authorized { app, caller, .. }: Cloud,
) -> ApiResult<Response> {
    let id = uuid_segment(&id, "processing")?;
    let db = app.db();
    Ok(ok(own_processing(&db, &caller, id)?.errors.clone()))
}
