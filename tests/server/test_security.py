"""Security: 401 for missing or bad tokens, 403 out of scope, the built-in token endpoint, limits, audit."""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import logging
import time

import jwt
import pytest

from fhirqa.server.limits import RateLimiter
from fhirqa.server.logs import JsonFormatter
from fhirqa.server.scopes import ScopeSet, grant, parse_scope
from tests.server.conftest import (
    NAME_A,
    NAME_B,
    PATIENT_CLIENT_ID,
    ask_parameters,
    copy_store,
    make_config,
    outcome_text,
    run_server,
)

FHIR = {"Content-Type": "application/fhir+json"}


def _ask(server, token, patient, question="What was her last A1c?"):
    headers = {**FHIR, **({"Authorization": f"Bearer {token}"} if token else {})}
    with server.client() as http:
        return http.post(f"/Patient/{patient}/$ask", json=ask_parameters(question), headers=headers)


def test_missing_and_malformed_tokens_are_401(server, ids):
    response = _ask(server, None, ids[NAME_A])
    assert response.status_code == 401
    assert response.headers["WWW-Authenticate"].startswith("Bearer")
    assert "needs a bearer access token" in outcome_text(response)
    for token in ("not-a-jwt", "a.b.c"):
        assert _ask(server, token, ids[NAME_A]).status_code == 401
    with server.client() as http:
        basic = http.get("/views", headers={"Authorization": "Basic dXNlcjpwYXNz"})
    assert basic.status_code == 401


@pytest.mark.parametrize("change, reason", [
    ({"expires_in": -120}, "expired"),
    ({"audience": "https://someone-else.test"}, "another audience"),
    ({"issuer": "https://evil.test"}, "issuer is not trusted"),
    ({"kid": "unknown-kid"}, "kid"),
])
def test_bad_tokens_are_401(server, ids, change, reason):
    response = _ask(server, server.token("system/*.rs", **change), ids[NAME_A])
    assert response.status_code == 401
    assert reason in outcome_text(response)
    assert 'error="invalid_token"' in response.headers["WWW-Authenticate"]


def test_wrongly_signed_and_symmetric_tokens_are_401(server, ids, keys):
    forged = server.token("system/*.rs", key=keys.rogue)  # right kid, wrong key
    response = _ask(server, forged, ids[NAME_A])
    assert response.status_code == 401 and "signature" in outcome_text(response)
    # Algorithm confusion: an HMAC token "signed" with the issuer's public JWKS as the secret.
    now = int(time.time())
    claims = {"iss": "https://ehr.test", "aud": server.url, "sub": "x", "scope": "system/*.rs", "exp": now + 60}
    assert _ask(server, _hs256(claims, keys.ehr_jwks.read_bytes()), ids[NAME_A]).status_code == 401
    unsigned = jwt.encode({"iss": "https://ehr.test", "aud": server.url, "sub": "x", "scope": "system/*.rs",
                           "exp": now + 60}, None, algorithm="none")
    assert _ask(server, unsigned, ids[NAME_A]).status_code == 401


def _hs256(claims: dict, secret: bytes) -> str:
    """An HMAC-signed JWT built by hand (PyJWT refuses to sign with key material as a secret)."""
    def b64(data: bytes) -> bytes:
        return base64.urlsafe_b64encode(data).rstrip(b"=")

    signing_input = b64(json.dumps({"alg": "HS256", "typ": "JWT", "kid": "ehr-1"}).encode()) + b"." + \
        b64(json.dumps(claims).encode())
    return (signing_input + b"." + b64(hmac.new(secret, signing_input, hashlib.sha256).digest())).decode()


def test_out_of_scope_tokens_are_403(server, ids):
    a, b = ids[NAME_A], ids[NAME_B]
    cases = [
        (server.token("patient/Observation.rs", a), a),  # an answer may rest on any record type
        (server.token("patient/*.rs"), a),  # patient scope without a patient in context
        (server.token("patient/*.rs", a), b),  # another patient
        (server.token("system/*.cu"), a),  # write, not read
        (server.token("openid fhirUser"), a),  # no resource scope at all
        (server.token("patient/*.rs?category=laboratory", a), a),  # granular scopes grant nothing here
    ]
    for token, patient in cases:
        response = _ask(server, token, patient)
        assert response.status_code == 403, response.text
        assert 'error="insufficient_scope"' in response.headers["WWW-Authenticate"]
        outcome_text(response)


