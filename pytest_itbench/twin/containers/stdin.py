"""A process's standard input as a pipe: what has arrived and is not read yet, and whether the writer closed it.

An exec's stdin arrives from the client message by message, and a process
reads it as it comes: ``cat`` copies each read at once, ``read x`` takes a
line, ``grep`` and ``wc`` read to the end of file first. The readers here
are split in two: a ``wait_for_*`` generator yields :data:`WAITING` until
what the reader needs has arrived (or the writer closed the pipe), then a
plain ``read*`` call takes it. Whoever drives the process feeds the pipe
between yields; a closed pipe never makes anyone wait, so a process whose
input is known in full runs straight through.
"""

from __future__ import annotations

from typing import Iterator


class _Waiting:
    def __repr__(self) -> str:
        return "WAITING"


WAITING = _Waiting()  # yielded by a process that cannot go on until more input arrives


class Stdin:
    def __init__(self, data: bytes = b"", closed: bool = True):
        self._data = bytearray(data)
        self.closed = closed

    def feed(self, data: bytes) -> None:
        self._data += data

    def close(self) -> None:
        """The writer's end closed: once the buffer is read, readers see end of file."""
        self.closed = True

    # ---- waiting (generators) --------------------------------------------------------------------
    def wait_for_data(self) -> Iterator[_Waiting]:
        while not self._data and not self.closed:
            yield WAITING

    def wait_for_line(self) -> Iterator[_Waiting]:
        while b"\n" not in self._data and not self.closed:
            yield WAITING

    def wait_for_end(self) -> Iterator[_Waiting]:
        while not self.closed:
            yield WAITING

    # ---- reading what has arrived ---------------------------------------------------------------
    def read(self) -> bytes:
        """Everything buffered (``b""`` at end of file, or when nothing has arrived yet)."""
        data = bytes(self._data)
        self._data.clear()
        return data

    def read_line(self) -> bytes:
        """One line with its newline, or what is buffered if no newline has arrived."""
        end = self._data.find(b"\n")
        end = len(self._data) if end < 0 else end + 1
        data = bytes(self._data[:end])
        del self._data[:end]
        return data


def drive(steps: Iterator) -> int:
    """Run a process whose input is all there (its stdin closed) to the end; its exit status."""
    try:
        while True:
            next(steps)
    except StopIteration as done:
        return done.value
