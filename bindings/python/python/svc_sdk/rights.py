"""The unit's rights matrix: may a user run an operation?

The answers come from the same tables the unit enforces (``x-access-rights`` of the
unit's OpenAPI document), e.g. to grey out actions in an app::

    from svc_sdk import rights

    rights.may("operator", "updateSettings")      # False
    rights.may("powerUser", "updateSettings")     # True
    rights.may("viewer", "noSuchOperation")       # None: not in the matrix
    "reboot" in rights.allowed_operations("operator")

Operations are the ``operationId`` of the unit's document. ``logged_in`` (default
``True``) says whether the session holds a token: logout, password changes and the
settings lock need one, whatever the user's rights.
"""

from svc_sdk._native import allowed_operations, may

__all__ = ["allowed_operations", "may"]
