"""The judge cache: one SQLite file with three parts, one module each.

* :mod:`.store` - completed calls (:class:`JudgeCache`, :class:`CacheKey`);
* :mod:`.claims` - the cross-process claims on calls in flight (:class:`CallClaims`,
  with the owner registry :class:`ClaimOwners`);
* :mod:`.ledger` - the Message Batches ledger (:class:`BatchLedger`);
* :mod:`.merge` - merging per-job cache files into one
  (``python -m locomo_exp.llm.cache merge OUT.sqlite A.sqlite B.sqlite ...``).
"""

from __future__ import annotations

from locomo_exp.llm.cache.claims import CallClaims, Claim, ClaimOwners, pid_alive
from locomo_exp.llm.cache.ledger import (
    COLLECTED,
    FAILED,
    IN_FLIGHT_STATUSES,
    IN_PROGRESS,
    MISSING,
    SUBMITTING,
    BatchLedger,
    LedgerRequest,
    Submission,
    custom_id_for,
)
from locomo_exp.llm.cache.merge import MergeReport, merge_caches
from locomo_exp.llm.cache.store import (
    CACHE_SCHEMA_VERSION,
    HOSTNAME,
    SQLITE_HEADER,
    CacheKey,
    JudgeCache,
    cache_path_problem,
    resolve_cache_path,
)

__all__ = [
    "CACHE_SCHEMA_VERSION",
    "COLLECTED",
    "FAILED",
    "HOSTNAME",
    "IN_FLIGHT_STATUSES",
    "IN_PROGRESS",
    "MISSING",
    "SQLITE_HEADER",
    "SUBMITTING",
    "BatchLedger",
    "CacheKey",
    "CallClaims",
    "Claim",
    "ClaimOwners",
    "JudgeCache",
    "LedgerRequest",
    "MergeReport",
    "Submission",
    "cache_path_problem",
    "custom_id_for",
    "merge_caches",
    "pid_alive",
    "resolve_cache_path",
]
