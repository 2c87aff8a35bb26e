"""A hostile Redis on 127.0.0.1: an asyncio server speaking RESP that answers the connection
handshake as Redis does, then every other command with what the test chose (the wrong types, an
array nested 100,000 deep, a bulk string of 600 MB sent as it is generated).

It runs its own event loop in a thread, so it serves while the test awaits its calls, and it
records the commands it was sent, so a test can prove the server under test did ask it.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable, Iterator
from types import TracebackType

Answer = Callable[[list[bytes], int], bytes | Iterator[bytes]]
"""(the command's words, how many commands came before it) -> the reply: bytes, or an iterator of
chunks written one after another (stopped when the client hangs up)."""

HANDSHAKE = {b"CLIENT": b"+OK\r\n", b"SELECT": b"+OK\r\n", b"AUTH": b"+OK\r\n", b"PING": b"+PONG\r\n"}
"""What redis-py sends on connecting (CLIENT SETINFO; HELLO, see ``hello``), answered as Redis
would: what follows is what the test is about."""
_HELLO_FIELDS = b"$6\r\nserver\r\n$5\r\nredis\r\n$7\r\nversion\r\n$5\r\n7.2.0\r\n$5\r\nproto\r\n"


def hello(words: list[bytes]) -> bytes:
    """Redis's answer to HELLO: a map in RESP3, an array of its pairs in RESP2."""
    version = words[1] if len(words) > 1 else b"2"
    if version == b"3":
        return b"%3\r\n" + _HELLO_FIELDS + b":3\r\n"
    return b"*6\r\n" + _HELLO_FIELDS + b":2\r\n"


WRONG_TYPES = (
    b":42\r\n",
    b"$4\r\noops\r\n",
    b"*2\r\n:1\r\n$1\r\nx\r\n",
    b"+OK\r\n",
    b"*0\r\n",
    b"$-1\r\n",
    b"*3\r\n$7\r\nmessage\r\n$1\r\nc\r\n:5\r\n",
    b":-1\r\n",
    b"$3\r\nnan\r\n",
    b"*1\r\n*1\r\n*1\r\n$2\r\nno\r\n",
)
"""Every kind of RESP reply but an error (which the client raises as Redis's own failure), each
in the place of another: command n gets WRONG_TYPES[n % 10]."""


def wrong_types(words: list[bytes], n: int) -> bytes:
    return WRONG_TYPES[n % len(WRONG_TYPES)]


def always(reply: bytes) -> Answer:
    """The same reply to every command."""

    def answer(words: list[bytes], n: int) -> bytes:
        return reply

    return answer


def nested(depth: int) -> Answer:
    """An array of an array of ... depth deep, around one integer."""

    def answer(words: list[bytes], n: int) -> bytes:
        return b"*1\r\n" * depth + b":1\r\n"

    return answer


def huge_bulk(size: int, chunk: int = 1 << 20) -> Answer:
    """A bulk string of size bytes, generated as it is sent (never held here)."""

    def chunks() -> Iterator[bytes]:
        yield b"$%d\r\n" % size
        block = b"x" * chunk
        sent = 0
        while sent < size:
            piece = block[: min(chunk, size - sent)]
            sent += len(piece)
            yield piece
        yield b"\r\n"

    def answer(words: list[bytes], n: int) -> Iterator[bytes]:
        return chunks()

    return answer


class HostileRedis:
    def __init__(self, answer: Answer) -> None:
        self._answer = answer
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, name="hostile-redis", daemon=True)
        self._server: asyncio.Server | None = None
        self._lock = threading.Lock()
        self.commands: list[bytes] = []
        self.port = 0

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def __enter__(self) -> HostileRedis:
        self._thread.start()
        self._server = asyncio.run_coroutine_threadsafe(self._start(), self._loop).result(10)
        self.port = self._server.sockets[0].getsockname()[1]
        return self

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None
    ) -> None:
        asyncio.run_coroutine_threadsafe(self._stop(), self._loop).result(10)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(10)
        self._loop.close()

    def data_commands(self) -> list[bytes]:
        """The commands past the handshake, by name."""
        with self._lock:
            return [name for name in self.commands if name not in HANDSHAKE and name != b"HELLO"]

    async def _start(self) -> asyncio.Server:
        return await asyncio.start_server(self._serve, "127.0.0.1", 0)

    async def _stop(self) -> None:
        assert self._server is not None
        self._server.close()
        for task in asyncio.all_tasks():
            if task is not asyncio.current_task():
                task.cancel()

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while True:
                words = await _command(reader)
                if words is None:
                    return
                name = words[0].upper() if words else b""
                with self._lock:
                    count = len(self.commands)
                    self.commands.append(name)
                reply = (
                    hello(words) if name == b"HELLO" else HANDSHAKE.get(name) or self._answer(words, count)
                )
                for chunk in [reply] if isinstance(reply, bytes) else reply:
                    writer.write(chunk)
                    await writer.drain()
        except (ConnectionError, asyncio.IncompleteReadError):
            return
        finally:
            writer.close()


async def _command(reader: asyncio.StreamReader) -> list[bytes] | None:
    """One command as redis-py sends it (an array of bulk strings); None when the client left."""
    line = await reader.readline()
    if not line:
        return None
    if not line.startswith(b"*"):
        return line.split()
    words = []
    for _ in range(int(line[1:])):
        size = int((await reader.readline())[1:])
        words.append((await reader.readexactly(size + 2))[:-2])
    return words
