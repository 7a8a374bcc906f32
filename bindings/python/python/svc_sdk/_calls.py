"""How the native calls are waited on, for the blocking API and for :mod:`svc_sdk.aio`.

Each operation is written once, as a function that checks its arguments, starts the
native call and says how its answer becomes the method's result (a :class:`Pending`).
:func:`blocking` makes the method of the blocking classes from it (the call's
``result()``: the GIL released, Ctrl-C answered), :func:`awaitable` the method of the
asyncio ones (awaited on the event loop; cancelling the awaiting task cancels the
call). Both keep the operation's name, documentation and signature.
"""

from __future__ import annotations

import asyncio
import functools
import sys
from typing import Any, Callable, Coroutine, Generic, TypeVar

from svc_sdk import _native

if sys.version_info >= (3, 10):  # on 3.9 the annotations that name them stay strings
    from typing import Concatenate, ParamSpec

    P = ParamSpec("P")

T = TypeVar("T")
S = TypeVar("S")


def _same(answer: Any) -> Any:
    return answer


class Pending(Generic[T]):
    """A native call under way and the conversion of its answer."""

    __slots__ = ("call", "convert")

    def __init__(self, call: _native.Call, convert: Callable[[Any], T] = _same) -> None:
        self.call = call
        self.convert = convert

    def result(self) -> T:
        """Blocks until the answer (the GIL released; Ctrl-C cancels the call)."""
        return self.convert(self.call.result())

    async def awaited(self) -> T:
        """Awaits the answer; cancelling the awaiting task cancels the call."""
        return self.convert(await wait(self.call))


def _settle(future: asyncio.Future[Any], call: _native.Call) -> None:
    if future.done():  # cancelled meanwhile
        return
    try:
        future.set_result(call.result())
    except BaseException as e:  # the operation's error, raised in the awaiting task
        future.set_exception(e)


async def wait(call: _native.Call) -> Any:
    """Awaits a native call; cancelling the awaiting task cancels the call."""
    loop = asyncio.get_running_loop()
    future: asyncio.Future[Any] = loop.create_future()
    call.add_done_callback(lambda done: loop.call_soon_threadsafe(_settle, future, done))
    try:
        return await future
    except asyncio.CancelledError:
        call.cancel()
        raise


def blocking(op: Callable[Concatenate[S, P], Pending[T]]) -> Callable[Concatenate[S, P], T]:
    """The blocking method of an operation."""

    @functools.wraps(op)
    def method(self: S, /, *args: P.args, **kwargs: P.kwargs) -> T:
        return op(self, *args, **kwargs).result()

    return method


def awaitable(
    op: Callable[Concatenate[S, P], Pending[T]],
) -> Callable[Concatenate[S, P], Coroutine[Any, Any, T]]:
    """The asyncio method of an operation."""

    @functools.wraps(op)
    async def method(self: S, /, *args: P.args, **kwargs: P.kwargs) -> T:
        return await op(self, *args, **kwargs).awaited()

    return method
