"""Stateful conformance of the emulated unit: sessions, settings writes and read-back.

Used by `schemathesis_emulator.py` (which starts the emulator); runnable alone:

    python openapi/unit_sessions.py DEVICE_URL --passwords JSON [--examples N] [--steps N]

A hypothesis `RuleBasedStateMachine` drives `openapi/ins-device.yaml` through sequences
of login, settings writes (whole tree, one node, defaults, check-only), reads (whole
tree, `delta=true`, one node), settings lock and unlock, password changes, data logger
start/stop and logout, with live and dead tokens and without `auth`. Every answer goes
through schemathesis's response checks against the document (no server error,
documented status, content type, headers, schema), and the machine keeps its own model
of the unit, built from the document's rules, so that it also asserts what the
document says should happen:

- the status: 401 for a dead token or a login-only operation without `auth`, 403 when
  the user lacks the operation's `x-required-right`, 409 while another token holds the
  settings lock (or the logger is already in the asked state), 200 otherwise;
- a write is merged into the tree (objects key by key, arrays and scalars whole) and
  every later read answers the merged tree; `checkOnly=true` changes nothing;
  `needReboot` is true exactly when a setting under an `x-need-reboot` schema changed;
- `delta=true` answers exactly the settings that differ from the defaults;
- a password change takes effect at the next login, and the default user (chosen at
  power-on) does not change with it.

The settings bodies come from schemathesis's generator over the document's `Settings`
schema with two of the document's rules spelled out for the generator: an `x-closed`
object has no further keys, a message map is keyed by its `x-message-names`. Integers
are kept within 64 bits (the document shows no ranges; the SDK's types are 64-bit).

The unit must start with the passwords given in `--passwords` and a password on every
user above `viewer`, so that the default user is `viewer` (who may read but not write):
writes then need a login. Between examples the machine logs its tokens out, restores
the passwords and the default settings, and stops the logger, so each example starts
from the same unit.
"""

import argparse
import copy
import json
import os
import sys
import time
from collections import Counter

import hypothesis
import requests
import schemathesis
import yaml
from hypothesis import strategies as st
from hypothesis.stateful import Bundle, RuleBasedStateMachine, initialize, multiple, rule, run_state_machine_as_test
from schemathesis.checks import not_a_server_error
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    response_headers_conformance,
    response_schema_conformance,
    status_code_conformance,
)

HERE = os.path.dirname(os.path.abspath(__file__))
DOCUMENT = os.path.join(HERE, "ins-device.yaml")
CHECKS = [
    not_a_server_error,
    status_code_conformance,
    content_type_conformance,
    response_headers_conformance,
    response_schema_conformance,
]
# How a right's level compares with what a role holds, per the `x-access-rights` matrix.
LEVEL_RANK = {"NO": 0, "VIEW": 1, "READ": 1, "USE": 2, "WRITE": 2, "YES": 2}
INT64 = (-(2**63), 2**63 - 1)
NO_BODY = object()
# Operations whose success the run must have seen at least once, or it exercised nothing.
MUST_SUCCEED = (
    "login",
    "logout",
    "updateSettings",
    "updateSettingsNode",
    "getSettings",
    "getSettingsNode",
    "lockSettings",
    "unlockSettings",
    "changePassword",
)


def generation_document(raw):
    """The document with `x-closed` and `x-message-names` as JSON Schema keywords, and
    integers bounded to 64 bits: what the generator cannot read from the extensions."""
    doc = copy.deepcopy(raw)

    def visit(node):
        if isinstance(node, dict):
            if node.get("x-closed") is True:
                node["additionalProperties"] = False
            names = node.get("x-message-names")
            if names and isinstance(node.get("additionalProperties"), dict):
                node["properties"] = {name: copy.deepcopy(node["additionalProperties"]) for name in names}
                node["additionalProperties"] = False
            if node.get("type") == "integer":
                node.setdefault("minimum", INT64[0])
                node.setdefault("maximum", INT64[1])
            for value in node.values():
                visit(value)
        elif isinstance(node, list):
            for value in node:
                visit(value)

    visit(doc)
    return doc


