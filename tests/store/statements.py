"""Every SQL statement a service sends, captured on the wire, and what PostgreSQL makes of each.

`Recorder` is a TCP proxy between the service and the server's unix socket, as
tests/faults.py's `FaultProxy` is: it forwards both ways unchanged and reads the client's half
of the PostgreSQL protocol (https://www.postgresql.org/docs/16/protocol-message-formats.html).
It keeps the text of every Parse and Query message, and the parameters of every Bind, as sent
(text or binary, undecoded), under the name of the scenario's step running at the time.

`Replayer` is a bare protocol connection to the same server that asks for plans: the generic
plan of a statement (`EXPLAIN (GENERIC_PLAN)`, which PostgreSQL 16 makes for a text with `$n`
and no values), and the plan run with a Bind's parameters exactly as the service sent them
(`EXPLAIN ANALYZE` in a transaction rolled back), so that nothing is decoded here.

`shape_findings` and `measured_findings` read those plans; what they call unbounded is
explained in tests/store/test_bounded_reads.py.
"""

import asyncio
import contextlib
import re
import struct
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from tests.faults import FaultProxy

# Startup-phase requests, told apart by their code (they carry no type byte).
SSL_REQUEST, GSSENC_REQUEST, CANCEL_REQUEST = 80877103, 80877104, 80877102
# Distinct parameter sets kept per statement: each is replayed, and the worst one counts.
BINDINGS_KEPT = 6


@dataclass(frozen=True)
class Binding:
    """One Bind's parameters as sent: their format codes (0 text, 1 binary) and bytes."""

    formats: tuple[int, ...]
    values: tuple[bytes | None, ...]


@dataclass
class Statement:
    sql: str
    # Executions (Bind or Query messages) per step, in the order the steps first ran it.
    steps: dict[str, int] = field(default_factory=dict)
    bindings: list[Binding] = field(default_factory=list)
    # Sent as a simple Query: no parameters.
    simple: bool = False


def _cstring(data: bytes, at: int) -> tuple[str, int]:
    end = data.index(0, at)
    return data[at:end].decode(), end + 1


def _bind(payload: bytes) -> tuple[str, Binding]:
    """The statement a Bind names and the parameters it gives."""
    _, at = _cstring(payload, 0)  # the portal
    statement, at = _cstring(payload, at)
    (count,) = struct.unpack_from("!h", payload, at)
    codes = struct.unpack_from(f"!{count}h", payload, at + 2)
    at += 2 + 2 * count
    (params,) = struct.unpack_from("!h", payload, at)
    at += 2
    values: list[bytes | None] = []
    for _ in range(params):
        (length,) = struct.unpack_from("!i", payload, at)
        at += 4
        if length < 0:
            values.append(None)
        else:
            values.append(payload[at : at + length])
            at += length
    # No codes: all text; one code: it holds for every parameter.
    formats = (0,) * params if count == 0 else codes * params if count == 1 else codes
    return statement, Binding(tuple(formats), tuple(values))


class _ClientHalf:
    """The client-to-server stream of one connection, read message by message."""

    def __init__(self, recorder: "Recorder") -> None:
        self.recorder = recorder
        self.buffer = bytearray()
        self.starting = True
        self.prepared: dict[str, str] = {}

    def feed(self, data: bytes) -> None:
        self.buffer += data
        while True:
            if self.starting:
                if len(self.buffer) < 8:
                    return
                length, code = struct.unpack_from("!ii", self.buffer)
                if len(self.buffer) < length:
                    return
                del self.buffer[:length]
                # SSLRequest and GSSENCRequest are followed by another startup message.
                self.starting = code in (SSL_REQUEST, GSSENC_REQUEST)
                continue
            if len(self.buffer) < 5:
                return
            kind = self.buffer[0]
            (length,) = struct.unpack_from("!i", self.buffer, 1)
            if len(self.buffer) < 1 + length:
                return
            payload = bytes(self.buffer[5 : 1 + length])
            del self.buffer[: 1 + length]
            self._message(kind, payload)

    def _message(self, kind: int, payload: bytes) -> None:
        if kind == ord("P"):
            name, at = _cstring(payload, 0)
            sql, _ = _cstring(payload, at)
            self.prepared[name] = sql
            self.recorder.parsed(sql)
        elif kind == ord("B"):
            name, binding = _bind(payload)
            if name in self.prepared:
                self.recorder.executed(self.prepared[name], binding)
        elif kind == ord("Q"):
            sql, _ = _cstring(payload, 0)
            self.recorder.executed(sql, None)


