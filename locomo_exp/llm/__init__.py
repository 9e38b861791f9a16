"""The LLM runtime under the judge: it sends requests and stores replies, and knows no verdicts.

Modules: :mod:`.providers` (one module per API, the only ones importing an SDK),
:mod:`.messages` (the request, reply and client types), :mod:`.cache` (SQLite cache, claims,
batch ledger; ``python -m locomo_exp.llm.cache merge``), :mod:`.calls` (a call's spec and the
reader protocol the caller passes in), :mod:`.pool` (asyncio pool, canary, retries),
:mod:`.batch` (Message Batches mode), :mod:`.retry`, :mod:`.pacing`, :mod:`.interrupt`,
:mod:`.stop` (another thread's signal to stop paying), :mod:`.session` (a client and one pool
run), :mod:`.progress`, :mod:`.errors`, :mod:`.models` (what a preset says of its model) and
:mod:`.spend` (what tokens cost).

What a reply means (protocols, parsing, J) is :mod:`locomo_exp.judge`'s: it hands the runtime
a :class:`~locomo_exp.llm.calls.ReplyReader`. An import-linter contract (``pyproject.toml``)
forbids this package from importing the judge, trust, scoring, outputs or jobs.
"""
