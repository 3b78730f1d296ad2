/*
 * A listening TCP socket with SO_REUSEPORT, for a worker of a server that runs several (the `workers` option).
 *
 * Why: Node 20's cluster shares a listening port through the primary, which accepts every connection and sends
 * it to a worker over IPC, and the worker acknowledges it (round robin). For an XMPP listener, where each login
 * is a new connection, that hand-over costs the primary ~0.2 ms of CPU per connection on our 2-vCPU VM and wakes
 * two more processes. With SO_REUSEPORT each worker listens on its own socket bound to the same address, and
 * the kernel spreads incoming connections over them by a hash of the addresses and ports. Node's `reusePort`
 * listen option arrives only in Node 22; this is the same socket, handed to `net.Server.listen({ fd })`.
 *
 * JavaScript: listen(ip: string, port: number, backlog: number): number returns the socket's file descriptor,
 * non-blocking and close-on-exec, or throws an Error whose `code` is the errno name (EADDRINUSE, EINVAL, ...).
 * `ip` is a numeric IPv4 or IPv6 address; '::' listens on both families (IPV6_V6ONLY off), as Node does.
 */
#include <node_api.h>
#include <uv.h>
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

static napi_value fail(napi_env env, const char *code, const char *what) {
  napi_throw_error(env, code, what);
  return NULL;
}

/* libuv's name for an errno (EADDRINUSE, EMFILE...), as Node's own errors carry: the running node exports it. */
static const char *errno_name(int err) {
  return uv_err_name(uv_translate_sys_error(err));
}

static napi_value listen_reuseport(napi_env env, napi_callback_info info) {
  size_t argc = 3;
  napi_value argv[3];
  if (napi_get_cb_info(env, info, &argc, argv, NULL, NULL) != napi_ok || argc < 3) return fail(env, "EINVAL", "listen(ip, port, backlog)");
  char ip[64];
  size_t ip_len = 0;
  int32_t port = 0, backlog = 0;
  if (napi_get_value_string_utf8(env, argv[0], ip, sizeof ip, &ip_len) != napi_ok || ip_len >= sizeof ip - 1) return fail(env, "EINVAL", "the address is not a numeric IP address");
  if (napi_get_value_int32(env, argv[1], &port) != napi_ok || port < 1 || port > 65535) return fail(env, "EINVAL", "the port is not 1-65535");
  if (napi_get_value_int32(env, argv[2], &backlog) != napi_ok || backlog < 1) return fail(env, "EINVAL", "the backlog is not positive");

  struct sockaddr_storage address;
  socklen_t address_len;
  memset(&address, 0, sizeof address);
  struct sockaddr_in *v4 = (struct sockaddr_in *)&address;
  struct sockaddr_in6 *v6 = (struct sockaddr_in6 *)&address;
  if (inet_pton(AF_INET, ip, &v4->sin_addr) == 1) {
    v4->sin_family = AF_INET;
    v4->sin_port = htons((uint16_t)port);
    address_len = sizeof *v4;
  } else if (inet_pton(AF_INET6, ip, &v6->sin6_addr) == 1) {
    v6->sin6_family = AF_INET6;
    v6->sin6_port = htons((uint16_t)port);
    address_len = sizeof *v6;
  } else {
    return fail(env, "EINVAL", "the address is not a numeric IP address");
  }

  int fd = socket(address.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) return fail(env, errno_name(errno), strerror(errno));
  int on = 1, off = 0;
  if (setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &on, sizeof on) != 0 ||
      setsockopt(fd, SOL_SOCKET, SO_REUSEPORT, &on, sizeof on) != 0 ||
      (address.ss_family == AF_INET6 && IN6_IS_ADDR_UNSPECIFIED(&v6->sin6_addr) &&
       setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &off, sizeof off) != 0) ||
      bind(fd, (struct sockaddr *)&address, address_len) != 0 ||
      listen(fd, backlog) != 0) {
    int err = errno;
    close(fd);
    return fail(env, errno_name(err), strerror(err));
  }
  napi_value result;
  napi_create_int32(env, fd, &result);
  return result;
}

NAPI_MODULE_INIT() {
  napi_value fn;
  if (napi_create_function(env, "listen", NAPI_AUTO_LENGTH, listen_reuseport, NULL, &fn) != napi_ok) return NULL;
  if (napi_set_named_property(env, exports, "listen", fn) != napi_ok) return NULL;
  return exports;
}