def merge(target, patch):
    """The document's merge: objects key by key, arrays and scalars replaced whole."""
    if isinstance(target, dict) and isinstance(patch, dict):
        out = dict(target)
        for key, value in patch.items():
            out[key] = merge(out[key], value) if key in out else copy.deepcopy(value)
        return out
    return copy.deepcopy(patch)


def delta(current, default):
    """The part of `current` that differs from `default` (None when nothing does)."""
    if isinstance(current, dict) and isinstance(default, dict):
        changed = {}
        for key, value in current.items():
            if key not in default:
                changed[key] = value
                continue
            sub = delta(value, default[key])
            if sub is not None:
                changed[key] = sub
        return changed or None
    return None if current == default else current


def differences(read, wanted, path=""):
    """Where `read` and `wanted` differ, as "path: read X, expected Y" lines."""
    if isinstance(read, dict) and isinstance(wanted, dict):
        lines = []
        for key in list(read) + [k for k in wanted if k not in read]:
            sub = f"{path}/{key}" if path else key
            if key not in wanted:
                lines.append(f"{sub}: read {json.dumps(read[key])[:200]}, expected nothing")
            elif key not in read:
                lines.append(f"{sub}: missing, expected {json.dumps(wanted[key])[:200]}")
            else:
                lines.extend(differences(read[key], wanted[key], sub))
        return lines
    if isinstance(read, list) and isinstance(wanted, list) and len(read) == len(wanted):
        return [line for i, (a, b) in enumerate(zip(read, wanted)) for line in differences(a, b, f"{path}/{i}")]
    if read == wanted:
        return []
    return [f"{path or '(root)'}: read {json.dumps(read)[:200]}, expected {json.dumps(wanted)[:200]}"]


def same(read, wanted, what):
    lines = differences(read, wanted)
    assert not lines, f"{what} differs from what was written:\n  " + "\n  ".join(lines[:10])


def node_paths(tree, prefix=""):
    """Every path of an object node of `tree` and of its members ("a/b/c")."""
    paths = []
    if isinstance(tree, dict):
        for key, value in tree.items():
            path = f"{prefix}/{key}" if prefix else key
            paths.append(path)
            paths.extend(node_paths(value, path))
    return paths


def at(tree, path):
    for segment in path.split("/"):
        tree = tree[segment]
    return tree


def wrap(path, value):
    """`value` placed at `path` in an otherwise empty tree."""
    for segment in reversed(path.split("/")):
        value = {segment: value}
    return value


class Unit:
    """What the machine needs to know about the unit under test, set before a run."""

    url = None
    roles = None
    initial_passwords = None
    defaults = None
    schema = None
    bodies = None
    rights = None
    required = None
    need_reboot_modules = None
    session = None
    seen = Counter()


def allowed(user, operation_id):
    """Whether `user` holds the operation's `x-required-right` (per `x-access-rights`)."""
    right = Unit.required[operation_id]
    if right is None:
        return True
    held = Unit.rights[user][right["category"]]
    return LEVEL_RANK[held] >= LEVEL_RANK[right["level"]]


USERS = ["viewer", "operator", "powerUser", "setup", "factory"]


