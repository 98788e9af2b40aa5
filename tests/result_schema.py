"""The result schema every clmg command's --json output follows
(docs/result.schema.json), for the tests that read those outputs:
problems(obj) lists where an object breaks it (empty when it follows it).
Needs jsonschema (Debian: python3-jsonschema)."""
import json
import os
import sys

try:
    import jsonschema
except ImportError:
    sys.exit("the clmg result tests need jsonschema (Debian: python3-jsonschema) to check "
             "outputs against docs/result.schema.json")

PATH = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "docs",
                    "result.schema.json")
with open(PATH, encoding="utf-8") as schema_file:
    SCHEMA = json.load(schema_file)
jsonschema.Draft202012Validator.check_schema(SCHEMA)
_VALIDATOR = jsonschema.Draft202012Validator(SCHEMA)


def problems(obj, limit=3):
    """'at PATH: WHY' for the first `limit` places obj breaks the schema."""
    found = []
    for error in sorted(_VALIDATOR.iter_errors(obj), key=str)[:limit]:
        where = "/".join(str(p) for p in error.absolute_path) or "(top)"
        found.append(f"at {where}: {error.message[:300]}")
    return found
