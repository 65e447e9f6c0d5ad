"""The chat API: messages as JSON and as SSE, state, events, stream resume, errors."""

from __future__ import annotations

from server_kit import (
    ACTIVATE_OUTAGE,
    ALICE,
    SET_POSTCODE,
    ServeFactory,
    StreamingModel,
    parse_sse,
)

from keel.events.model import TurnEnded

SSE = {**ALICE, "accept": "text/event-stream"}
URL = "/v1/conversations/c1"


async def test_first_message_answers_json_with_greeting_and_turn(serve: ServeFactory) -> None:
    async with serve([ACTIVATE_OUTAGE]) as s:
        r = await s.client.post(
            f"{URL}/messages", json={"text": "my internet is down"}, headers=ALICE
        )
        last = await s.store.last_seq("alice/c1")
    assert r.status_code == 200
    body = r.json()
    texts = [m["text"] for m in body["messages"]]
    assert texts[0].startswith("Hi, I'm Wren")
    assert texts[-1] == "What's the postcode where the internet is down?"
    assert body["messages"][0]["buttons"][0]["title"] == "My internet is down"
    assert body["stop_reason"] == "end_turn"
    assert body["state"] == "idle"
    assert body["pending_confirmation"] is None
    assert body["last_seq"] == last > body["messages"][-1]["seq"]


async def test_sse_frames_carry_log_seqs_and_end_with_done(serve: ServeFactory) -> None:
    async with serve([ACTIVATE_OUTAGE, SET_POSTCODE]) as s:
        await s.client.post(f"{URL}/messages", json={"text": "down"}, headers=ALICE)
        r = await s.client.post(f"{URL}/messages", json={"text": "LN4 7QP"}, headers=SSE)
        log = {item.seq: item.event for item in await s.store.read("alice/c1")}
    assert r.status_code == 200
    assert r.headers["content-type"].startswith("text/event-stream")
    assert "content-length" not in r.headers
    frames = parse_sse(r.text)
    names = [name for _, name, _ in frames]
    assert names[-1] == "done" and names[-2] == "stop"
    assert "tool_started" in names and "tool_finished" in names and "bot_message" in names
    for ident, name, data in frames:
        if name == "bot_message":
            assert ident is not None and log[ident].kind == "bot_message"
            assert data["text"] == log[ident].text
        if name == "stop":
            assert isinstance(log[ident or 0], TurnEnded)
        if name in ("text_delta", "tool_started"):
            assert ident is None
    assert frames[-1][2] == {"stop_reason": "end_turn", "state": "idle", "last_seq": max(log)}
    assert frames[-1][0] == max(log)


async def test_streamed_model_text_arrives_as_text_deltas(serve: ServeFactory) -> None:
    reply = "Hello! I can help with outages, bills and plan changes."
    async with serve(model=StreamingModel([reply])) as s:
        r = await s.client.post(f"{URL}/messages", json={"text": "hi there"}, headers=SSE)
    frames = parse_sse(r.text)
    deltas = [data["text"] for _, name, data in frames if name == "text_delta"]
    assert len(deltas) >= 3 and "".join(deltas) == reply
    first_delta = next(i for i, f in enumerate(frames) if f[1] == "text_delta")
    said = [i for i, f in enumerate(frames) if f[1] == "bot_message" and f[2]["text"] == reply]
    assert said and said[0] > first_delta


async def test_last_event_id_resumes_from_the_log(serve: ServeFactory) -> None:
    async with serve([ACTIVATE_OUTAGE, SET_POSTCODE]) as s:
        first = await s.client.post(f"{URL}/messages", json={"text": "down"}, headers=ALICE)
        second = await s.client.post(f"{URL}/messages", json={"text": "LN4 7QP"}, headers=SSE)
        resume_at = first.json()["last_seq"]
        replay = await s.client.get(
            f"{URL}/stream", headers={**SSE, "Last-Event-ID": str(resume_at)}
        )
        by_query = await s.client.get(f"{URL}/stream?after={resume_at}", headers=SSE)
    live = [f for f in parse_sse(second.text) if f[0] is not None and f[1] != "done"]
    replayed = parse_sse(replay.text)
    assert [f for f in replayed if f[1] != "done"] == live
    assert all(ident is not None and ident > resume_at for ident, _, _ in replayed)
    assert replayed[-1][1] == "done" and replayed[-1][2]["state"] == "idle"
    assert parse_sse(by_query.text) == replayed


async def test_a_resume_point_past_the_log_answers_done_with_the_real_last_seq(
    serve: ServeFactory,
) -> None:
    async with serve([ACTIVATE_OUTAGE]) as s:
        await s.client.post(f"{URL}/messages", json={"text": "down"}, headers=ALICE)
        last = await s.store.last_seq("alice/c1")
        answers = [
            await s.client.get(f"{URL}/stream", headers={**SSE, "Last-Event-ID": resume})
            for resume in (str(last + 5), "99999999999999999999999999")
        ]
        answers.append(await s.client.get(f"{URL}/stream?after={last + 1}", headers=SSE))
    for r in answers:
        assert r.status_code == 200, r.text
        assert parse_sse(r.text) == [
            (last, "done", {"stop_reason": None, "state": "idle", "last_seq": last})
        ]


