"""Top-level JSON objects of a text that arrives in chunks, decoded one at a time with a bounded buffer.

A top-level object starts at the beginning of a line (`{` alone on it, or a whole object on one line;
a UTF-8 byte-order mark before it is skipped). A candidate that does not decode yields the reason
instead of an object, so the caller can say why no document was usable.
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Callable, Iterable, Iterator

#: where a top-level object may begin: `{` first on a line (after blanks or a byte-order mark)
_OBJECT_START = re.compile(r"^[ \t\ufeff]*\{", re.MULTILINE)
#: a decode error this close to the end of the text read so far may just mean "read more"
_TAIL = 64
#: the start of a literal or number cut by the end of the text ("tr" of true, "-Infin", "1.5e")
_PARTIAL_TOKEN = re.compile(r"t(?:r(?:u)?)?|f(?:a(?:l(?:s)?)?)?|n(?:u(?:l)?)?|N(?:a)?"
                            r"|-?I(?:n(?:f(?:i(?:n(?:i(?:t)?)?)?)?)?)?"
                            r"|-|-?[0-9]+\.?[0-9]*(?:[eE][-+]?[0-9]*)?")
CUT = "the output ends inside it (cut off, or fio was killed?)"


class JsonObjects:
    """Top-level objects of a text that arrives in chunks, with a bounded buffer.

    Only the text from the current candidate object on is kept. A candidate that does not decode
    because the text read so far ends inside it is retried with one more chunk (a status-interval
    object is small), then with all the rest of the text: a huge object is decoded about twice,
    never once per chunk (which would cost its size squared).
    """

    def __init__(self, chunks: Iterable[str], chunk: int, object_hook: Callable[[dict], object] | None):
        self._chunks: Iterator[str] = iter(chunks)
        #: text read at a time; an object longer than this is read by doubling the buffer
        self.chunk = chunk
        self.eof = False
        self.seen_text = False
        self.first_line = ""
        self._decoder, self._floats = _decoders(object_hook)

    def _read(self, at_least: int) -> str:
        parts: list[str] = []
        got = 0
        while not self.eof and got < at_least:
            chunk = next(self._chunks, None)
            if chunk is None:
                self.eof = True
                break
            if not self.seen_text and chunk.lstrip("\ufeff").strip():
                self.seen_text = True
                self.first_line = chunk.lstrip("\ufeff").strip()[:400].splitlines()[0][:200]
            parts.append(chunk)
            got += len(chunk)
        return "".join(parts)

    def _read_all(self) -> str:
        parts = []
        while chunk := self._read(self.chunk):
            parts.append(chunk)
        return "".join(parts)

    def objects(self) -> Iterator[tuple[object, str | None]]:
        """(object, None) for each decoded object, (None, why) for a candidate that does not decode."""
        buf = self._read(1)
        pos = 0
        line_start = True  # whether buf[0] begins a line
        grown = False  # whether the candidate at buf[0] already made the buffer grow
        while True:
            start = pos
            if start == 0 and not line_start:
                nl = buf.find("\n")
                start = len(buf) if nl < 0 else nl + 1
            m = _OBJECT_START.search(buf, start)
            if m is None:
                if self.eof:
                    return
                buf, line_start = _keep_tail(buf, start, line_start)
                buf += self._read(self.chunk)
                pos = 0
                continue
            brace = m.end() - 1
            try:
                obj, end = self._decode(buf, brace)
            except json.JSONDecodeError as exc:
                near_end = exc.pos >= len(buf) - _TAIL or exc.msg.startswith("Unterminated string")
                if near_end and not self.eof:
                    # the object goes on beyond what was read: read one more chunk (status-interval
                    # objects are small), and if that was not enough, the rest: one more decode,
                    # instead of one per doubling
                    more = self._read_all() if grown and m.start() == 0 else self._read(self.chunk)
                    buf, pos, line_start, grown = buf[m.start():] + more, 0, True, True
                    continue
                yield None, CUT if _cut_at(buf, exc) else f"invalid JSON in an object: {exc.msg}"
                pos, grown = brace + 1, False
                continue
            except RecursionError:
                yield None, "an object nested deeper than Python's recursion limit (not fio output)"
                pos, grown = brace + 1, False
                continue
            except ValueError as exc:  # e.g. a number the decoder refuses
                yield None, f"invalid JSON: {exc}"
                pos, grown = brace + 1, False
                continue
            yield obj, None
            pos, grown = end, False
            if pos > self.chunk:  # forget what was decoded, from a line start on
                cut = buf.rfind("\n", 0, pos) + 1
                if cut:
                    buf, pos, line_start = buf[cut:], pos - cut, True

    def _decode(self, buf: str, brace: int) -> tuple[object, int]:
        try:
            return self._decoder.raw_decode(buf, brace)
        except json.JSONDecodeError:
            raise
        except ValueError:  # an integer int() refuses: read as a float, as every number ends up
            return self._floats.raw_decode(buf, brace)


@functools.cache
def _decoders(hook: Callable[[dict], object] | None) -> tuple[json.JSONDecoder, json.JSONDecoder]:
    """The decoders of a hook (the parser's two), made once (a file's parse is a few milliseconds; making
    them was 2 % of it): integers as json reads them (in C), and, for an object holding an integer too long
    for int() (over 4,300 digits, which Python refuses), one that reads every integer as a float."""
    return json.JSONDecoder(object_hook=hook), json.JSONDecoder(object_hook=hook, parse_int=float)


def last_line_object(text: str) -> tuple[object, int] | None:
    """The last object that begins a line at the line's first character (fio's layout of every top-level
    object, and json.dumps's) when nothing after it can begin another: (the object, how many objects begin
    a line up to it and with it); None when there is none, it does not decode, or something follows it that
    may be an object (the caller then reads them all, in order). A text that holds several results (fio's
    --status-interval prints one per interval) needs only its last one."""
    at = text.rfind("\n{") + 1
    if at == 0 and not text.startswith("{"):
        return None
    try:
        obj, end = _decoders(None)[0].raw_decode(text, at)
    except (ValueError, RecursionError):  # a cut or odd object: the reader in order says what it is
        return None
    if _OBJECT_START.search(text, end) is not None:
        return None
    return obj, text.count("\n{", 0, at + 1) + text.startswith("{")


def _cut_at(buf: str, exc: json.JSONDecodeError) -> bool:
    """Whether a decode error at the end of all the text means the text stops inside the object."""
    rest = buf[exc.pos:].strip()
    return exc.msg.startswith("Unterminated string") or not rest or bool(_PARTIAL_TOKEN.fullmatch(rest))


def _keep_tail(buf: str, start: int, line_start: bool) -> tuple[str, bool]:
    """What of buf may still begin an object once more text arrives: a blank start of a line."""
    nl = buf.rfind("\n", start)
    tail = buf[nl + 1:] if nl >= 0 else buf[start:]
    at_line_start = nl >= 0 or (line_start and start == 0)
    if at_line_start and not tail.strip(" \t\ufeff"):
        return tail, True
    return "", False  # the rest of this line cannot start an object
