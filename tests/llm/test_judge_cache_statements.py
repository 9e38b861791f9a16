"""What one claimed and stored call costs the cache: its key encoded once, eight statements."""

from __future__ import annotations

import json

from locomo_exp.llm.cache import CacheKey, CallClaims, JudgeCache
from locomo_exp.llm.messages import JudgeReply

REPLY = JudgeReply(text='{"score": 1}', stop_reason="end_turn", input_tokens=120,
                   output_tokens=9, model="claude-x")


def _key(question: str = "Where did Ann move?") -> CacheKey:
    return CacheKey(model="m", api_version="v", temperature=None, protocol="rubric",
                    prompt_version="rubric-v1", max_tokens=256, structured_output=True,
                    question=question, ground_truth="Lisbon", prediction="Lisbon.",
                    category=4, run_index=0)


def test_a_key_is_encoded_once_for_its_digest_and_its_stored_row(monkeypatch):
    encoded: list[int] = []
    real = json.dumps

    def counting(*args, **kwargs):
        encoded.append(1)
        return real(*args, **kwargs)

    monkeypatch.setattr(json, "dumps", counting)
    key = _key()
    digest = key.digest()
    fields = key.fields_json()
    assert key.digest() == digest and json.loads(fields)["question"] == "Where did Ann move?"
    assert len(encoded) == 1  # was one per digest and one per stored row


def test_a_claimed_then_stored_call_takes_eight_statements(tmp_path):
    cache = JudgeCache(tmp_path / "cache.sqlite")
    claims = CallClaims(cache, stale_after_s=60)
    statements: list[str] = []
    cache.connection.set_trace_callback(statements.append)
    key = _key()
    claim = claims.acquire(key.digest())
    claims.complete(key, REPLY, question_id="q1", digest=key.digest())
    cache.connection.set_trace_callback(None)
    assert claim.acquired
    # acquire: BEGIN IMMEDIATE, one read of the reply and the claim, the claim, COMMIT;
    # complete: BEGIN IMMEDIATE, the reply, the claim deleted, COMMIT (9 before: two reads)
    assert len(statements) == 8, statements
    assert cache.get(key.digest()) == REPLY


def test_the_one_read_finds_a_stored_reply_or_another_owners_claim(tmp_path):
    cache = JudgeCache(tmp_path / "cache.sqlite")
    mine = CallClaims(cache, stale_after_s=60)
    other = CallClaims(cache, stale_after_s=60)
    stored, held = _key(), _key("Where did Bo move?")
    cache.put(stored, JudgeReply(text="x", stop_reason="max_tokens", input_tokens=0,
                                 output_tokens=0, model="", usage_known=False))
    found = mine.acquire(stored.digest())
    assert not found.acquired and found.reply is not None
    assert (found.reply.text, found.reply.stop_reason, found.reply.usage_known) == (
        "x", "max_tokens", False)  # -1 tokens read back as unknown usage
    assert other.acquire(held.digest()).acquired
    waiting = mine.acquire(held.digest())
    assert not waiting.acquired and waiting.reply is None
    assert waiting.holder is not None and "pid" in waiting.holder
    other.close()
    assert mine.acquire(held.digest()).acquired  # released: this owner makes the call
