"""The HTTP plumbing every route shares: size and rate limits, security headers and identities, signing,
forms, redirects, error responses, the access log and uvicorn's protocol."""