class Recorder(FaultProxy):
    """A proxy that forwards every byte, faults none, and records every statement, under
    `step`."""

    def __init__(self, database_url: str) -> None:
        super().__init__(database_url)
        self.step = "start-up"
        self.statements: dict[str, Statement] = {}
        # Parse and Query messages seen: every statement sent, each time it was sent.
        self.messages = 0

    @property
    def url(self) -> str:
        # No TLS: the stream must stay readable.
        return super().url + "?sslmode=disable"

    def client_reader(self) -> Callable[[bytes], None]:
        return _ClientHalf(self).feed

    def _statement(self, sql: str) -> Statement:
        return self.statements.setdefault(sql, Statement(sql))

    def parsed(self, sql: str) -> None:
        self.messages += 1
        self._statement(sql)

    def executed(self, sql: str, binding: Binding | None) -> None:
        statement = self._statement(sql)
        statement.steps[self.step] = statement.steps.get(self.step, 0) + 1
        if binding is None:
            self.messages += 1
            statement.simple = True
        elif binding not in statement.bindings and len(statement.bindings) < BINDINGS_KEPT:
            statement.bindings.append(binding)


class ReplayError(Exception):
    """The server refused the statement (its message)."""


def _message(kind: bytes, payload: bytes) -> bytes:
    return kind + struct.pack("!i", 4 + len(payload)) + payload


