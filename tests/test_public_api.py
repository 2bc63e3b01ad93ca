"""The public API is exactly what ``fhirqa.__all__`` lists, and every name resolves."""

import fhirqa


def test_every_exported_name_resolves():
    for name in fhirqa.__all__:
        assert getattr(fhirqa, name) is not None, name


def test_dir_lists_the_public_api():
    assert set(fhirqa.__all__) <= set(dir(fhirqa))