def test_scope_types_gate_view_reads(server, ids):
    a = ids[NAME_A]
    with server.client(server.token("user/Observation.read")) as http:
        assert http.get(f"/Patient/{a}/views/observation", params={"limit": 1}).status_code == 200
        assert http.get(f"/Patient/{a}/views/condition").status_code == 403
        assert http.get(f"/Patient/{a}/views/encounter").status_code == 403  # joins Condition names
    with server.client(server.token("patient/Encounter.rs patient/Condition.rs", a)) as http:
        assert http.get(f"/Patient/{a}/views/encounter", params={"limit": 1}).status_code == 200


def test_scope_parsing_v1_and_v2():
    assert parse_scope("patient/*.read").permissions == frozenset("rs")
    assert parse_scope("user/Observation.write").permissions == frozenset("cud")
    assert parse_scope("system/*.*").permissions == frozenset("cruds")
    assert parse_scope("patient/Observation.rs").permissions == frozenset("rs")
    assert parse_scope("system/*.cruds").resource == "*"
    for bad in ("patient/Observation.sr", "patient/Observation.rr", "patient/observation.rs", "launch",
                "patient/Observation.rs?category=laboratory", "admin/*.read", "patient/*.x"):
        assert parse_scope(bad) is None, bad
    scopes = ScopeSet.parse("openid patient/Observation.rs user/Condition.read")
    assert scopes.allows("Observation", "rs", frozenset({"patient"}))
    assert not scopes.allows("Observation", "rs", frozenset({"user", "system"}))
    assert scopes.allows("Condition", "r") and not scopes.allows("Condition", "c")
    assert not scopes.allows("*", "rs")
    assert grant("system/Observation.rs system/*.cud launch", "system/*.rs") == "system/Observation.rs"
    assert grant(None, "system/*.rs") == "system/*.rs"
    assert grant("system/*.read", "system/*.rs") == "system/*.read"


def test_token_endpoint_issues_working_tokens(server, ids):
    form = {"grant_type": "client_credentials", "scope": "system/*.rs system/*.cud",
            "client_assertion_type": "urn:ietf:params:oauth:client-assertion-type:jwt-bearer"}
    with server.client() as http:
        config = http.get("/.well-known/smart-configuration").json()
        assert config["token_endpoint"] == server.config.token_url
        response = http.post("/auth/token", data={**form, "client_assertion": server.assertion()})
        assert response.status_code == 200, response.text
        body = response.json()
        assert body["token_type"] == "bearer" and body["scope"] == "system/*.rs"  # cud is not registered
        token = body["access_token"]
        answer = http.post(f"/api/patients/{ids[NAME_A]}/ask", json={"question": "last A1c"},
                           headers={"Authorization": f"Bearer {token}"})
        assert answer.status_code == 200
        # A client bound to patient A gets tokens that reach patient A only.
        bound = http.post("/auth/token", data={**form, "scope": "patient/*.rs",
                                               "client_assertion": server.assertion(PATIENT_CLIENT_ID)}).json()
        assert bound["patient"] == ids[NAME_A]
        headers = {"Authorization": f"Bearer {bound['access_token']}"}
        assert http.get(f"/Patient/{ids[NAME_A]}/views/patient", headers=headers).status_code == 200
        assert http.get(f"/Patient/{ids[NAME_B]}/views/patient", headers=headers).status_code == 403


def test_token_endpoint_refuses_bad_assertions(server, keys):
    form = {"grant_type": "client_credentials", "scope": "system/*.rs",
            "client_assertion_type": "urn:ietf:params:oauth:client-assertion-type:jwt-bearer"}
    replayed = server.assertion(jti="same-jti")
    with server.client() as http:
        assert http.post("/auth/token", data={**form, "client_assertion": replayed}).status_code == 200
        cases = {
            "replay": replayed,
            "wrong key": server.assertion(key=_p384()),
            "wrong audience": server.assertion(audience="https://elsewhere.test/token"),
            "unknown client": server.assertion("nobody"),
            "too long-lived": server.assertion(expires_in=3600),
        }
        for what, assertion in cases.items():
            response = http.post("/auth/token", data={**form, "client_assertion": assertion})
            assert response.status_code == 401, what
            assert response.json()["error"] == "invalid_client", what
        assert http.post("/auth/token", data={**form, "grant_type": "password",
                                              "client_assertion": server.assertion()}).json()["error"] == \
            "unsupported_grant_type"
        assert http.post("/auth/token", data={**form, "scope": "system/*.cud",
                                              "client_assertion": server.assertion()}).json()["error"] == "invalid_scope"


def _p384():
    from cryptography.hazmat.primitives.asymmetric import ec

    return ec.generate_private_key(ec.SECP384R1())


