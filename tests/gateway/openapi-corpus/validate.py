"""A second oracle for the gateway's OpenAPI corpus check: openapi-core validates each request
the gateway made for a vendor's document against that document, and unmarshals its parameters
and body.

The requests are those `crates/gateway/tests/openapi_corpus.rs` recorded with
OPENAPI_CORPUS_REQUESTS=DIR set; run this with DIR:

    pip install -r tests/gateway/openapi-corpus/requirements.txt
    OPENAPI_CORPUS_REQUESTS=/tmp/requests cargo test -p mcp-fusion-gateway --test openapi_corpus
    python tests/gateway/openapi-corpus/validate.py /tmp/requests

Swagger 2.0 documents are left to the Rust oracle: openapi-core reads OpenAPI 3 only. The
documents declare credentials the stub never asks for, so a missing one is not an error here.
"""

import base64
import json
import pathlib
import sys
from urllib.parse import parse_qsl, urlsplit

import yaml
from openapi_core import Config, OpenAPI
from openapi_core.testing import MockRequest

CORPUS = pathlib.Path(__file__).resolve().parents[3] / "crates/gateway/tests/fixtures/openapi-corpus"
# What openapi-core calls invalid that is not the gateway's doing, by document and tool.
EXPLAINED = {
    ("box.json", "post_oauth2_revoke"): "openapi-core reads only the described fields of a form body, so it misses the "
    "grant_type the document requires without describing it, which the request carries",
    ("box.json", "*json-patch+json"): "openapi-core reads an application/json-patch+json body as bytes, not JSON",
    ("xero-accounting.yaml", "*"): "the document is invalid (a boolean's default is the string 'false'), and openapi-core "
    "writes that default into every body it reads",
    ("discord.json", "*crash"): "openapi-core fails on a multipart array field",
    ("box.json", "get_search"): "mdfilters is an array of objects in the query, whose serialization OpenAPI leaves "
    "undefined (the gateway writes each object as JSON; the Rust oracle counts the call as undefined)",
    ("box.json", "put_metadata_templates_enterprise_securityClassificatio_09c49643"): "Box tells this operation from "
    "four others by a '#fragment' in its path, which no request carries, so openapi-core finds another of them",
}

# The same, by what openapi-core says, for any document.
EXPLAINED_WORDS = [
    ("b'", "is not of type 'string'", "openapi-core reads a multipart part as bytes (a file, or text that is not ASCII), "
     "which the document's `type: string` then refuses"),
    ("reference '#/components/schemas/", "could not be resolved", "openapi-core takes a discriminator's value for a schema "
     "name where the document maps none (OpenAI's `role` and `type`)"),
    ("does not contain discriminating property", "", "openapi-core requires the discriminator's property where the "
     "document makes it optional (OpenAI's conversation items)"),
]

# Where the Rust test's stub serves the API.
BASE = "http://127.0.0.1/base"


def load(name):
    text = (CORPUS / name).read_text()
    document = json.loads(text) if name.endswith(".json") else yaml.safe_load(text)
    if "openapi" not in document:
        return None, None
    # The requests went to the stub: the document's servers are replaced by it everywhere.
    document["servers"] = [{"url": BASE}]
    for item in document.get("paths", {}).values():
        if isinstance(item, dict):
            item.pop("servers", None)
            for operation in item.values():
                if isinstance(operation, dict):
                    operation.pop("servers", None)
    # The stub needs no credentials: nothing is required of a request's security.
    document.pop("security", None)
    for item in document.get("paths", {}).values():
        for operation in item.values() if isinstance(item, dict) else []:
            if isinstance(operation, dict):
                operation.pop("security", None)
    try:
        return OpenAPI.from_dict(document), None
    except Exception as invalid:  # openapi-spec-validator calls the document invalid
        reason = str(invalid).splitlines()[0][:200]
        return OpenAPI.from_dict(document, config=Config(spec_validator_cls=None)), reason


def explain(name, tool, said, headers):
    """Why openapi-core calls this request invalid, when it is not the gateway's doing."""
    content_type = next((v for k, v in headers.items() if k.lower() == "content-type"), "")
    for key in ((name, tool), (name, "*"), (name, "*" + content_type.split(";")[0].split("/")[-1])):
        if key in EXPLAINED:
            return EXPLAINED[key]
    for first, second, why in EXPLAINED_WORDS:
        if all(first in text and second in text for text in said):
            return why
    return None


def describe(error):
    """An error with the causes under it, in words."""
    words = []
    while error is not None:
        # A schema's failures say why in their own words; the value itself is left out.
        schema_errors = getattr(error, "schema_errors", None)
        if schema_errors:
            words.append("; ".join(f"{'/'.join(map(str, e.absolute_path))}: {e.message[:160]}" for e in schema_errors[:3]))
        else:
            words.append(str(error)[:200])
        error = error.__cause__
    return ": ".join(words)


def main(directory):
    failures = 0
    print("| Document | Requests | Valid | Invalid, explained | Invalid | openapi-core failed |")
    print("|---|---:|---:|---:|---:|---:|")
    details = []
    for recorded in sorted(pathlib.Path(directory).glob("*.jsonl")):
        name = recorded.name[: -len(".jsonl")]
        openapi, invalid_document = load(name)
        if openapi is None:
            continue
        if invalid_document:
            details.append(f"- `{name}` is invalid to openapi-spec-validator: {invalid_document}")
        valid = invalid = crashed = known = 0
        for line in recorded.read_text().splitlines():
            request = json.loads(line)
            target = urlsplit(request["target"])
            headers = {key: value for key, value in request["headers"]}
            content_type = next((v for k, v in headers.items() if k.lower() == "content-type"), None)
            body = base64.b64decode(request["body"])
            mock = MockRequest(
                "http://127.0.0.1",
                request["method"].lower(),
                target.path,
                args=parse_qsl(target.query, keep_blank_values=True),
                headers=headers,
                data=body or None,
                content_type=content_type,
            )
            try:
                result = openapi.unmarshal_request(mock)
            except Exception as error:  # openapi-core's own failure to read a document's part
                if (name, "*crash") not in EXPLAINED:
                    invalid += 1
                crashed += 1
                details.append(f"- `{name}` {request['tool']}: openapi-core failed: {type(error).__name__}: {str(error)[:160]}")
                continue
            said = [describe(error) for error in result.errors]
            # A format openapi-core has no checker for (Discord's `snowflake`, Box's `token`)
            # is an annotation, as JSON Schema says, not a failed check.
            said = [text for text in said if "Formatter not found" not in text]
            if said:
                explained = explain(name, request["tool"], said, headers)
                if explained:
                    known += 1
                    continue
                invalid += 1
                details.append(f"- `{name}` {request['tool']}: {request['method']} {request['target'][:120]}: "
                               + "; ".join(text[:300] for text in said[:2]))
            else:
                valid += 1
        failures += invalid
        print(f"| `{name}` | {valid + known + invalid + crashed} | {valid} | {known} | {invalid} | {crashed} |")
    print()
    print("\n".join(details[:60]))
    print()
    for (name, tool), why in EXPLAINED.items():
        print(f"- explained: `{name}` {tool}: {why}")
    for first, second, why in EXPLAINED_WORDS:
        print(f"- explained, where openapi-core says {first!r}…{second!r}: {why}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
