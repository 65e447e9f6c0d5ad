"""The fidelity measures over every served conversation, and their table (pure).

Shares of results and texts are pooled over calls (found / had, summed over all calls);
the per-call mean is kept beside it. The prefix share is the mean, over every request
that has a previous one in its conversation, of `prefix_share(previous, current)`.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from metrics import CallComparison, RequestText, Serialised, first_difference, prefix_share

GOAL_EARLIER = 0.99
GOAL_PREFIX = 0.80


@dataclass(frozen=True, kw_only=True, slots=True)
class Conversation:
    """One served conversation, as measured."""

    calls: tuple[CallComparison, ...]
    """The compared calls, in order."""
    turns: tuple[int, ...]
    """The recorded user turn of each compared call."""
    keel: tuple[RequestText, ...]
    """Every request Keel sent, in order."""
    keel_messages: tuple[int, ...]
    """The customer message each of them followed (a new one: the clock had moved)."""
    recorded: tuple[RequestText, ...]
    """gpt-4o's request before each recorded reply."""
    recorded_turns: tuple[int, ...]
    in_step: bool

    @property
    def recorded_calls(self) -> int:
        """Replies the recording holds (compared or not)."""
        return len(self.recorded)


@dataclass(frozen=True, kw_only=True, slots=True)
class Measures:
    """What `bench/fidelity` reports (also its `--json` form)."""

    transcripts: int
    in_step: int
    """Transcripts served without leaving the recording's steps."""
    recorded_calls: int
    """Replies in the recordings; `calls` of them were compared (in step)."""
    calls: int
    calls_after_first: int
    """Calls made after the conversation's first user turn."""
    calls_with_earlier: int
    """Calls where gpt-4o had a tool result from an earlier user turn in its context."""
    earlier_results: int
    earlier_present: int
    earlier_per_call: float
    """Mean, over calls_with_earlier, of each call's share of earlier results present."""
    current_results: int
    current_present: int
    current_as_recorded: int
    """Current-turn results Keel's tools gave as recorded (else: another output)."""
    all_results_per_call: float
    """Mean, over calls_with_earlier, of the share of all gpt-4o's tool results (this
    turn's and earlier turns') that Keel's request carried."""
    user_texts: int
    user_present: int
    calls_missing_user: int
    """Calls whose request lacked at least one user text gpt-4o had."""
    bot_texts: int
    bot_present: int
    keel_chars: float
    recorded_chars: float
    keel_tokens: float
    recorded_tokens: float
    keel_max_tokens: int
    recorded_max_tokens: int
    keel_requests: int
    """Every request Keel sent (the prefix share is over consecutive ones)."""
    prefix_pairs: int
    keel_prefix: float
    """Keel's mean prefix share, system first (system, tools, messages)."""
    recorded_prefix: float
    prefix_within_turn: float
    """Keel's mean prefix share (system first) between calls of one user turn."""
    prefix_across_turns: float
    """Keel's mean prefix share (system first) from a turn's last call to the next turn's."""
    keel_prefix_tools_first: float
    """Keel's mean prefix share, tools first (tools, messages: `request_text`)."""
    recorded_prefix_tools_first: float
    tools_first_within_turn: float
    tools_first_across_turns: float
    first_difference: dict[str, int] = field(default_factory=dict)
    """How many of Keel's requests first differ from the previous one in each part."""

    @property
    def earlier_share(self) -> float:
        return _share(self.earlier_present, self.earlier_results)

    @property
    def user_share(self) -> float:
        return _share(self.user_present, self.user_texts)

    def as_json(self) -> dict[str, Any]:
        return asdict(self)


