"""What each /api and /v1 route answers in the envelope's `data`, for the OpenAPI document (the
routes build these dicts in their services: chats.view, watches.service.summary, jobs.view, …).
Unknown keys are refused (additionalProperties: false), so a key a route adds and this module
does not name fails the schema checks (tests/integration/test_openapi_clients.py, and
schemathesis in tests/reliability)."""

from __future__ import annotations

from marshmallow import fields

from lookout.notify import schema as notify_schema
from lookout.schema import accounts, connectors, strict
from lookout.schema import oauth as oauth_schema
from lookout.schema import watches as watch_schemas

_Out = strict.StrictSchema


def _when(*, nullable: bool = False) -> fields.AwareDateTime:
    return fields.AwareDateTime(required=True, allow_none=nullable)


def _text(*, nullable: bool = False, description: str | None = None) -> fields.String:
    meta = {"description": description} if description else {}
    return fields.String(required=True, allow_none=nullable, metadata=meta)


def _ids(name: str) -> fields.UUID:
    return fields.UUID(required=True, metadata={"description": name})


class WatchNotify(_Out):
    enabled = fields.Boolean(required=True)
    targets = fields.List(
        fields.UUID(),
        required=True,
        allow_none=True,
        metadata={"description": "null = the workspace's default target"},
    )
    compared_versions = fields.Integer(required=True)


class Watch(_Out):
    """A watch: an automation re-posting `message` to its chat on `cadence`."""

    id = _ids("The watch (automation) id")
    chat_id = _ids("The watched chat")
    message = _text(nullable=True)
    cadence = _text(description="5-field cron")
    timezone = _text(description="IANA time zone of the cadence")
    schedule = _text(description="The cadence in words")
    enabled = fields.Boolean(required=True)
    next_run_at = _when(nullable=True)
    last_run_status = _text(nullable=True)
    credits_per_month = fields.Integer(required=True, allow_none=True)
    notify = fields.Nested(WatchNotify, required=True)
    condition = fields.Nested(
        watch_schemas.ConditionSchema, required=True, allow_none=True,
        metadata={"description": "What it tells about ({kind, value, text, unit}); null: any "
                  "change"},
    )  # fmt: skip
    condition_words = _text(nullable=True, description="The condition in words")
    last_value = fields.Raw(
        required=True, allow_none=True, metadata={"description": "What the last run read"}
    )
    last_condition_met = fields.Boolean(required=True, allow_none=True)
    sentence = _text(description="The confirmation a person reads")


class Chat(_Out):
    id = fields.UUID(required=True)
    title = _text()
    created_at = _when()
    updated_at = _when()
    watch = fields.Nested(Watch, required=True, allow_none=True)


class ChatPage(_Out):
    chats = fields.List(fields.Nested(Chat), required=True)
    offset = fields.Integer(required=True)
    limit = fields.Integer(required=True)


class Message(_Out):
    id = fields.UUID(required=True)
    seq = fields.Integer(required=True)
    role = _text(description="user or assistant")
    source = _text(description="user, api or automation")
    parts = fields.List(
        fields.Dict(),
        required=True,
        metadata={"description": "UI message parts (text, tool-*, data-*)"},
    )
    run_id = fields.UUID(required=True, allow_none=True)
    manual = fields.Boolean(required=True, metadata={"description": "A check someone asked for"})
    created_at = _when()


class MessagePage(_Out):
    messages = fields.List(fields.Nested(Message), required=True)
    next_after = fields.Integer(
        required=True,
        allow_none=True,
        metadata={"description": "`after` of the next page; null: last"},
    )


class DeletedChat(_Out):
    deleted = fields.UUID(required=True)


class WatchList(_Out):
    watches = fields.List(fields.Nested(Watch), required=True)


class RunQueued(_Out):
    run_id = fields.UUID(required=True)
    status = _text()


class Delivery(_Out):
    id = fields.UUID(required=True)
    target_id = fields.UUID(required=True, allow_none=True)
    target = _text(nullable=True)
    status = _text()
    attempts = fields.Integer(required=True)
    last_error = _text(nullable=True)
    note = _text(nullable=True)
    created_at = _when(nullable=True)
    finished_at = _when(nullable=True)


class ChangedLine(_Out):
    before = _text(nullable=True, description="The line before (null: it was not kept)")
    after = _text(nullable=True)


class ChangeCounts(_Out):
    modified = fields.Integer(required=True)
    added = fields.Integer(required=True)
    removed = fields.Integer(required=True)
    moved = fields.Integer(required=True)


class _Changes(_Out):
    changed = fields.Boolean(required=True)
    modified = fields.List(fields.Nested(ChangedLine), required=True)
    added = fields.List(fields.String(), required=True)
    removed = fields.List(fields.String(), required=True)
    moved = fields.List(fields.Nested(ChangedLine), required=True)
    counts = fields.Nested(ChangeCounts, required=True)


class SourceChanges(_Changes):
    url = _text()
    title = _text(nullable=True)
    since = _text(nullable=True, description="When the compared snapshot was taken")


class RunChanges(_Changes):
    """What a run found (bounded lists, exact counts), over all its sources and per source."""

    sources = fields.List(fields.Nested(SourceChanges), required=True)


