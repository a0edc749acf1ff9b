"""Bodies of the chat routes: a plain {"text"} or the AI SDK useChat body."""

from __future__ import annotations

from typing import Any

import marshmallow
from marshmallow import fields, validate

from lookout.schema import strict

MAX_MESSAGES = 500


class NewChat(strict.StrictSchema):
    title = fields.String(load_default="", validate=validate.Length(max=200))


class Rename(strict.StrictSchema):
    title = fields.String(required=True, validate=validate.Length(max=200))


class TextMessage(strict.StrictSchema):
    text = fields.String(required=True, validate=validate.Length(min=1, max=8000))
    timezone = fields.String(
        load_default=None, validate=validate.Length(min=1, max=64),
        metadata={"description": "The sender's IANA time zone: new watches run in it."},
    )  # fmt: skip


class UIPart(marshmallow.Schema):
    class Meta:
        unknown = marshmallow.INCLUDE  # tool and data parts carry fields of their own

    type = fields.String(required=True, validate=validate.Length(max=100))
    text = fields.String(validate=validate.Length(max=8000))


class UIMessage(marshmallow.Schema):
    class Meta:
        unknown = marshmallow.INCLUDE  # metadata, createdAt…: read, ignored

    id = fields.String(validate=validate.Length(max=200))
    role = fields.String(required=True, validate=validate.OneOf(["user", "assistant", "system"]))
    parts = fields.List(fields.Nested(UIPart), required=True, validate=validate.Length(max=200))


class UseChatBody(strict.StrictSchema):
    """What `useChat` (AI SDK 5/6) posts: the whole message list; we take the last user one."""

    id = fields.String(validate=validate.Length(max=200))
    timezone = fields.String(load_default=None, validate=validate.Length(min=1, max=64))
    messages = fields.List(
        fields.Nested(UIMessage), required=True, validate=validate.Length(min=1, max=MAX_MESSAGES)
    )
    trigger = fields.String(validate=validate.OneOf(["submit-message", "regenerate-message"]))
    messageId = fields.String(allow_none=True, validate=validate.Length(max=200))


def last_user_text(body: dict[str, Any]) -> str:
    """The text of the last user message of a useChat body ("" when there is none)."""
    for message in reversed(body["messages"]):
        if message["role"] == "user":
            return "".join(p.get("text", "") for p in message["parts"] if p["type"] == "text")
    return ""
