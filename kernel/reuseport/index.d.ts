/**
 * Opens a TCP socket with SO_REUSEADDR and SO_REUSEPORT, binds it to `ip` (a numeric IPv4 or IPv6 address; '::'
 * takes IPv4 too) and `port` (1-65535) and listens with `backlog`; returns its file descriptor (non-blocking,
 * close-on-exec) for `net.Server`. Throws an Error whose `code` names the errno (EADDRINUSE, EINVAL, ...).
 * Undefined when the addon is not built (then `reusePortProblem` says why).
 */
export declare const listenReusePort: ((ip: string, port: number, backlog: number) => number) | undefined;

/** Why the addon could not be loaded, or undefined when it is. */
export declare const reusePortProblem: string | undefined;
