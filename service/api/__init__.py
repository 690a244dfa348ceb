"""HTTP: parse and validate the request, call one use-case, encode the answer."""
