# The addon links against nothing: OpenSSL's SHA functions are the ones the running node binary exports
# (its headers come with Node's), so the hashes are the same code node:crypto runs.
{
  "targets": [
    {
      "target_name": "pbkdf2",
      "sources": ["src/pbkdf2.c"],
      "cflags": ["-O2", "-Wall", "-Wextra"],
      "defines": ["OPENSSL_SUPPRESS_DEPRECATED", "NAPI_VERSION=8"]
    }
  ]
}
