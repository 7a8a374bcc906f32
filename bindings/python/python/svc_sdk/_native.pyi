"""Types of the native extension (Rust). Import from the public modules instead:
``svc_sdk.settings``, ``svc_sdk.webhook``, ``svc_sdk.rights``."""

from os import PathLike
from typing import Any, Final, Iterable, Mapping, Sequence, Union, final

__version__: Final[str]
# Every name the extension registers (pyo3 lists them in the runtime `__all__`).
__all__ = [
    "ABSENT",
    "Absent",
    "Conflict",
    "Merge",
    "Patch",
    "SIGNATURE_HEADER",
    "SettingsTree",
    "TIMESTAMP_HEADER",
    "TreePatch",
    "Webhook",
    "__version__",
    "_diff_json_reference",
    "_sleep",
    "allowed_operations",
    "apply",
    "diff",
    "diff_json",
    "fleet_diff",
    "may",
    "merge",
    "sign",
]

# --- settings --------------------------------------------------------------------------

_Json = Any
_Text = Union[str, bytes, bytearray, memoryview]
_Path = Union[str, PathLike[str]]

@final
class Patch:
    """What turns one settings tree into another."""

    @property
    def tree(self) -> _Json: ...
    @property
    def changed(self) -> list[str]: ...
    @property
    def removed(self) -> list[str]: ...
    def is_empty(self) -> bool: ...
    def has_removals(self) -> bool: ...
    def to_write(self) -> _Json: ...
    def __len__(self) -> int: ...

@final
class Absent:
    """The type of ``ABSENT``."""

    def __bool__(self) -> bool: ...

ABSENT: Final[Absent]

@final
class Conflict:
    """A node both sides of a merge changed, differently."""

    @property
    def path(self) -> str: ...
    @property
    def base(self) -> _Json: ...
    @property
    def ours(self) -> _Json: ...
    @property
    def theirs(self) -> _Json: ...

@final
class Merge:
    """The merged tree and its conflicts."""

    @property
    def tree(self) -> _Json: ...
    @property
    def conflicts(self) -> list[Conflict]: ...
    def is_clean(self) -> bool: ...

@final
class TreePatch:
    """What turns one ``SettingsTree`` into another."""

    @property
    def changed(self) -> list[str]: ...
    @property
    def removed(self) -> list[str]: ...
    @property
    def tree(self) -> _Json: ...
    def to_json(self) -> str: ...
    def to_patch(self) -> Patch: ...
    def is_empty(self) -> bool: ...
    def has_removals(self) -> bool: ...

@final
class SettingsTree:
    """A settings tree laid out for comparing many trees of one schema."""

    @staticmethod
    def from_dict(tree: _Json) -> SettingsTree: ...
    @staticmethod
    def from_json(text: _Text) -> SettingsTree: ...
    def to_dict(self) -> _Json: ...
    def to_json(self) -> str: ...
    def diff(self, new: SettingsTree) -> TreePatch: ...
    def same_shape(self, other: SettingsTree) -> bool: ...
    @property
    def leaf_count(self) -> int: ...
    def get(self, path: str, default: _Json = None) -> _Json: ...
    def __eq__(self, other: object, /) -> bool: ...

def diff(old: _Json, new: _Json) -> Patch: ...
def diff_json(old_text: _Text, new_text: _Text) -> Patch: ...
def apply(tree: _Json, patch: _Json) -> _Json: ...
def merge(base: _Json, ours: _Json, theirs: _Json) -> Merge: ...
def _diff_json_reference(old_text: _Text, new_text: _Text) -> Patch: ...
def fleet_diff(reference: _Path, files: Sequence[_Path]) -> list[dict[str, Any]]: ...

# --- webhook ---------------------------------------------------------------------------

TIMESTAMP_HEADER: Final[str]
SIGNATURE_HEADER: Final[str]

_Headers = Union[Mapping[str, str], Mapping[bytes, bytes], Iterable[tuple[Any, Any]], Any]
_Body = Union[bytes, bytearray, memoryview]

@final
class Webhook:
    """Verifies webhook deliveries of the cloud service."""

    def __new__(cls, secret: Union[str, Sequence[str]], tolerance: float = 300.0) -> Webhook: ...
    @property
    def tolerance(self) -> float: ...
    def verify(self, headers: _Headers, body: _Body, *, now: int | None = None) -> dict[str, Any]: ...
    def verify_ignoring_timestamp(self, headers: _Headers, body: _Body) -> dict[str, Any]: ...

def sign(secret: str, timestamp: int, body: _Body) -> str: ...

# --- rights ----------------------------------------------------------------------------

def may(user: str, operation: str, *, logged_in: bool = True) -> bool | None: ...
def allowed_operations(user: str, *, logged_in: bool = True) -> list[str]: ...

# --- runtime (private) ----------------------------------------------------------------

def _sleep(seconds: float) -> None: ...