class UnitSessions(RuleBasedStateMachine):
    tokens = Bundle("tokens")
    # Mostly a token (live or dead), sometimes none (the default user, viewer).
    token = st.one_of(tokens, tokens, tokens, st.none())

    def __init__(self):
        super().__init__()
        self.passwords = dict(Unit.initial_passwords)
        # The highest role without a password, chosen at power-on; a password change
        # does not change it before a reboot (and the sequences do not reboot).
        self.default_user = next((u for u in reversed(Unit.roles) if self.passwords.get(u, "") == ""), None)
        self.users = {}  # every token obtained -> its user
        self.live = set()
        self.lock = None
        self.logging = False
        self.settings = self.call("getSettings", None)[1]
        assert self.settings == Unit.defaults, "an example must start from the default settings"

    # ------------------------------------------------------------------ helpers

    def call(self, operation_id, token, *, path=None, query=None, body=NO_BODY, expect=200):
        """Sends one request, runs schemathesis's checks on the answer and asserts its status."""
        operation = Unit.schema.find_operation_by_id(operation_id)
        query = dict(query or {})
        if token is not None:
            query["auth"] = token
        kwargs = {"query": query}
        if path is not None:
            kwargs["path_parameters"] = {"path": path}
        if body is not NO_BODY:
            kwargs["body"] = body
            kwargs["media_type"] = "application/json"
        case = operation.Case(**kwargs)
        response = case.call(base_url=Unit.url, session=Unit.session, timeout=10)
        case.validate_response(response, checks=CHECKS)
        Unit.seen[(operation_id, response.status_code)] += 1
        assert response.status_code == expect, (
            f"{operation.label} (auth: {'none' if token is None else 'live' if token in self.live else 'dead'} "
            f"token{'' if token is None else ' of ' + self.users[token]}, lock: "
            f"{'none' if self.lock is None else 'this token' if self.lock == token else 'another token'}): "
            f"expected {expect}, got {response.status_code} {response.text[:500]}"
        )
        return response.status_code, response.json()

    def caller(self, token):
        """The user acting for `token` (None: the default user), or None when the unit
        must answer 401."""
        if token is None:
            return self.default_user
        return self.users[token] if token in self.live else None

    def gate(self, operation_id, token, requires_login=False):
        """The status the authentication and rights checks answer, or None when they pass."""
        if token is None and requires_login:
            return 401
        user = self.caller(token)
        if user is None:
            return 401
        if not allowed(user, operation_id):
            return 403
        return None

    def settings_write(self, operation_id, token, new_tree, *, path=None, body=NO_BODY, check_only=False):
        expect = self.gate(operation_id, token)
        if expect is None and self.lock is not None and self.lock != token:
            expect = 409
        query = {"checkOnly": "true"} if check_only else {}
        status, answer = self.call(operation_id, token, path=path, query=query, body=body, expect=expect or 200)
        if status == 200:
            changed = {m for m in Unit.need_reboot_modules if self.settings.get(m) != new_tree.get(m)}
            assert answer["needReboot"] == bool(changed), (
                f"{operation_id}: needReboot {answer['needReboot']}, but the reboot-bound modules "
                f"changed: {sorted(changed) or 'none'}"
            )
            if not check_only:
                self.settings = new_tree
        self.read_back(token)

    def read_back(self, token):
        """Every read answers the model's tree, whatever the write before it did."""
        if self.caller(token) is None:
            token = None
        _, tree = self.call("getSettings", token)
        same(tree, self.settings, "GET /api/v1/settings")

    # ------------------------------------------------------------------ rules

    # Every example starts with two sessions, one of a user who may write the settings.
    @initialize(target=tokens, user=st.sampled_from(["powerUser", "setup", "factory"]))
    def login_writer(self, user):
        return self.login(user, True)

    @initialize(target=tokens, user=st.sampled_from(USERS))
    def login_any(self, user):
        return self.login(user, True)

    @rule(target=tokens, user=st.sampled_from(USERS), right=st.booleans())
    def login(self, user, right):
        password = self.passwords[user] if right else self.passwords[user] + "-wrong"
        status, answer = self.call(
            "login", None, body={"user": user, "password": password}, expect=200 if right else 401
        )
        if status != 200:
            return multiple()
        token = answer["token"]
        assert token not in self.users, "login answered a token it had already issued"
        self.users[token] = user
        self.live.add(token)
        return token

    @rule(token=token)
    def logout(self, token):
        expect = self.gate("logout", token, requires_login=True) or 200
        self.call("logout", token, expect=expect)
        if expect == 200:
            self.live.discard(token)
            if self.lock == token:
                self.lock = None

    @rule(token=token, data=st.data(), check_only=st.booleans())
    def update_settings(self, token, data, check_only):
        body = data.draw(Unit.bodies, label="body")
        self.settings_write("updateSettings", token, merge(self.settings, body), body=body, check_only=check_only)

    @rule(token=token, data=st.data(), check_only=st.booleans())
    def update_settings_node(self, token, data, check_only):
        body = data.draw(Unit.bodies, label="tree the node comes from")
        paths = node_paths(body)
        if not paths:
            return
        path = data.draw(st.sampled_from(paths), label="path")
        value = at(body, path)
        new_tree = merge(self.settings, wrap(path, value))
        self.settings_write("updateSettingsNode", token, new_tree, path=path, body=value, check_only=check_only)

    @rule(token=token, check_only=st.booleans())
    def restore_defaults(self, token, check_only):
        self.settings_write("restoreDefaultSettings", token, copy.deepcopy(Unit.defaults), check_only=check_only)

    @rule(token=token, as_delta=st.booleans())
    def get_settings(self, token, as_delta):
        expect = self.gate("getSettings", token) or 200
        status, tree = self.call("getSettings", token, query={"delta": "true"} if as_delta else {}, expect=expect)
        if status == 200:
            wanted = (delta(self.settings, Unit.defaults) or {}) if as_delta else self.settings
            same(tree, wanted, f"GET /api/v1/settings?delta={str(as_delta).lower()}")

    @rule(token=token, data=st.data())
    def get_settings_node(self, token, data):
        path = data.draw(st.sampled_from(node_paths(self.settings)), label="path")
        expect = self.gate("getSettingsNode", token) or 200
        status, value = self.call("getSettingsNode", token, path=path, expect=expect)
        if status == 200:
            same(value, at(self.settings, path), f"GET /api/v1/settings/{path}")

    @rule(token=token)
    def lock_settings(self, token):
        expect = self.gate("lockSettings", token, requires_login=True)
        if expect is None and self.lock is not None and self.lock != token:
            expect = 409
        self.call("lockSettings", token, expect=expect or 200)
        if expect is None:
            self.lock = token

    @rule(token=token)
    def unlock_settings(self, token):
        expect = self.gate("unlockSettings", token, requires_login=True)
        if expect is None and self.lock is not None and self.lock != token:
            expect = 409
        self.call("unlockSettings", token, expect=expect or 200)
        if expect is None:
            self.lock = None

    @rule(
        token=token,
        user=st.one_of(st.none(), st.sampled_from(USERS)),
        password=st.text(alphabet="abcxyz09-", max_size=8),
    )
    def change_password(self, token, user, password):
        expect = self.gate("changePassword", token, requires_login=True)
        caller = self.caller(token)
        target = user or caller
        if expect is None and target != caller and caller != "setup":
            expect = 403
        body = {"password": password} if user is None else {"user": user, "password": password}
        self.call("changePassword", token, body=body, expect=expect or 200)
        if expect is None:
            self.passwords[target] = password

    @rule(token=token, start=st.booleans())
    def data_logger(self, token, start):
        operation_id = "startDataLogger" if start else "stopDataLogger"
        expect = self.gate(operation_id, token)
        if expect is None and self.logging == start:
            expect = 409
        self.call(operation_id, token, expect=expect or 200)
        if expect is None:
            self.logging = start
        if self.caller(token) is not None:
            _, status = self.call("getDataLoggerStatus", token)
            assert status["state"] == ("logging" if self.logging else "idle"), f"logger status {status}"

    # ------------------------------------------------------------------ reset

    def teardown(self):
        """Back to the unit as it started, whatever the example did (even one that failed)."""
        if not hasattr(self, "live"):
            return
        post = Unit.session.post
        api = f"{Unit.url}/api/v1"
        for token in list(self.live):
            post(f"{api}/user/logout", params={"auth": token}, timeout=10)
        answer = post(f"{api}/user/login", json={"user": "setup", "password": self.passwords["setup"]}, timeout=10)
        if answer.status_code != 200:
            return
        admin = {"auth": answer.json()["token"]}
        for user, password in Unit.initial_passwords.items():
            post(f"{api}/user/password", params=admin, json={"user": user, "password": password}, timeout=10)
        post(f"{api}/settings/default", params=admin, timeout=10)
        if self.logging:
            post(f"{api}/dataLogger/stop", params=admin, timeout=10)
        post(f"{api}/user/logout", params=admin, timeout=10)


