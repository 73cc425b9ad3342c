"""The chat history in a support bundle, only when the sender includes it (issue 26 item 5).

``time_indexed.db`` is read from a private copy made without writing to it
(:func:`journal.chat.snapshot`) and rebuilt as a new database holding only the two chat tables of
the server's schema (cloudsave-format §6.2): the facts index (``facts_fts_v2`` and its shadow
tables, ``facts_fts_meta``) is left out, since its tokens are n-grams of the facts' text. When the
bundle is redacted, every message's words are keyed like any text (the server's message JSON keeps
its shape and role: ``{"type": T, "data": {"content": <token>}}``, each ``text`` part of a list
keyed); ids, session ids and times stay as they are.
"""

from __future__ import annotations

import json
import os
import sqlite3
from typing import Any

from inspector.core.bundle.redact import BundleRedactor
from journal.chat import ChatError, snapshot

#: The tables the bundle keeps, in the server's schema.
CHAT_TABLES = ("time_indexed_original", "time_indexed_compressed")


def _keyed_content(content: Any, redactor: BundleRedactor) -> Any:
    if isinstance(content, str):
        return redactor.text(content)
    if isinstance(content, list):
        out = []
        for part in content:
            if isinstance(part, dict) and isinstance(part.get("text"), str):
                part = {**part, "text": redactor.text(part["text"])}
            elif isinstance(part, str):
                part = redactor.text(part)
            out.append(part)
        return out
    return content


def keyed_message(raw: str, redactor: BundleRedactor) -> str:
    """A stored message with its words keyed; one that is not the server's JSON is keyed whole."""
    try:
        doc = json.loads(raw)
    except ValueError:
        return redactor.text(raw)
    data = doc.get("data") if isinstance(doc, dict) else None
    if not isinstance(data, dict) or "content" not in data:
        return redactor.text(raw)
    keyed = {**doc, "data": {**data, "content": _keyed_content(data["content"], redactor)}}
    for k, v in keyed["data"].items():
        if k != "content" and isinstance(v, str):
            keyed["data"][k] = redactor.text(v)
    return json.dumps(keyed, ensure_ascii=False)


def _text(value: Any) -> str:
    return value.decode("utf-8", "replace") if isinstance(value, bytes) else str(value)


def chat_db_bytes(source: str | os.PathLike[str], redactor: BundleRedactor | None) -> bytes:
    """The bundle's ``time_indexed.db``: the chat tables of ``source`` (read from a private copy),
    messages keyed when ``redactor`` is given.

    Raises:
        OSError: the db cannot be read (its reason in words).
    """
    try:
        with snapshot(source) as snap:
            src = snap.conn
            ddl = {
                _text(name): _text(sql)
                for name, sql in src.execute(
                    "SELECT name, sql FROM sqlite_master WHERE sql IS NOT NULL "
                    "AND (name IN (?, ?) OR tbl_name IN (?, ?))",
                    (*CHAT_TABLES, *CHAT_TABLES),
                )
            }
            dst = sqlite3.connect(":memory:")
            try:
                for name in sorted(ddl, key=lambda n: n not in CHAT_TABLES):  # tables before their indexes
                    dst.execute(ddl[name])
                for table in CHAT_TABLES:
                    if table not in ddl:
                        continue
                    rows = src.execute(f"SELECT id, session_id, message, timestamp FROM {table} ORDER BY id")
                    for rid, session, message, stored in rows:
                        text = None if message is None else _text(message)
                        if text is not None and redactor is not None:
                            text = keyed_message(text, redactor)
                        dst.execute(
                            f"INSERT INTO {table} (id, session_id, message, timestamp) VALUES (?, ?, ?, ?)",
                            (
                                rid,
                                None if session is None else _text(session),
                                text,
                                None if stored is None else _text(stored),
                            ),
                        )
                dst.commit()
                return dst.serialize()
            finally:
                dst.close()
    except sqlite3.Error as exc:
        raise OSError(f"not a readable chat history: {exc}") from None
    except ChatError as exc:  # missing, not a regular file, not a database, kept changing
        raise OSError(str(exc)) from None
