"""Validate the OpenAPI documents: `python openapi/validate.py DOC...`.

Each document must be OpenAPI 3.0.3 and pass openapi-spec-validator's 3.0 validator
(which resolves every `$ref`); this script also checks that every local `$ref`
points at something and that every operation has a unique operationId, and prints
one line per document. Exit status 1 on the first failure, with the reason.
"""

import sys

import yaml
from openapi_spec_validator import validate
from openapi_spec_validator.validation.validators import OpenAPIV30SpecValidator

METHODS = {"get", "put", "post", "delete", "options", "head", "patch", "trace"}


def refs(node, at="#"):
    if isinstance(node, dict):
        for key, value in node.items():
            if key == "$ref" and isinstance(value, str):
                yield at, value
            elif not key.startswith("x-") and key not in ("example", "examples"):
                yield from refs(value, f"{at}/{key}")
    elif isinstance(node, list):
        for i, value in enumerate(node):
            yield from refs(value, f"{at}/{i}")


def resolve(doc, ref):
    if not ref.startswith("#/"):
        raise ValueError(f"external $ref {ref!r} (documents must be self-contained)")
    node = doc
    for part in ref[2:].split("/"):
        part = part.replace("~1", "/").replace("~0", "~")
        if not isinstance(node, dict) or part not in node:
            raise ValueError(f"$ref {ref!r} does not resolve")
        node = node[part]
    return node


def check(path):
    with open(path, encoding="utf-8") as f:
        doc = yaml.safe_load(f)
    if doc.get("openapi") != "3.0.3":
        raise ValueError(f"openapi is {doc.get('openapi')!r}, expected '3.0.3'")
    validate(doc, cls=OpenAPIV30SpecValidator)
    count = 0
    for at, ref in refs(doc):
        try:
            resolve(doc, ref)
        except ValueError as e:
            raise ValueError(f"{at}: {e}") from None
        count += 1
    ids = {}
    for route, item in doc.get("paths", {}).items():
        for method, op in item.items():
            if method not in METHODS:
                continue
            op_id = op.get("operationId")
            if not op_id:
                raise ValueError(f"{method.upper()} {route} has no operationId")
            if op_id in ids:
                raise ValueError(f"operationId {op_id!r} used by {ids[op_id]} and {method.upper()} {route}")
            ids[op_id] = f"{method.upper()} {route}"
    return len(ids), count


def main(paths):
    for path in paths:
        try:
            ops, nrefs = check(path)
        except Exception as e:  # noqa: BLE001 - report any failure with the document's name
            print(f"{path}: INVALID: {e}", file=sys.stderr)
            return 1
        print(f"{path}: valid OpenAPI 3.0.3, {ops} operations, {nrefs} $refs resolved")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