def measure(served: Sequence[Conversation]) -> Measures:
    """The measures over every served conversation."""
    calls = [c for conversation in served for c in conversation.calls]
    with_earlier = [c for c in calls if c.earlier_results]
    keel_shares: list[float] = []
    recorded_shares: list[float] = []
    within: list[float] = []
    across: list[float] = []
    keel_tf: list[float] = []
    recorded_tf: list[float] = []
    within_tf: list[float] = []
    across_tf: list[float] = []
    where: Counter[str] = Counter()
    for conversation in served:
        keel, messages = conversation.keel, conversation.keel_messages
        for index in range(1, len(keel)):
            previous, current = keel[index - 1], keel[index]
            same_turn = messages[index] == messages[index - 1]
            share = prefix_share(previous.system_first.text, current.system_first.text)
            keel_shares.append(share)
            (within if same_turn else across).append(share)
            where[first_difference(previous.system_first, current.system_first)] += 1
            share = prefix_share(previous.tools_first, current.tools_first)
            keel_tf.append(share)
            (within_tf if same_turn else across_tf).append(share)
        recorded = conversation.recorded
        for index in range(1, len(recorded)):
            previous, current = recorded[index - 1], recorded[index]
            recorded_shares.append(
                prefix_share(previous.system_first.text, current.system_first.text)
            )
            recorded_tf.append(prefix_share(previous.tools_first, current.tools_first))
    return Measures(
        transcripts=len(served),
        in_step=sum(1 for conversation in served if conversation.in_step),
        recorded_calls=sum(conversation.recorded_calls for conversation in served),
        calls=len(calls),
        calls_after_first=sum(1 for c in served for turn in c.turns if turn > 0),
        calls_with_earlier=len(with_earlier),
        earlier_results=sum(c.earlier_results for c in calls),
        earlier_present=sum(c.earlier_present for c in calls),
        earlier_per_call=_mean([c.earlier_present / c.earlier_results for c in with_earlier]),
        current_results=sum(c.current_results for c in calls),
        current_present=sum(c.current_present for c in calls),
        current_as_recorded=sum(c.current_as_recorded for c in calls),
        all_results_per_call=_mean(
            [
                (c.earlier_present + c.current_present) / (c.earlier_results + c.current_results)
                for c in with_earlier
            ]
        ),
        user_texts=sum(c.user_texts for c in calls),
        user_present=sum(c.user_present for c in calls),
        calls_missing_user=sum(1 for c in calls if c.user_present < c.user_texts),
        bot_texts=sum(c.bot_texts for c in calls),
        bot_present=sum(c.bot_present for c in calls),
        keel_chars=_mean([len(c.keel.text) for c in calls]),
        recorded_chars=_mean([len(c.recorded.text) for c in calls]),
        keel_tokens=_mean([c.keel.tokens for c in calls]),
        recorded_tokens=_mean([c.recorded.tokens for c in calls]),
        keel_max_tokens=max((c.keel.tokens for c in calls), default=0),
        recorded_max_tokens=max((c.recorded.tokens for c in calls), default=0),
        keel_requests=sum(len(conversation.keel) for conversation in served),
        prefix_pairs=len(keel_shares),
        keel_prefix=_mean(keel_shares),
        recorded_prefix=_mean(recorded_shares),
        prefix_within_turn=_mean(within),
        prefix_across_turns=_mean(across),
        keel_prefix_tools_first=_mean(keel_tf),
        recorded_prefix_tools_first=_mean(recorded_tf),
        tools_first_within_turn=_mean(within_tf),
        tools_first_across_turns=_mean(across_tf),
        first_difference=dict(sorted(where.items())),
    )


Cell = Callable[["_Run"], str]
"""One row's cell for one run (this one or an earlier run's `--json`)."""


def table(now: Measures, earlier: Sequence[tuple[str, Mapping[str, Any]]] = ()) -> list[str]:
    """The Markdown table: this run, each earlier (label, `--json`) run, gpt-4o's requests."""
    runs = [_Run(now.as_json()), *(_Run(data) for _label, data in earlier)]
    labels = ["Keel" if not earlier else "Keel, this tree", *(label for label, _data in earlier)]
    rows = [
        "| measure | " + " | ".join(labels) + " | gpt-4o | goal |",
        "| --- |" + " ---: |" * len(labels) + " ---: | --- |",
    ]
    for label, cell, recorded, goal in _rows(now):
        cells = " | ".join(cell(run) for run in runs)
        rows.append(f"| {label} | {cells} | {recorded} | {goal} |")
    return rows


