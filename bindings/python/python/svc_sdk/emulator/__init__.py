"""The local emulator of the cloud service (its identity provider, object storage
and notification service) and of a unit, in this process, so notebooks and test
suites run offline:

>>> with Emulator() as emulator:                              # doctest: +SKIP
...     outcome = Workflow(emulator.cloud()).run(["rover.nmea"], config, out="results")
...     unit = emulator.unit()

It is a second implementation of the service's rules (rights, conflicts, limits,
signatures), not a mock: what works against it works against the service.
"""

from __future__ import annotations

from types import TracebackType
from typing import Any, Mapping, Optional

from svc_sdk import _native
from svc_sdk.cloud import CloudClient
from svc_sdk.unit import Unit

__all__ = ["Emulator"]


class Emulator:
    """A running emulator; a context manager (``close()`` on exit)."""

    def __init__(
        self,
        *,
        processing_time: float = 1.0,
        token_lifetime: float = 300.0,
        credits: int = 100,
        device: bool = True,
        fault_rate: float = 0.0,
        seed: int = 1,
        devices: int = 1,
        device_startup_seconds: float = 0.0,
        device_passwords: Optional[Mapping[str, str]] = None,
        device_reboot_seconds: float = 2.0,
        device_latency_ms: int = 0,
        device_pty: bool = True,
        serial_fault_rate: float = 0.0,
        webhook_retry_base_ms: int = 1000,
        host: str = "127.0.0.1",
        port: int = 0,
        upload_extra_fields: Optional[Mapping[str, str]] = None,
        upload_bytes_per_second: int = 0,
    ) -> None:
        """Starts the emulator in this process, every option of the ``svc emulator``
        command with the same checks (``InvalidInputError`` naming the argument):

        - ``processing_time``: seconds a processing takes; ``token_lifetime``: seconds
          an access token lives; ``credits``: processing credits of each organization;
        - ``fault_rate``: share of cloud requests answered 500, delayed or cut (0 to 1),
          repeatable with ``seed``; ``webhook_retry_base_ms``: the first webhook retry's
          delay (doubling);
        - ``device``: also emulate units (``devices`` of them, 1 to 256), each with
          ``device_passwords`` (user → password; users not named have none),
          ``device_reboot_seconds``, ``device_latency_ms`` (every HTTP answer waits, as
          over Wi-Fi), ``device_startup_seconds`` (until ready to log after each
          power-on), ``serial_fault_rate`` (a noisy serial line, 0 to 1) and
          ``device_pty`` (also a pseudo-terminal beside the TCP bridge);
        - ``host`` and ``port`` (the first port; 0: free ports);
          ``upload_extra_fields`` (name → value, added to every upload form);
          ``upload_bytes_per_second`` (the storage reads uploads at that speed, a slow
          uplink; 0: as fast as they come).
        """
        self._n = _native.Emulator(
            processing_time=processing_time,
            token_lifetime=token_lifetime,
            credits=credits,
            device=device,
            fault_rate=fault_rate,
            seed=seed,
            devices=devices,
            device_startup_seconds=device_startup_seconds,
            device_passwords=dict(device_passwords) if device_passwords else None,
            device_reboot_seconds=device_reboot_seconds,
            device_latency_ms=device_latency_ms,
            device_pty=device_pty,
            serial_fault_rate=serial_fault_rate,
            webhook_retry_base_ms=webhook_retry_base_ms,
            host=host,
            port=port,
            upload_extra_fields=dict(upload_extra_fields) if upload_extra_fields else None,
            upload_bytes_per_second=upload_bytes_per_second,
        )

    @property
    def info(self) -> dict[str, Any]:
        """Addresses (``base_url``, ``auth_url``, ``notification_url``,
        ``storage_url``, ``device_url``, ``device_serial_tcp``, ``device_ftp`` (the
        data logger's FTP server), and every unit's in
        ``devices``) and credentials (``organization_id``, ``api_key``,
        ``api_secret``, ``member_api_key``...)."""
        info: dict[str, Any] = self._n.info
        return info

    @property
    def env(self) -> dict[str, str]:
        """The ``SVC_*`` environment variables of :meth:`CloudClient.from_env` (for
        subprocesses such as the ``svc`` command)."""
        i = self.info
        return {
            "SVC_BASE_URL": i["base_url"],
            "SVC_AUTH_URL": i["auth_url"],
            "SVC_NOTIFICATION_URL": i["notification_url"],
            "SVC_API_KEY": i["api_key"],
            "SVC_API_SECRET": i["api_secret"],
            "SVC_ORGANIZATION_ID": i["organization_id"],
        }

    def cloud(self, *, member: bool = False, **options: Any) -> CloudClient:
        """A client of the first organization: its administrator key, or with
        ``member`` a key without the administrator role (403 everywhere)."""
        i = self.info
        key, secret = (
            (i["member_api_key"], i["member_api_secret"])
            if member
            else (i["api_key"], i["api_secret"])
        )
        return CloudClient(
            i["base_url"],
            i["auth_url"],
            i["notification_url"],
            key,
            secret,
            i["organization_id"],
            **options,
        )

    def _device(self, index: int) -> dict[str, Any]:
        devices: list[dict[str, Any]] = self.info.get("devices") or []
        if not devices:
            raise RuntimeError("this emulator runs no unit (device=False)")
        if not 0 <= index < len(devices):
            raise IndexError(f"unit {index} of {len(devices)}")
        return devices[index]

    def unit(self, index: int = 0) -> Unit:
        """A session with an emulated unit (the first by default) over HTTP."""
        return Unit.http(self._device(index)["device_url"])

    def unit_serial_tcp(self, index: int = 0) -> Unit:
        """A session with an emulated unit over its serial-over-IP bridge."""
        return Unit.serial_tcp(self._device(index)["device_serial_tcp"])

    def units(self) -> list[Unit]:
        """A session with every emulated unit over HTTP (a fleet; ``devices=N``)."""
        return [Unit.http(d["device_url"]) for d in self.info.get("devices") or []]

    def set_credits(self, credits: int, organization_id: Optional[str] = None) -> None:
        """Sets an organization's processing credits (default: the first's)."""
        self._n.set_credits(organization_id or self.info["organization_id"], credits)

    @property
    def running(self) -> bool:
        return self._n.running

    def close(self) -> None:
        """Stops the servers and removes their files."""
        self._n.close()

    def __enter__(self) -> Emulator:
        return self

    def __exit__(
        self,
        exc_type: Optional[type[BaseException]],
        exc: Optional[BaseException],
        tb: Optional[TracebackType],
    ) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"Emulator(base_url={self.info['base_url']!r}, running={self.running})"
