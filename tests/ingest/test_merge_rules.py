"""Which copy of a resource wins when the same id arrives again."""

from __future__ import annotations

from fhirqa.store.merge import STORED, Candidate, decide


def stored(version=None, updated=None, digest="h0"):
    return Candidate(STORED, version, updated, digest, False)


def staged(seq, version=None, updated=None, digest="h1", deleted=False):
    return Candidate(seq, version, updated, None if deleted else digest, deleted)


def test_identical_content_changes_nothing():
    assert decide(stored(digest="same"), [staged(0, digest="same")]).action == "keep"


def test_a_newer_version_id_replaces():
    assert decide(stored(version="1"), [staged(0, version="2")]).seq == 0


def test_an_older_version_id_is_ignored():
    assert decide(stored(version="3"), [staged(0, version="2")]).action == "keep"


def test_last_updated_decides_when_versions_are_absent():
    old = stored(updated="2024-01-02T00:00:00+00:00")
    assert decide(old, [staged(0, updated="2024-01-01T23:00:00-02:00")]).seq == 0  # 01:00Z next day: newer
    assert decide(old, [staged(0, updated="2024-01-01T12:00:00Z")]).action == "keep"


def test_without_any_version_information_the_last_arrival_wins():
    assert decide(stored(), [staged(0, digest="a"), staged(5, digest="b")]).seq == 5


def test_a_deletion_removes_a_stored_resource():
    assert decide(stored(), [staged(0, deleted=True)]).action == "delete"


def test_deleting_what_was_never_stored_is_a_no_op():
    assert decide(None, [staged(0, deleted=True)]).action == "keep"


def test_a_resource_recreated_after_deletion_in_the_same_ingest_is_stored():
    assert decide(stored(), [staged(0, deleted=True), staged(1, digest="new")]).seq == 1