class Replayer:
    """One bare protocol connection to the server, for EXPLAINs; trust authentication only."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.reader = reader
        self.writer = writer

    @classmethod
    async def open(cls, socket_path: str, database: str) -> "Replayer":
        reader, writer = await asyncio.open_unix_connection(socket_path)
        params = b"user\0postgres\0database\0" + database.encode() + b"\0\0"
        writer.write(struct.pack("!ii", 8 + len(params), 196608) + params)
        replayer = cls(reader, writer)
        await replayer._until_ready()
        # A replayed statement that waits on a lock or runs away fails instead of hanging.
        await replayer.query("SET statement_timeout = '20s'")
        return replayer

    async def close(self) -> None:
        self.writer.write(_message(b"X", b""))
        with contextlib.suppress(OSError):
            await self.writer.drain()
        self.writer.close()

    async def _until_ready(self) -> list[str]:
        """Messages up to ReadyForQuery: the first column of every DataRow; an ErrorResponse
        is raised once the server is ready again."""
        rows: list[str] = []
        error: str | None = None
        while True:
            kind = await self.reader.readexactly(1)
            (length,) = struct.unpack("!i", await self.reader.readexactly(4))
            payload = await self.reader.readexactly(length - 4)
            if kind == b"R":
                (code,) = struct.unpack_from("!i", payload)
                if code != 0:
                    raise ReplayError(f"the server asks for authentication (code {code})")
            elif kind == b"D":
                (size,) = struct.unpack_from("!i", payload, 2)
                rows.append(payload[6 : 6 + size].decode())
            elif kind == b"E":
                fields = dict(
                    (part[:1].decode(), part[1:].decode()) for part in payload.split(b"\0") if part
                )
                error = f"{fields.get('C', '?')}: {fields.get('M', '')}"
            elif kind == b"Z":
                if error is not None:
                    raise ReplayError(error)
                return rows

    async def query(self, sql: str) -> list[str]:
        """A simple Query: no parameters."""
        self.writer.write(_message(b"Q", sql.encode() + b"\0"))
        return await self._until_ready()

    async def bound(self, sql: str, binding: Binding) -> list[str]:
        """`sql` parsed (its parameters' types inferred, as the service's Parse left them) and
        run with the parameters as they were sent."""
        parse = b"\0" + sql.encode() + b"\0" + struct.pack("!h", 0)
        formats = struct.pack(f"!h{len(binding.formats)}h", len(binding.formats), *binding.formats)
        values = struct.pack("!h", len(binding.values))
        for value in binding.values:
            values += struct.pack("!i", -1) if value is None else struct.pack("!i", len(value))
            values += value or b""
        bind = b"\0\0" + formats + values + struct.pack("!h", 0)
        self.writer.write(
            _message(b"P", parse)
            + _message(b"B", bind)
            + _message(b"E", b"\0" + struct.pack("!i", 0))
            + _message(b"S", b"")
        )
        return await self._until_ready()


# What the statements do, told from their first keyword once comments are left out.
_COMMENTS = re.compile(r"(--[^\n]*\n|/\*.*?\*/|\s)+", re.S)
CHECKED_KINDS = ("SELECT", "WITH", "INSERT", "UPDATE", "DELETE", "MERGE")


def kind(sql: str) -> str:
    return _COMMENTS.sub(" ", sql).strip().split(" ", 1)[0].upper()


def one_line(sql: str, width: int = 400) -> str:
    text = _COMMENTS.sub(" ", sql).strip()
    return text if len(text) <= width else text[: width - 1] + "…"


@dataclass(frozen=True)
class Finding:
    node: str
    relation: str
    rows: float  # the relation's size (pg_class.reltuples)
    why: str

    def __str__(self) -> str:
        return f"{self.node} on {self.relation} ({self.rows:,.0f} rows): {self.why}"


@dataclass(frozen=True)
class Catalogue:
    """What the plan checks need of the database: relation sizes and index key columns."""

    sizes: dict[str, float]
    index_columns: dict[str, tuple[str, ...]]
    large: float

    def is_large(self, relation: str) -> bool:
        return self.sizes.get(relation, 0.0) >= self.large


def _nodes(plan: dict[str, Any], limited: bool = False) -> Iterator[tuple[dict[str, Any], bool]]:
    """Every node of a plan with whether a Limit above it stops it: a Limit stops the nodes
    that feed it row by row, not those that read their whole input first (a sort, a hash, an
    aggregate, a window, a set operation, a write), nor an InitPlan or SubPlan, which runs on
    its own."""
    yield plan, limited
    node_type = plan["Node Type"]
    blocking = node_type in (
        "Sort",
        "Incremental Sort",
        "Hash",
        "Aggregate",
        "WindowAgg",
        "SetOp",
        "ModifyTable",
        "Recursive Union",
    )
    for child in plan.get("Plans", []):
        if child.get("Parent Relationship") in ("InitPlan", "SubPlan"):
            child_limited = False
        elif node_type == "Limit":
            child_limited = True
        else:
            child_limited = limited and not blocking
        yield from _nodes(child, child_limited)


INDEX_SCANS = ("Index Scan", "Index Only Scan")


def _bitmap_indexes(node: dict[str, Any]) -> Iterator[dict[str, Any]]:
    for child in node.get("Plans", []):
        if child["Node Type"] == "Bitmap Index Scan":
            yield child
        elif child["Node Type"] in ("BitmapAnd", "BitmapOr"):
            yield from _bitmap_indexes(child)


def _key_columns_filtered(node: dict[str, Any], catalogue: Catalogue) -> list[str]:
    """Key columns of the scan's index that its Filter tests and its Index Cond does not."""
    columns = catalogue.index_columns.get(node.get("Index Name", ""), ())
    condition = node.get("Index Cond", "")
    test = node.get("Filter", "")
    return [c for c in columns if _mentions(test, c) and not _mentions(condition, c)]


