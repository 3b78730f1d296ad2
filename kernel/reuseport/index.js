/**
 * A listening TCP socket with SO_REUSEPORT (see src/reuseport.c for why), or undefined when the native addon
 * was not built here (not Linux, or no compiler at install time): the workers then share a port through the
 * primary, as node:cluster does by default.
 */
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);

let binding;
let problem;
try {
  binding = require('./build/Release/reuseport.node');
} catch (err) {
  problem = err instanceof Error ? err.message : String(err);
}

export const listenReusePort = binding ? (ip, port, backlog) => binding.listen(ip, port, backlog) : undefined;

export const reusePortProblem = problem;
