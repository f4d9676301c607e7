#!/usr/bin/env python3
"""The golden embeddings cache key of crates/judge/tests/it/embed.rs, computed independently of
evalscore: SHA-256 of the canonical JSON (sorted keys, no whitespace, UTF-8 kept) of the base
URL, the /embeddings body and the endpoint marker.

    python3 scripts/golden/embed_key.py   # prints the key the test expects
"""
import hashlib
import json

request = {
    "base_url": "http://127.0.0.1:8080/v1",
    "body": {"model": "smollm2", "input": ["The cat sat.", "Le chat «assis» \u00e9t\u00e9"]},
    "endpoint": "embeddings",
}
text = json.dumps(request, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
print(hashlib.sha256(text.encode("utf-8")).hexdigest())