async def test_a_blank_last_event_id_is_absent_and_a_non_number_is_422(
    serve: ServeFactory,
) -> None:
    async with serve([ACTIVATE_OUTAGE]) as s:
        await s.client.post(f"{URL}/messages", json={"text": "down"}, headers=ALICE)
        blank = await s.client.get(f"{URL}/stream", headers={**SSE, "Last-Event-ID": " "})
        whole = await s.client.get(f"{URL}/stream", headers=SSE)
        words = await s.client.get(f"{URL}/stream", headers={**SSE, "Last-Event-ID": "4x"})
    assert blank.text == whole.text and parse_sse(whole.text)[-1][1] == "done"
    assert words.status_code == 422
    assert words.json()["error"]["code"] == "request.invalid"


async def test_conversation_view_masks_pii_memory(serve: ServeFactory) -> None:
    async with serve([ACTIVATE_OUTAGE, SET_POSTCODE]) as s:
        await s.client.post(f"{URL}/messages", json={"text": "down"}, headers=ALICE)
        mid = (await s.client.get(URL, headers=ALICE)).json()
        await s.client.post(f"{URL}/messages", json={"text": "LN4 7QP"}, headers=ALICE)
        view = (await s.client.get(URL, headers=ALICE)).json()
    assert mid["active_skill"] == "report_outage"
    assert [f["type"] for f in mid["stack"]] == ["skill", "ordered_block"]
    assert view["memory"]["report_outage.postcode"] == "[set]"
    assert view["memory"]["report_outage.area_status"] == "outage"
    assert view["state"] == "idle" and view["running"] is False
    assert view["pending_confirmation"] is None
    assert view["turn_count"] == 3


async def test_events_after_n(serve: ServeFactory) -> None:
    async with serve([ACTIVATE_OUTAGE]) as s:
        await s.client.post(f"{URL}/messages", json={"text": "down"}, headers=ALICE)
        everything = (await s.client.get(f"{URL}/events", headers=ALICE)).json()
        tail = (await s.client.get(f"{URL}/events?after=30&limit=2", headers=ALICE)).json()
    assert [e["seq"] for e in everything["events"]] == list(range(1, everything["last_seq"] + 1))
    assert everything["events"][0]["event"]["type"] == "turn_started"
    assert everything["events"][0]["event"]["v"] >= 1
    assert [e["seq"] for e in tail["events"]] == [31, 32]
    assert tail["last_seq"] == everything["last_seq"]


async def test_unknown_conversation_is_404(serve: ServeFactory) -> None:
    async with serve() as s:
        answers = [
            await s.client.get("/v1/conversations/nope", headers=ALICE),
            await s.client.get("/v1/conversations/nope/events", headers=ALICE),
            await s.client.get("/v1/conversations/nope/stream", headers=SSE),
            await s.client.post("/v1/conversations/nope/cancel", headers=ALICE),
            await s.client.post(
                "/v1/conversations/nope/approvals/p1", json={"approved": True}, headers=ALICE
            ),
        ]
    for r in answers:
        assert r.status_code == 404, r.text
        assert r.json()["error"]["code"] == "conversation.not_found"


async def test_validation_errors_are_422_with_a_reason(serve: ServeFactory) -> None:
    async with serve() as s:
        empty = await s.client.post(f"{URL}/messages", json={"text": ""}, headers=ALICE)
        extra = await s.client.post(f"{URL}/messages", json={"text": "x", "y": 1}, headers=ALICE)
        bad_id = await s.client.post(
            "/v1/conversations/has%20space/messages", json={"text": "x"}, headers=ALICE
        )
        not_json = await s.client.post(
            f"{URL}/messages",
            content=b"{not json",
            headers={**ALICE, "content-type": "application/json"},
        )
        bad_resume = await s.client.get(f"{URL}/stream", headers={**SSE, "Last-Event-ID": "x"})
    for r in (empty, extra, bad_id, not_json):
        assert r.status_code == 422, r.text
        error = r.json()["error"]
        assert error["code"] == "request.invalid"
        assert error["details"] and error["message"]
    assert "y" in extra.json()["error"]["message"]
    assert bad_resume.status_code == 422


async def test_request_size_limit_is_413(serve: ServeFactory) -> None:
    async def chunks() -> object:
        yield b'{"text": "'
        yield b"x" * 2000
        yield b'"}'

    async with serve(max_body_bytes=1024) as s:
        declared = await s.client.post(f"{URL}/messages", json={"text": "x" * 2000}, headers=ALICE)
        streamed = await s.client.post(
            f"{URL}/messages",
            content=chunks(),  # type: ignore[arg-type]
            headers={**ALICE, "content-type": "application/json"},
        )
        small = await s.client.get("/health")
    for r in (declared, streamed):
        assert r.status_code == 413, r.text
        assert r.json()["error"]["code"] == "request.too_large"
    assert small.status_code == 200
