"""The chat's graph state, kept bounded: recent turns verbatim, a rolling summary, snapshots."""

from __future__ import annotations

from typing import Any, TypedDict

KEEP_TURNS = 6
SUMMARY_CHARS = 2000
TURN_TEXT_CHARS = 500
TURN_ANSWER_CHARS = 1500


class ChatState(TypedDict, total=False):
    input: str  # this turn's message
    turns: list[dict[str, Any]]  # the last KEEP_TURNS turns: at, text, intent, answer
    summary: str  # one line per older turn, bounded
    pending: dict[str, Any] | None  # a question waiting for "once or keep watching?"
    pages: dict[str, Any]  # url -> latest snapshot {at, title, lines} (see agent.changes)
    proposal: dict[str, Any] | None  # a watch proposed, waiting for "yes" (agent.setup)
    watch: dict[str, Any] | None  # what the watch's condition read last (agent.conditions)


def add_turn(state: ChatState, turn: dict[str, Any]) -> tuple[list[dict[str, Any]], str]:
    """The recent turns with `turn` added, and the summary with any turn pushed out of them."""
    turn = {
        **turn,
        "text": str(turn.get("text", ""))[:TURN_TEXT_CHARS],
        "answer": str(turn.get("answer", ""))[:TURN_ANSWER_CHARS],
    }
    turns = [*(state.get("turns") or []), turn]
    summary = state.get("summary") or ""
    for old in turns[:-KEEP_TURNS]:
        first_line = str(old.get("answer", "")).split("\n", 1)[0][:160]
        summary += f"{old.get('at', '')}: asked “{str(old.get('text', ''))[:120]}” → {first_line}\n"
    return turns[-KEEP_TURNS:], summary[-SUMMARY_CHARS:]


def previous_question(state: ChatState) -> str | None:
    turns = state.get("turns") or []
    return str(turns[-1]["text"]) if turns else None