def prepare(url, passwords):
    raw = yaml.safe_load(open(DOCUMENT, encoding="utf-8"))
    Unit.url = url
    Unit.initial_passwords = passwords
    Unit.schema = schemathesis.openapi.from_dict(raw)
    generator = schemathesis.openapi.from_dict(generation_document(raw))
    Unit.bodies = generator.find_operation_by_id("updateSettings").as_strategy().map(lambda case: case.body)
    Unit.rights = raw["x-access-rights"]
    Unit.roles = raw["x-role-order"]
    if Unit.roles != USERS:
        raise ValueError(f"the document's roles {Unit.roles} are not those the machine draws, {USERS}")
    Unit.required = {
        op["operationId"]: op.get("x-required-right")
        for item in raw["paths"].values()
        for op in item.values()
        if isinstance(op, dict) and "operationId" in op
    }
    components = raw["components"]["schemas"]
    Unit.need_reboot_modules = [
        name
        for name, prop in components["Settings"]["properties"].items()
        if components[prop["$ref"].rsplit("/", 1)[1]].get("x-need-reboot")
    ]
    Unit.session = requests.Session()
    Unit.defaults = Unit.session.get(f"{url}/api/v1/settings", timeout=10).json()


def run(url, passwords, examples, steps):
    """Runs the machine; returns 0 when every example held, 1 otherwise."""
    prepare(url, passwords)
    print(
        f"==> stateful sequences against the unit at {url}: {examples} examples of up to {steps} steps",
        flush=True,
    )
    started = time.monotonic()
    status = 0
    try:
        run_state_machine_as_test(
            UnitSessions,
            settings=hypothesis.settings(
                max_examples=examples,
                stateful_step_count=steps,
                deadline=None,
                database=None,
                derandomize=True,
                suppress_health_check=list(hypothesis.HealthCheck),
                phases=[hypothesis.Phase.generate, hypothesis.Phase.shrink],
            ),
        )
    except Exception as error:  # noqa: BLE001 - the failure is reported, then the exit status says it
        # Hypothesis attaches the (shrunk) sequence of steps as notes of the error.
        steps = "\n".join(getattr(error, "__notes__", []))
        print(f"FAILED: {error}\n{steps}", file=sys.stderr, flush=True)
        status = 1
    elapsed = time.monotonic() - started
    operations = sorted({op for op, _ in Unit.seen})
    print(f"{sum(Unit.seen.values())} requests in {elapsed:.1f} s; answers per operation:")
    for op in operations:
        counts = ", ".join(f"{code} x{n}" for (o, code), n in sorted(Unit.seen.items()) if o == op)
        print(f"  {op}: {counts}")
    missing = [op for op in MUST_SUCCEED if Unit.seen[(op, 200)] == 0]
    if status == 0 and missing:
        print(f"FAILED: no successful {', '.join(missing)}: the sequences exercised too little", file=sys.stderr)
        status = 1
    return status


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("device_url")
    parser.add_argument("--passwords", required=True, help='the unit\'s initial passwords, JSON {"user": "password"}')
    parser.add_argument("--examples", type=int, default=150)
    parser.add_argument("--steps", type=int, default=25)
    args = parser.parse_args()
    return run(args.device_url, json.loads(args.passwords), args.examples, args.steps)


if __name__ == "__main__":
    sys.exit(main())