class Run(_Out):
    id = fields.UUID(required=True)
    scheduled_for = _when(nullable=True)
    manual = fields.Boolean(required=True)
    status = _text()
    attempts = fields.Integer(required=True)
    error = _text(nullable=True)
    started_at = _when(nullable=True)
    finished_at = _when(nullable=True)
    condition_met = fields.Boolean(required=True, allow_none=True)
    value = fields.Raw(required=True, allow_none=True, metadata={"description": "What it read"})
    changes = fields.Nested(
        RunChanges, required=True, allow_none=True,
        metadata={"description": "What the run found; null when it compared nothing"},
    )  # fmt: skip
    deliveries = fields.List(fields.Nested(Delivery), required=True)


class RunList(_Out):
    runs = fields.List(fields.Nested(Run), required=True)


class SignedOut(_Out):
    signed_out = fields.Boolean(required=True)


class SignedOutEverywhere(_Out):
    signed_out = fields.Boolean(required=True)
    sessions_ended = fields.Integer(required=True, metadata={"description": "Sessions ended."})


class InviteList(_Out):
    invites = fields.List(fields.Nested(accounts.InviteSchema), required=True)


class Revoked(_Out):
    revoked = fields.Boolean(required=True)


class KeyList(_Out):
    keys = fields.List(fields.Nested(accounts.ApiKeySchema), required=True)


class RevokedKey(_Out):
    key = fields.Nested(accounts.ApiKeySchema, required=True)


class ConnectorList(_Out):
    connectors = fields.List(fields.Nested(connectors.ConnectorSchema), required=True)


class CreatedConnector(_Out):
    connector = fields.Nested(connectors.ConnectorSchema, required=True)


class Deleted(_Out):
    deleted = fields.Boolean(required=True)


class TargetList(_Out):
    targets = fields.List(fields.Nested(notify_schema.TargetSchema), required=True)


class CreatedTarget(_Out):
    target = fields.Nested(notify_schema.TargetSchema, required=True)
    signing_secret = fields.String(
        metadata={"description": "Webhooks whose secret Lookout made: shown this once."}
    )


class TestedTarget(_Out):
    target = fields.Nested(notify_schema.TargetSchema, required=True)
    sent = fields.Boolean(required=True)
    error = _text(nullable=True)


class Progress(_Out):
    done = fields.Integer(required=True)
    total = fields.Integer(required=True)


class Job(_Out):
    id = fields.UUID(required=True)
    verb = _text()
    status = _text(description="queued, running, succeeded, failed or cancelled")
    progress = fields.Nested(Progress, required=True)
    attempts = fields.Integer(required=True)
    created_at = _when()
    started_at = _when(nullable=True)
    finished_at = _when(nullable=True)
    expires_at = _when()
    result = fields.Dict(
        required=True,
        allow_none=True,
        metadata={"description": "Once finished: the verb's own envelope"},
    )


class VerbUsage(_Out):
    verb = _text()
    calls = fields.Integer(required=True)
    credits = fields.Integer(required=True)


class LedgerEntry(_Out):
    request_id = _text()
    call_id = _text(description="The verb call's ledger key (meta.call_id)")
    kind = _text(description="grant, reserve, settle or refund")
    amount = fields.Integer(required=True)
    verb = _text(nullable=True)
    created_at = _when()


class Usage(_Out):
    balance = fields.Integer(required=True, allow_none=True)
    period_days = fields.Integer(required=True)
    verbs = fields.List(fields.Nested(VerbUsage), required=True)
    ledger = fields.List(fields.Nested(LedgerEntry), required=True)


class VerbInfo(_Out):
    name = _text()
    title = _text()
    description = _text()
    path = _text()
    price = fields.Integer(required=True)
    slow = fields.Raw(required=True, metadata={"description": "true, false or 'depends on input'"})
    read_only = fields.Boolean(required=True)
    input_schema = fields.Dict(required=True)
    output_schema = fields.Dict(required=True)


class VerbList(_Out):
    verbs = fields.List(fields.Nested(VerbInfo), required=True)


class ConsentClient(_Out):
    id = _text()
    name = _text(nullable=True)
    uri = _text(nullable=True)
    verified_by_url = fields.Boolean(
        required=True, metadata={"description": "Its client id is a metadata document's URL"}
    )


class ConsentScope(_Out):
    name = _text()
    description = _text()


class ConsentUser(_Out):
    email = _text()


class ConsentWorkspace(_Out):
    id = _text()
    name = _text()
    role = _text()


class Consent(_Out):
    """What an authorization request asks of the signed-in person."""

    client = fields.Nested(ConsentClient, required=True)
    redirect_host = _text()
    resource = _text()
    scopes = fields.List(fields.Nested(ConsentScope), required=True)
    user = fields.Nested(ConsentUser, required=True)
    workspaces = fields.List(fields.Nested(ConsentWorkspace), required=True)


class ConsentDecision(_Out):
    redirect_to = _text(description="Where to send the browser (the client's redirect URI)")
    allowed = fields.Boolean(required=True)


class AgentList(_Out):
    agents = fields.List(fields.Nested(oauth_schema.GrantSchema), required=True)


class RevokedAgent(_Out):
    agent = fields.Nested(oauth_schema.GrantSchema, required=True)