def test_rate_limit_answers_429_with_retry_after(sample_store, keys, ids, tmp_path):
    config = make_config(copy_store(sample_store, tmp_path / "db"), tmp_path / "state", keys,
                         rate_limit_per_minute=60, rate_limit_burst=3)
    with run_server(config, keys) as server, server.client(server.token("system/*.rs")) as http:
        statuses = [http.get("/views").status_code for _ in range(5)]
        assert statuses[:3] == [200, 200, 200] and statuses[-1] == 429
        response = http.get("/views")
        assert response.status_code == 429 and int(response.headers["Retry-After"]) >= 1
        outcome_text(response)
        # Another client has its own bucket.
        with server.client(server.token("system/*.rs", sub="someone-else")) as other:
            assert other.get("/views").status_code == 200


def test_rate_limiter_refills():
    now = [0.0]
    limiter = RateLimiter(per_minute=60, burst=2, clock=lambda: now[0])
    assert limiter.check("a") is None and limiter.check("a") is None
    assert limiter.check("a") == pytest.approx(1.0)
    now[0] += 1.0
    assert limiter.check("a") is None


def test_request_size_limits(server, ids):
    big = "x" * (server.config.max_body_bytes + 1)
    with server.client(server.token("system/*.rs")) as http:
        response = http.post(f"/api/patients/{ids[NAME_A]}/ask", json={"question": big})
        assert response.status_code == 413
        assert "larger than" in outcome_text(response)

        def chunks():  # no Content-Length: the limit is enforced while the body streams
            for _ in range(40):
                yield b"x" * 65536

        streamed = http.post(f"/api/patients/{ids[NAME_A]}/ask", content=chunks(),
                             headers={"Content-Type": "application/json"})
        assert streamed.status_code == 413


def test_audit_log_records_who_what_patient_and_outcome_but_logs_do_not(server, ids):
    question = "Was her blood pressure ever above 150 secretword?"
    records: list[logging.LogRecord] = []
    handler = logging.Handler()
    handler.emit = records.append  # type: ignore[method-assign]
    logging.getLogger("fhirqa").addHandler(handler)
    logging.getLogger("fhirqa").setLevel(logging.INFO)
    token = server.token("patient/*.rs", ids[NAME_A])
    before = len(server.config.audit_path.read_text().splitlines()) if server.config.audit_path.exists() else 0
    try:
        assert _ask(server, token, ids[NAME_A], question).status_code == 200
        assert _ask(server, token, ids[NAME_B], question).status_code == 403
    finally:
        logging.getLogger("fhirqa").removeHandler(handler)
    # Picked by content, not position: the previous test's streamed 413 request may be audited in between.
    digest = hashlib.sha256(question.encode()).hexdigest()
    # The server writes a request's AuditEvent once the request is over, which may be just after the client has read
    # the response: wait (briefly) for both events rather than racing the server.
    deadline = time.monotonic() + 10
    while True:
        events = [json.loads(line) for line in server.config.audit_path.read_text().splitlines()[before:]]
        asks = [e for e in events if e["subtype"][0]["code"] == "ask"]
        oks = [e for e in asks if any(d.get("valueString") == digest for x in e["entity"] for d in x.get("detail", []))]
        refusals = [e for e in asks if {"reference": f"Patient/{ids[NAME_B]}"} in [x.get("what") for x in e["entity"]]]
        if (oks and refusals) or time.monotonic() > deadline:
            break
        time.sleep(0.05)
    (ok,), (refused,) = oks, refusals
    assert ok["outcome"] == "0" and refused["outcome"] == "4" and refused["outcomeDesc"] == "HTTP 403"
    assert ok["agent"][0]["who"]["identifier"] == {"system": "https://ehr.test", "value": "dr-who"}
    assert {"reference": f"Patient/{ids[NAME_A]}"} in [e.get("what") for e in ok["entity"]]
    assert {"reference": f"Patient/{ids[NAME_B]}"} in [e.get("what") for e in refused["entity"]]
    queries = [e["query"] for e in ok["entity"] if "query" in e]
    assert base64.b64decode(queries[0]).decode() == question
    audit_text = server.config.audit_path.read_text()
    assert token not in audit_text
    lines = [JsonFormatter().format(r) for r in records]
    assert lines and all(json.loads(line)["message"] for line in lines)  # structured JSON lines
    access = [json.loads(line) for line in lines if '"route"' in line]
    assert any({"route": "/Patient/{id}/$ask", "status": 403}.items() <= a.items() for a in access)
    log_text = "\n".join(lines)
    assert "secretword" not in log_text and token not in log_text and ids[NAME_A] not in log_text
