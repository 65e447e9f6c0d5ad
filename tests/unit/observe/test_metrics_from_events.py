"""`TurnMetrics` counts what a run's events say; read back with prometheus_client's parser."""

from __future__ import annotations

from prometheus_client.parser import text_string_to_metric_families

from keel.events.model import Event, PlanCacheDecided, ToolCallRefused, TurnEnded, TurnStarted
from keel.observe.metrics import FOLD_EVERY, TurnMetrics
from keel.observe.record import Commit, RawRun, RunRecord, record_of
from keel.stores.port import StoredEvent


def _record(events: list[Event], *, failed: bool = False) -> RunRecord:
    return RunRecord(
        conversation_id="alice/c1",
        events=tuple((seq, event) for seq, event in enumerate(events, start=1)),
        commits=(Commit(first_seq=1, last_seq=len(events), stamped=10.0, stored=10.25),),
        tool_starts=(),
        ended_at=10.25,
        failed=failed,
    )


def _samples(metrics: TurnMetrics) -> dict[tuple[str, frozenset[tuple[str, str]]], float]:
    text = metrics.exposition().decode("utf-8")
    return {
        (s.name, frozenset(s.labels.items())): s.value
        for family in text_string_to_metric_families(text)
        for s in family.samples
    }


def test_plan_cache_decisions_are_counted_by_layer_hit_and_reason() -> None:
    metrics = TurnMetrics(now=lambda: 10.25)
    metrics.observe(
        _record(
            [
                TurnStarted(turn_id="t1", timestamp=10.0),
                PlanCacheDecided(layer="l0", hit=False, reason="no_entry", timestamp=10.0),
                PlanCacheDecided(layer="l1", hit=True, reason="hit", timestamp=10.0),
                PlanCacheDecided(layer="record", hit=False, reason="recorded", timestamp=10.0),
                ToolCallRefused(
                    tool_name="made_up",
                    arguments="{}",
                    code="tool.not_offered",
                    message="no such tool",
                    tool_call_id="c1",
                    timestamp=10.0,
                ),
                TurnEnded(turn_id="t1", stop_reason="end_turn", timestamp=10.0),
            ]
        )
    )
    got = _samples(metrics)
    decisions = "keel_plan_cache_decisions_total"
    assert (
        got[(decisions, frozenset({"layer": "l0", "hit": "false", "reason": "no_entry"}.items()))]
        == 1
    )
    assert got[(decisions, frozenset({"layer": "l1", "hit": "true", "reason": "hit"}.items()))] == 1
    assert (
        got[
            (
                decisions,
                frozenset({"layer": "record", "hit": "false", "reason": "recorded"}.items()),
            )
        ]
        == 1
    )
    assert (
        got[("keel_tool_calls_refused_total", frozenset({"code": "tool.not_offered"}.items()))] == 1
    )
    # The turn lasted from its start to its last commit being stored.
    assert (
        got[("keel_turn_duration_seconds_sum", frozenset({"stop_reason": "end_turn"}.items()))]
        == 0.25
    )
    assert got[("keel_store_commit_duration_seconds_sum", frozenset())] == 0.25


def test_a_run_that_failed_before_ending_its_turn_counts_as_an_error_turn() -> None:
    metrics = TurnMetrics(now=lambda: 10.25)
    metrics.observe(_record([TurnStarted(turn_id="t1", timestamp=10.0)], failed=True))
    got = _samples(metrics)
    assert got[("keel_turns_total", frozenset({"stop_reason": "error"}.items()))] == 1


def test_active_conversations_stay_bounded_with_no_scrape() -> None:
    # One conversation a second, each its own turn; the window is 10 seconds. Nobody
    # scrapes, yet what is remembered for keel_conversations_active stays bounded.
    metrics = TurnMetrics(now=lambda: 20_000.0, active_window=10.0)
    for n in range(20_000):
        at = float(n)
        metrics.observe(
            RunRecord(
                conversation_id=f"c{n}",
                events=(
                    (1, TurnStarted(turn_id="t", timestamp=at)),
                    (2, TurnEnded(turn_id="t", stop_reason="end_turn", timestamp=at)),
                ),
                commits=(),
                tool_starts=(),
                ended_at=at,
            )
        )
    assert len(metrics._last_turn) <= 2 * 4096
    got = _samples(metrics)
    assert got[("keel_turns_total", frozenset({"stop_reason": "end_turn"}.items()))] == 20_000
    assert got[("keel_conversations_active", frozenset())] == 10  # the last 10 seconds


def _turn(turn_id: str) -> RawRun:
    events: list[Event] = [
        TurnStarted(turn_id=turn_id, timestamp=10.0),
        TurnEnded(turn_id=turn_id, stop_reason="end_turn", timestamp=10.0),
    ]
    stored = [
        StoredEvent(conversation_id="alice/c1", seq=seq, event=event)
        for seq, event in enumerate(events, start=1)
    ]
    return RawRun("alice/c1", ((stored, 10.0, 10.25),), (), 10.25)


def test_a_raw_run_makes_the_record_of_its_commits() -> None:
    record = record_of(_turn("t1"))
    assert [(seq, event.kind) for seq, event in record.events] == [
        (1, "turn_started"),
        (2, "turn_ended"),
    ]
    assert record.commits == (Commit(1, 2, 10.0, 10.25),)
    assert (record.conversation_id, record.ended_at, record.failed) == ("alice/c1", 10.25, False)


def _turns(metrics: TurnMetrics) -> float:
    turns = [s for s in metrics.turns.values.items() if s[0] == ("end_turn",)]
    return turns[0][1][0] if turns else 0.0


def test_a_run_reported_for_later_is_counted_by_the_next_scrape() -> None:
    metrics = TurnMetrics(now=lambda: 10.25)
    metrics.observe_later(_turn("t1"))
    metrics.observe_later(_turn("t2"))
    assert _turns(metrics) == 0  # nothing counted while the requests ran
    got = _samples(metrics)
    assert got[("keel_turns_total", frozenset({"stop_reason": "end_turn"}.items()))] == 2
    assert got[("keel_conversations_active", frozenset())] == 1
    assert (
        _samples(metrics)[("keel_turns_total", frozenset({"stop_reason": "end_turn"}.items()))] == 2
    )


def test_runs_reported_for_later_are_counted_once_enough_wait_with_no_scrape() -> None:
    metrics = TurnMetrics(now=lambda: 10.25)
    for index in range(FOLD_EVERY - 1):
        metrics.observe_later(_turn(f"t{index}"))
    assert _turns(metrics) == 0
    metrics.observe_later(_turn("last"))
    assert _turns(metrics) == FOLD_EVERY  # counted without a scrape: memory stays bounded
