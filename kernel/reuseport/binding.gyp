# A Linux socket option Node 20 does not expose (SO_REUSEPORT): see src/reuseport.c. Links against nothing:
# libuv's error names come from the node binary it is loaded into.
{
  "targets": [
    {
      "target_name": "reuseport",
      "sources": ["src/reuseport.c"],
      "cflags": ["-O2", "-Wall", "-Wextra"],
      "defines": ["NAPI_VERSION=8"]
    }
  ]
}
