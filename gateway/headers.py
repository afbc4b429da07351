"""Headers of every HTTP response."""

# Every response: no framing by other sites, no MIME sniffing, scripts and styles from here only.
# uvicorn's default headers (gateway/serve/workers.py), so its own answers (a 400 for a bad
# request, the 503 past the connection limit, the 500 of an exception) carry them as the app's do.
SECURITY_HEADERS = [
    (b"content-security-policy",
     b"default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
     b"connect-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; "
     b"frame-ancestors 'none'"),
    (b"x-content-type-options", b"nosniff"),
    (b"x-frame-options", b"DENY"),
    (b"referrer-policy", b"no-referrer"),
]
