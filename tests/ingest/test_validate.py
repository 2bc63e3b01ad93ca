"""The checks that decide whether a record is stored or quarantined, each naming the field."""

from __future__ import annotations

import pytest

from fhirqa.normalize.validate import InvalidResource, check_resource
from tests.builders import observation


@pytest.mark.parametrize(
    ("resource", "message"),
    [
        ({"id": "x"}, "no resourceType"),
        ({"resourceType": "Spaceship", "id": "x"}, "unknown resourceType 'Spaceship'"),
        ({"resourceType": "Patient"}, "Patient has no id"),
        ({"resourceType": "Patient", "id": "bad id!"}, "not a valid FHIR id"),
        (observation(subject="Patient/p1"), "Observation.subject must be a Reference object"),
        (observation(subject={"reference": 42}), "Observation.subject.reference must be a string"),
        (observation(effectiveDateTime="yesterday"), "Observation.effectiveDateTime = 'yesterday' is not a FHIR"),
        (observation(effectiveDateTime=20240101), "Observation.effectiveDateTime must be a string"),
    ],
)
def test_bad_resources_are_rejected_with_the_field_named(resource, message):
    with pytest.raises(InvalidResource, match=message.replace("(", r"\(").replace("'", "'")):
        check_resource(resource)


def test_an_enormous_string_is_rejected():
    with pytest.raises(InvalidResource, match=r"Observation.note\[0\].text is a 2,000-character string"):
        check_resource(observation(note=[{"text": "x" * 2000}]), max_string=1000)


def test_a_good_resource_passes():
    check_resource(observation())