def _rows(now: Measures) -> list[tuple[str, Cell, str, str]]:
    """(label, cell, gpt-4o's value, goal) for each row."""

    def pct(part: str, whole: str) -> Cell:
        def cell(run: _Run) -> str:
            a, b = run.count(part), run.count(whole)
            return run.only(f"{_share(a, b):.1%} ({a:,}/{b:,})", part, whole)

        return cell

    def share(*keys: str) -> Cell:
        return lambda run: run.only(" / ".join(f"{run.number(k):.1%}" for k in keys), *keys)

    def amount(key: str) -> Cell:
        return lambda run: run.only(f"{run.number(key):,.0f}", key)

    def where(run: _Run) -> str:
        counts = run.mapping("first_difference")
        parts = ("system", "tools", "messages")
        return run.only(" / ".join(f"{counts.get(p, 0):,}" for p in parts), "first_difference")

    return [
        ("calls compared (in step with the recording)", pct("calls", "recorded_calls"), "", ""),
        (
            "earlier-turn tool results present (pooled)",
            pct("earlier_present", "earlier_results"),
            "100%",
            f">= {GOAL_EARLIER:.0%}",
        ),
        ("same, mean per call", share("earlier_per_call"), "100%", ""),
        (
            "on those calls, all of gpt-4o's tool results present (mean per call)",
            share("all_results_per_call"),
            "100%",
            "",
        ),
        (
            "calls with an earlier-turn tool result in gpt-4o's context",
            pct("calls_with_earlier", "calls"),
            "",
            "",
        ),
        (
            "same, of the calls after the first user turn",
            pct("calls_with_earlier", "calls_after_first"),
            "",
            "",
        ),
        (
            "current-turn tool results present (matching check)",
            pct("current_present", "current_results"),
            "100%",
            "",
        ),
        (
            "current-turn tool results as recorded (tools answering alike)",
            pct("current_as_recorded", "current_results"),
            "100%",
            "",
        ),
        ("user texts present", pct("user_present", "user_texts"), "100%", ""),
        ("calls missing a user text", amount("calls_missing_user"), "0", ""),
        ("bot texts present", pct("bot_present", "bot_texts"), "100%", ""),
        (
            "prompt size, mean chars per call",
            amount("keel_chars"),
            f"{now.recorded_chars:,.0f}",
            "",
        ),
        (
            "prompt size, mean est. tokens per call",
            amount("keel_tokens"),
            f"{now.recorded_tokens:,.0f}",
            "",
        ),
        (
            "prompt size, largest call (est. tokens)",
            amount("keel_max_tokens"),
            f"{now.recorded_max_tokens:,}",
            "",
        ),
        (
            "prefix share, tools first (mean over consecutive requests)",
            share("keel_prefix_tools_first"),
            f"{now.recorded_prefix_tools_first:.1%}",
            f">= {GOAL_PREFIX:.0%}",
        ),
        (
            "same, after the same customer message / after a new one",
            share("tools_first_within_turn", "tools_first_across_turns"),
            "",
            "",
        ),
        (
            "prefix share, system first (mean over consecutive requests)",
            share("keel_prefix"),
            f"{now.recorded_prefix:.1%}",
            f">= {GOAL_PREFIX:.0%}",
        ),
        (
            "same, after the same customer message / after a new one",
            share("prefix_within_turn", "prefix_across_turns"),
            "",
            "",
        ),
        ("system first: requests first differing in system / tools / messages", where, "", ""),
    ]


def verdict(now: Measures) -> str:
    """One line: each goal met or not."""

    def met(value: float, goal: float) -> str:
        return f"{value:.1%} (>= {goal:.0%}: {'met' if value >= goal else 'not met'})"

    return (
        f"Goals: earlier-turn tool results present {met(now.earlier_share, GOAL_EARLIER)}; "
        f"prefix share tools first {met(now.keel_prefix_tools_first, GOAL_PREFIX)}, "
        f"system first {met(now.keel_prefix, GOAL_PREFIX)}."
    )


def _where(counts: Mapping[str, int]) -> str:
    return " / ".join(f"{counts.get(part, 0):,}" for part in ("system", "tools", "messages"))


class _Run:
    """One run's measures as JSON, read leniently (an earlier run may lack a measure)."""

    def __init__(self, data: Mapping[str, Any]) -> None:
        self.data = data

    def only(self, text: str, *keys: str) -> str:
        """`text`, or a dash where this run did not measure `keys`."""
        return text if all(key in self.data for key in keys) else "-"

    def count(self, key: str) -> int:
        value = self.data.get(key)
        return value if isinstance(value, int) else 0

    def number(self, key: str) -> float:
        value = self.data.get(key)
        return float(value) if isinstance(value, int | float) else 0.0

    def mapping(self, key: str) -> Mapping[str, int]:
        value = self.data.get(key)
        return value if isinstance(value, Mapping) else {}


def _share(part: int, whole: int) -> float:
    return part / whole if whole else 0.0


def _mean(values: Sequence[float]) -> float:
    return sum(values) / len(values) if values else 0.0


__all__ = [
    "GOAL_EARLIER",
    "GOAL_PREFIX",
    "Conversation",
    "Measures",
    "Serialised",
    "measure",
    "table",
    "verdict",
]
