//! The session: every operation runs through [`Unit::call`], which logs in again once
//! when a reboot has ended the token; login, logout and passwords; the settings lock;
//! reboots and waiting for the unit to come back.

use std::time::Duration;

use ins_device_api::enums::UserName;
use ins_device_api::types::{self, DeviceInfo};
use ins_device_api::{AuthToken, Client, Password};
use tracing::Instrument as _;

use super::error::loggable;
use super::{Holds, Unit, UnitError};

impl Unit {
    /// Runs one operation; on a 401 while logged in (a reboot ended the token), logs in
    /// again with the remembered credentials and runs it once more.
    pub(super) async fn call<T, F, Fut>(
        &self,
        operation: &'static str,
        f: F,
    ) -> Result<T, UnitError>
    where
        F: Fn(Client) -> Fut,
        Fut: std::future::Future<
                Output = Result<
                    ins_device_api::ResponseValue<T>,
                    ins_device_api::Error<types::Error>,
                >,
            >,
    {
        let span = tracing::info_span!(
            "unit",
            op = operation,
            link = %crate::observe::url(&self.link)
        );
        let started = std::time::Instant::now();
        let result = self
            .call_in_span(operation, f)
            .instrument(span.clone())
            .await;
        let elapsed_ms = crate::observe::millis(started.elapsed());
        match &result {
            Ok(_) => tracing::debug!(parent: &span, elapsed_ms, "unit operation succeeded"),
            Err(e) => tracing::debug!(
                parent: &span,
                elapsed_ms,
                status = e.status(),
                kind = %e.kind(),
                error = %loggable(e),
                "unit operation failed"
            ),
        }
        result
    }

