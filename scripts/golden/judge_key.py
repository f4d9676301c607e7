#!/usr/bin/env python3
"""The golden cache key of crates/judge/tests/it/cache.rs, computed independently of evalscore:
SHA-256 of the canonical JSON (sorted keys, no whitespace, UTF-8 kept) of the base URL, the
chat-completions body and the parser version.

    python3 scripts/golden/judge_key.py   # prints the key the test expects
"""
import hashlib
import json

request = {
    "base_url": "http://127.0.0.1:8080/v1",
    "body": {
        "model": "smollm2",
        "messages": [
            {"role": "system", "content": "You grade answers. Reply with JSON."},
            {"role": "user", "content": "Question: 2+2?\nAnswer: «4» \u00e9t\u00e9\tok"},
        ],
        "temperature": 0.0,
        "seed": 7,
        "max_tokens": 64,
    },
    "parser_version": 1,
}
text = json.dumps(request, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
print(hashlib.sha256(text.encode("utf-8")).hexdigest())