def _mentions(text: str, column: str) -> bool:
    """Whether an expression of a plan names the column (bare or qualified, `g.ordinal`)."""
    return re.search(rf"(?<!\w){re.escape(column)}(?!\w)", text) is not None


def shape_findings(plan: dict[str, Any], catalogue: Catalogue) -> list[Finding]:
    """The scans of large relations whose rows read no index condition or Limit bounds."""
    found = []
    for node, limited in _nodes(plan):
        relation = node.get("Relation Name")
        node_type = node["Node Type"]
        if relation is None or node_type == "ModifyTable" or not catalogue.is_large(relation):
            continue
        size = catalogue.sizes[relation]
        index = node.get("Index Name")
        if node_type in ("Seq Scan", "Sample Scan", "Tid Range Scan"):
            if not limited or "Filter" in node:
                why = "reads the whole relation" + (
                    " (under a Limit, but through a Filter)" if limited else ""
                )
                found.append(Finding(node_type, relation, size, why))
        elif node_type in INDEX_SCANS and "Index Cond" not in node:
            if not limited:
                found.append(
                    Finding(node_type, relation, size, f"reads all of index {index}, unlimited")
                )
            elif "Filter" in node:
                why = (
                    f"walks index {index} with no Index Cond under a Limit, discarding rows by"
                    f" the Filter {node['Filter']}: any number of them"
                )
                found.append(Finding(node_type, relation, size, why))
        elif (
            node_type in INDEX_SCANS
            and limited
            and (keys := _key_columns_filtered(node, catalogue))
        ):
            why = (
                f"walks index {index} under a Limit from its Index Cond {node['Index Cond']},"
                f" discarding rows by a Filter on its key columns {keys} that the index could"
                f" have skipped: {node['Filter']}"
            )
            found.append(Finding(node_type, relation, size, why))
        elif node_type == "Bitmap Heap Scan":
            loose = [b["Index Name"] for b in _bitmap_indexes(node) if "Index Cond" not in b]
            if loose:
                why = (
                    f"builds a bitmap of all of index {loose}: no Index Cond, and no Limit stops it"
                )
                found.append(Finding(node_type, relation, size, why))
    return found


def measured_findings(plan: dict[str, Any], catalogue: Catalogue, limit: int) -> list[Finding]:
    """The scans of large relations that read `limit` rows or more in this one execution
    (the rows they returned and those their Filter or recheck removed, over every loop)."""
    found = []
    for node, _ in _nodes(plan):
        relation = node.get("Relation Name")
        if relation is None or node["Node Type"] == "ModifyTable":
            continue
        if not catalogue.is_large(relation):
            continue
        per_loop = (
            node.get("Actual Rows", 0)
            + node.get("Rows Removed by Filter", 0)
            + node.get("Rows Removed by Index Recheck", 0)
        )
        read = per_loop * node.get("Actual Loops", 1)
        if read >= limit:
            indexes = [node["Index Name"]] if "Index Name" in node else []
            indexes += [b["Index Name"] for b in _bitmap_indexes(node)]
            where = f" on index {', '.join(indexes)}" if indexes else ""
            cond = f" (Index Cond {node['Index Cond']})" if "Index Cond" in node else ""
            filt = f", Filter {node['Filter']}" if "Filter" in node else ""
            why = f"read {read:,.0f} rows in one execution{where}{cond}{filt}"
            found.append(Finding(node["Node Type"], relation, catalogue.sizes[relation], why))
    return found


def functions_called(plan: dict[str, Any]) -> set[str]:
    """The functions a plan scans (FROM f(...))."""
    return {
        node["Function Name"]
        for node, _ in _nodes(plan)
        if node["Node Type"] == "Function Scan" and "Function Name" in node
    }