    async fn call_in_span<T, F, Fut>(&self, operation: &'static str, f: F) -> Result<T, UnitError>
    where
        F: Fn(Client) -> Fut,
        Fut: std::future::Future<
                Output = Result<
                    ins_device_api::ResponseValue<T>,
                    ins_device_api::Error<types::Error>,
                >,
            >,
    {
        // Logged in, but the token is gone (our own reboot cleared it): log in again
        // first, so that the request runs as this session's user, not the default user.
        if self.state.token().is_none() {
            let credentials = self.credentials().clone();
            if let Some((user, password)) = credentials {
                tracing::debug!("no token since the reboot: logging in again first");
                self.login_once(user, password).await?;
            }
        }
        match f(self.client.clone()).await {
            Ok(v) => Ok(v.into_inner()),
            Err(e) => {
                let error = UnitError::from_client(operation, e);
                let had_token = self.state.token().is_some();
                let credentials = self.credentials().clone();
                match (error.status(), had_token, credentials) {
                    (Some(401), true, Some((user, password))) => {
                        tracing::info!(
                            "the unit answered 401 (its token ended, e.g. by a reboot): \
                             logging in again and repeating once"
                        );
                        self.state.set_token(None);
                        self.forget_lock();
                        self.login_once(user, password).await?;
                        f(self.client.clone())
                            .await
                            .map(|v| v.into_inner())
                            .map_err(|e| UnitError::from_client(operation, e))
                    }
                    _ => Err(error),
                }
            }
        }
    }

    pub(super) async fn login_once(
        &self,
        user: UserName,
        password: Password,
    ) -> Result<(), UnitError> {
        let span = tracing::info_span!(
            "unit_login",
            user = %user,
            link = %crate::observe::url(&self.link)
        );
        let body = types::LoginRequest { user, password };
        let token = match self
            .client
            .login()
            .body(body)
            .send()
            .instrument(span.clone())
            .await
        {
            Ok(answer) => answer.into_inner().token,
            Err(e) => {
                let e = UnitError::from_client("login", e);
                tracing::info!(
                    parent: &span,
                    status = e.status(),
                    kind = %e.kind(),
                    error = %loggable(&e),
                    "login refused or failed"
                );
                return Err(e);
            }
        };
        self.state.set_token(Some(token));
        tracing::info!(parent: &span, "logged in");
        Ok(())
    }

    /// Logs in; the session remembers the credentials to log in again after a reboot.
    ///
    /// # Errors
    /// [`UnitError::Api`] with status 401 for a wrong user or password.
    pub async fn login(&self, user: UserName, password: Password) -> Result<(), UnitError> {
        self.login_once(user.clone(), password.clone()).await?;
        // A lock held by the previous token is not the new token's.
        self.forget_lock();
        *self.credentials() = Some((user, password));
        Ok(())
    }

    /// Logs out (the unit forgets the token and releases a lock it held); later requests
    /// act as the default user.
    pub async fn logout(&self) -> Result<(), UnitError> {
        let result = match self.state.token() {
            Some(_) => self
                .client
                .logout()
                .send()
                .await
                .map(|_| ())
                .map_err(|e| UnitError::from_client("logout", e))
                // The unit no longer knows the token (a reboot, the lock's idle time, or
                // an earlier logout whose answer was lost): it is logged out all the same.
                .or_else(|e| {
                    if e.status() == Some(401) {
                        Ok(())
                    } else {
                        Err(e)
                    }
                }),
            None => Ok(()),
        };
        self.state.set_token(None);
        self.forget_lock();
        *self.credentials() = None;
        match &result {
            Ok(()) => tracing::info!(link = %crate::observe::url(&self.link), "logged out"),
            Err(e) => tracing::info!(
                link = %crate::observe::url(&self.link),
                error = %loggable(e),
                "logout failed (the session forgot its token all the same)"
            ),
        }
        result
    }

    /// Changes a password: the logged-in user's own (`user` = `None`) or, for `setup`,
    /// another user's. An empty password clears it. Changing one's own password updates
    /// the remembered credentials.
    ///
    /// # Errors
    /// 401 without a login; 403 for another user's password by anyone but `setup`.
    pub async fn change_password(
        &self,
        user: Option<UserName>,
        password: Password,
    ) -> Result<(), UnitError> {
        let body = types::ChangePasswordRequest {
            user: user.clone(),
            password: password.clone(),
        };
        self.call("changePassword", |c| {
            let body = body.clone();
            async move { c.change_password().body(body).send().await }
        })
        .await?;
        let mut credentials = self.credentials();
        let own = match credentials.as_mut() {
            Some((me, remembered)) if user.as_ref().is_none_or(|u| u == me) => {
                *remembered = password;
                true
            }
            _ => false,
        };
        tracing::info!(
            for_user = user.as_ref().map(tracing::field::display),
            own,
            "password changed"
        );
        Ok(())
    }

    /// Takes the settings lock for this session's token (needs a login). Locks nest:
    /// taken again while held, the lock is renewed and one more hold counted, and only
    /// the [`unlock`](Self::unlock) matching the first `lock` releases it. Other
    /// sessions' writes are refused (409) until then.
    ///
    /// # Errors
    /// 409 while another session holds the lock (also when this session's own lock
    /// ended meanwhile, e.g. idle for 60 s, and another took it); 401 without a login;
    /// 403 without the Setting WRITE right. The session's holds are unchanged. A call
    /// abandoned before its answer (a cancel) counts as a hold, so that the matching
    /// `unlock` releases what the unit may have granted.
    pub async fn lock(&self) -> Result<(), UnitError> {
        let _gate = self.locks.gate.lock().await;
        // Counted before the request: if this call is abandoned while the answer is in
        // flight (the unit may have granted the lock), the matching `unlock` still
        // releases it. Taken back below when the unit refuses.
        let before = self.locks.with(|h| {
            let before = *h;
            h.depth += 1;
            h.ended = false;
            before
        });
        let taken = self
            .call(
                "lockSettings",
                |c| async move { c.lock_settings().send().await },
            )
            .await;
        if let Err(e) = taken {
            self.locks.with(|h| *h = before);
            if e.status() == Some(409) {
                // Another session holds it: whatever this session counted is gone.
                self.forget_lock();
            }
            return Err(e);
        }
        let depth = self.locks.with(|h| h.depth);
        if depth == 1 {
            tracing::info!(link = %crate::observe::url(&self.link), "settings locked");
        } else {
            tracing::debug!(depth, "settings lock renewed: one more hold");
        }
        Ok(())
    }

    /// Gives back one hold of the settings lock; the last one releases it on the unit.
    /// After the unit ended the lock (a logout, a reboot), holds are given back without
    /// a request.
    ///
    /// # Errors
    /// [`UnitError::InvalidRequest`] (nothing sent) when this session took no lock that
    /// it has not given back: a release without a take would hide a mistake. The unit's
    /// errors when the release itself fails (the session then counts the lock as given
    /// back: the unit ends it on logout, reboot, or after 60 s without a request).
    pub async fn unlock(&self) -> Result<(), UnitError> {
        let _gate = self.locks.gate.lock().await;
        let held = self.locks.with(|h| {
            let before = *h;
            if h.depth > 0 {
                h.depth -= 1;
                if h.depth == 0 {
                    h.ended = false;
                }
            }
            before
        });
        match held {
            Holds { depth: 0, .. } => Err(UnitError::InvalidRequest {
                operation: "unlockSettings",
                reason: "this session does not hold the settings lock (each unlock gives back \
                         one lock taken by this session)"
                    .to_owned(),
            }),
            Holds {
                depth: 1,
                ended: false,
            } => {
                self.call("unlockSettings", |c| async move {
                    c.unlock_settings().send().await
                })
                .await
                .map(|_| ())?;
                tracing::info!(link = %crate::observe::url(&self.link), "settings unlocked");
                Ok(())
            }
            Holds { depth, ended } => {
                tracing::debug!(
                    depth = depth - 1,
                    ended,
                    "one hold of the settings lock given back"
                );
                Ok(())
            }
        }
    }

    /// Whether this session holds the settings lock (taken with [`lock`](Self::lock),
    /// not given back, and not ended by a logout or a reboot of this session).
    pub fn holds_lock(&self) -> bool {
        self.locks.with(|h| h.depth > 0 && !h.ended)
    }

    /// The lock ended on the unit (a logout, a reboot, the token holding it ended).
    pub(super) fn forget_lock(&self) {
        let ended = self.locks.with(|h| {
            let had = h.depth > 0 && !h.ended;
            if h.depth > 0 {
                h.ended = true;
            }
            had
        });
        if ended {
            tracing::info!("the settings lock ended with the session's token");
        }
    }

    /// Saves the settings to the unit's permanent memory (`POST /settings/save`, the
    /// route of the vendor's own client; see `saveSettings` in
    /// `openapi/ins-device.yaml`). A journal of the session ([`Unit::with_journal`])
    /// forgets the save it recorded as owed.
    ///
    /// # Errors
    /// 404 from a unit without the route (it keeps applied settings without one); 409
    /// while another session holds the settings lock; 403 without the Setting WRITE
    /// right.
    pub async fn save(&self) -> Result<(), UnitError> {
        self.call(
            "saveSettings",
            |c| async move { c.save_settings().send().await },
        )
        .await?;
        tracing::info!(link = %crate::observe::url(&self.link), "settings saved");
        self.settle(|owed| owed.save = false).await
    }

    /// [`Unit::save`], where the unit serves it: a unit without the route (404 or 405)
    /// keeps applied settings across reboots, so there is nothing to save.
    pub(super) async fn save_if_served(&self) -> Result<(), UnitError> {
        match self.save().await {
            Err(e) if route_missing(&e) => {
                tracing::info!("the unit has no save route: its settings are kept as written");
                self.settle(|owed| owed.save = false).await
            }
            other => other,
        }
    }

    /// Updates what the session's journal records the unit as owing (nothing without a
    /// journal).
    async fn settle(&self, done: impl FnOnce(&mut super::Pending)) -> Result<(), UnitError> {
        if let Some((journal, serial)) = self.journal_owner().await? {
            let mut owed = journal.pending(&serial)?;
            let before = owed;
            done(&mut owed);
            if owed != before {
                journal.record(&serial, owed)?;
            }
        }
        Ok(())
    }

    /// Reboots the unit. Every token and lock ends; the session logs in again on its next
    /// request if it was logged in.
    ///
    /// The documented route (`POST /reboot`) is tried first; when the unit answers
    /// 404 or 405 there, the vendor client's route (`POST /system/reboot`) is used.
    ///
    /// When the answer is lost (the link dropped it, or the unit went silent before
    /// sending it), the reboot is a success only once the unit is seen to have
    /// rebooted: it answers again and refuses (401) the token the session held before
    /// (a session without a login takes a token for this beforehand, as the first of
    /// the unit's users without a password). A journal of the session
    /// ([`Unit::with_journal`]) forgets the reboot it recorded as owed.
    ///
    /// # Errors
    /// [`UnitError::RebootNotConfirmed`] when the answer was lost and the unit still
    /// knows the token of before (it did not reboot), or did not answer within
    /// [`REBOOT_CONFIRMATION`]; the unit's errors (403 without the Reboot right).
    pub async fn reboot(&self) -> Result<(), UnitError> {
        // Asked before: the unit does not answer while it reboots.
        let owner = self.journal_owner().await?;
        let before = self.token_of_before().await;
        match self.send_reboot().await {
            Ok(()) => {}
            Err(e @ UnitError::Unreachable { .. }) => {
                tracing::info!(
                    error = %loggable(&e),
                    "the reboot's answer was lost: waiting to see whether the unit rebooted"
                );
                self.confirm_reboot(before.as_ref(), e).await?;
            }
            Err(e) => {
                self.forget_probe(before).await;
                return Err(e);
            }
        }
        self.state.set_token(None);
        self.forget_lock();
        if let Some((journal, serial)) = owner {
            let mut owed = journal.pending(&serial)?;
            if owed.reboot {
                owed.reboot = false;
                journal.record(&serial, owed)?;
            }
        }
        tracing::info!(link = %crate::observe::url(&self.link), "unit rebooting");
        Ok(())
    }

    async fn send_reboot(&self) -> Result<(), UnitError> {
        match self
            .call("reboot", |c| async move { c.reboot().send().await })
            .await
        {
            Err(e) if route_missing(&e) => {
                tracing::info!(
                    status = e.status(),
                    "the unit has no /reboot route: rebooting through /system/reboot"
                );
                self.call(
                    "rebootSystem",
                    |c| async move { c.reboot_system().send().await },
                )
                .await
                .map(|_| ())
            }
            other => other.map(|_| ()),
        }
    }

    /// For a session without a login: a token the unit knows now, to tell afterwards
    /// whether it rebooted, taken for this (the first user in role order who has no
    /// password). `None` for a logged-in session (its own token serves) or when there
    /// is none to take.
    async fn token_of_before(&self) -> Option<Probe> {
        if self.state.token().is_some() {
            // The session's own serves (see `confirm_reboot`).
            return None;
        }
        for user in [
            UserName::Viewer,
            UserName::Operator,
            UserName::PowerUser,
            UserName::Setup,
            UserName::Factory,
        ] {
            let body = types::LoginRequest {
                user,
                password: Password::new(""),
            };
            match self.client.login().body(body).send().await {
                Ok(answer) => {
                    return Some(Probe {
                        token: answer.into_inner().token,
                        taken: true,
                    });
                }
                Err(e) if e.status().is_some_and(|s| s.as_u16() == 401) => {}
                Err(_) => return None,
            }
        }
        None
    }

    /// Ends a token taken by [`token_of_before`](Self::token_of_before) that a reboot
    /// did not end.
    async fn forget_probe(&self, probe: Option<Probe>) {
        if let Some(Probe { token, taken: true }) = probe {
            let _ = self.with_token(token).client.logout().send().await;
        }
    }

    /// After a reboot whose answer was lost: waits until the unit answers and tells
    /// whether it refuses the token of before (it rebooted) or still knows it.
    async fn confirm_reboot(
        &self,
        before: Option<&Probe>,
        lost: UnitError,
    ) -> Result<(), UnitError> {
        // The session's token as the reboot was sent with it (a login renewed on the
        // way included), else the one taken beforehand.
        let session = self.state.token().map(|token| Probe {
            token,
            taken: false,
        });
        // Without one, the unit did not answer even the login that would have taken it:
        // it is unreachable, and nothing tells whether it rebooted.
        let Some(probe) = session.as_ref().or(before) else {
            return Err(lost);
        };
        let prober = self.with_token(probe.token.clone());
        let began = tokio::time::Instant::now();
        let deadline = began + REBOOT_CONFIRMATION;
        let mut answering_since: Option<tokio::time::Instant> = None;
        loop {
            let now = tokio::time::Instant::now();
            match prober.client.get_device_info().send().await {
                Err(e) => match UnitError::from_client("getDeviceInfo", e) {
                    e if e.status() == Some(401) => {
                        tracing::info!(
                            waited_ms = crate::observe::millis(began.elapsed()),
                            "the unit refuses the token of before: it rebooted"
                        );
                        return Ok(());
                    }
                    e @ UnitError::Unreachable { .. } => {
                        tracing::debug!(error = %loggable(&e), "the unit does not answer (rebooting?)");
                        answering_since = None;
                    }
                    e => return Err(e),
                },
                Ok(_) => {
                    let since = *answering_since.get_or_insert(now);
                    if now.duration_since(since) >= STILL_UP {
                        self.forget_probe(Some(probe.clone())).await;
                        return Err(UnitError::RebootNotConfirmed {
                            reason: format!(
                                "its answer was lost, and the unit answers and still knows the \
                                 session's token of before after {} ms: it did not reboot",
                                STILL_UP.as_millis()
                            ),
                        });
                    }
                }
            }
            if tokio::time::Instant::now() >= deadline {
                return Err(UnitError::RebootNotConfirmed {
                    reason: format!(
                        "its answer was lost, and the unit did not answer again within {} s",
                        REBOOT_CONFIRMATION.as_secs()
                    ),
                });
            }
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
    }

    /// The session's journal and the unit's serial number, when the session keeps one.
    pub(super) async fn journal_owner(
        &self,
    ) -> Result<Option<(std::sync::Arc<super::Journal>, String)>, UnitError> {
        match &self.journal {
            Some(journal) => Ok(Some((journal.clone(), self.info().await?.serial_number))),
            None => Ok(None),
        }
    }

    /// Waits until the unit answers again after a reboot (polling `/info`), then logs in
    /// again if the session was logged in.
    ///
    /// # Errors
    /// [`UnitError::NotBack`] (kind [`Timeout`](crate::ErrorKind::Timeout), with the
    /// last failure) when the unit is still not back after `timeout`; an error that
    /// waiting cannot mend (refused credentials) at once.
    pub async fn wait_until_back(&self, timeout: Duration) -> Result<DeviceInfo, UnitError> {
        let began = tokio::time::Instant::now();
        let deadline = began + timeout;
        let mut delay = Duration::from_millis(100);
        let mut attempt: u32 = 0;
        loop {
            attempt += 1;
            let result = match self.user() {
                Some(_) if self.state.token().is_none() => {
                    let credentials = self.credentials().clone();
                    match credentials {
                        Some((u, p)) => match self.login_once(u, p).await {
                            Ok(()) => self.info().await,
                            Err(e) => Err(e),
                        },
                        None => self.info().await,
                    }
                }
                _ => self.info().await,
            };
            match result {
                Ok(info) => {
                    tracing::info!(
                        attempts = attempt,
                        waited_ms = crate::observe::millis(began.elapsed()),
                        "the unit is back"
                    );
                    return Ok(info);
                }
                Err(e) if e.is_retryable() && tokio::time::Instant::now() + delay < deadline => {
                    tracing::debug!(
                        attempt,
                        delay_ms = crate::observe::millis(delay),
                        reason = %loggable(&e),
                        "the unit is not back yet"
                    );
                    tokio::time::sleep(delay).await;
                    delay = (delay * 2).min(Duration::from_secs(1));
                }
                Err(e) => {
                    tracing::info!(attempts = attempt, error = %loggable(&e), "the unit did not come back");
                    if e.is_retryable() {
                        return Err(UnitError::NotBack {
                            waited: began.elapsed(),
                            last: Box::new(e),
                        });
                    }
                    return Err(e);
                }
            }
        }
    }

    /// Sets the session token directly (a token obtained elsewhere). Prefer [`Unit::login`],
    /// which can log in again after a reboot.
    pub fn set_token(&self, token: Option<AuthToken>) {
        self.state.set_token(token);
    }
}

/// How long [`Unit::reboot`] waits, after a lost answer, for the unit to answer again.
pub const REBOOT_CONFIRMATION: Duration = Duration::from_secs(60);

/// How long a unit must keep answering to the token of before, after a reboot whose
/// answer was lost, to count as not rebooted (a unit may answer a moment before it
/// goes down).
const STILL_UP: Duration = Duration::from_secs(3);

/// A token the unit knew before a reboot, and whether the session took it only to tell
/// whether the unit rebooted (it is then logged out when it did not).
#[derive(Clone)]
struct Probe {
    token: AuthToken,
    taken: bool,
}

/// Whether the unit answered that the route does not exist (404, or 405 for a path it
/// serves with other methods only): the request did nothing.
fn route_missing(e: &UnitError) -> bool {
    matches!(e.status(), Some(404 | 405))
}
