/**
 * Server commands that are always present: status, stop, restart, halt, reload_config, dump_config, gc,
 * clear_cache.
 */
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { ConfigError } from '../config/errors.js';
import { dumpConfig } from '../config/dump.js';
import { failed } from '@service/plugin-api';
import { defineCommand, type HandlersFor } from '@service/plugin-api';
import type { KernelServices } from '../modules/services.js';
import { KERNEL_VERSION } from '../version.js';
import { writeOutputFile } from './write-file.js';

export const serverCommands = [
  defineCommand({
    name: 'status',
    tags: ['server'],
    desc: 'Get status of the server',
    longdesc: 'Two lines: the node and its state, then the version running on it. Scripts may look for "is running in that node".',
    args: [],
    result: { name: 'res', type: 'restuple' },
    examples: [{ args: {}, result: `The node service@localhost is started with status: started\nservice ${KERNEL_VERSION} is running in that node` }],
  }),
  defineCommand({
    name: 'stop',
    tags: ['server'],
    desc: 'Stop the server',
    longdesc: 'Graceful: answers first, then closes the listeners, stops the modules and the storage, and exits with status 0.',
    args: [],
    result: { name: 'res', type: 'rescode' },
    examples: [{ args: {}, result: 0 }],
  }),
  defineCommand({
    name: 'restart',
    tags: ['server'],
    desc: 'Restart the server',
    longdesc: 'Graceful: checks the configuration file, answers, then stops everything and starts again from that file, on the same ports. An invalid file is refused (422, every problem with its line) and the server keeps running.',
    args: [],
    result: { name: 'res', type: 'rescode' },
    examples: [{ args: {}, result: 0 }],
  }),
  defineCommand({
    name: 'halt',
    tags: ['server'],
    desc: 'Halt the server abruptly with status code 1',
    note: 'added in 23.10',
    args: [],
    result: { name: 'res', type: 'rescode' },
    examples: [{ args: {}, result: 0 }],
  }),
  defineCommand({
    name: 'reload_config',
    tags: ['config'],
    desc: 'Reload the configuration file',
    longdesc:
      'Reads the configuration file again and validates all of it. When it is valid, applies it: ACLs, access rules and api_permissions at once; ' +
      'modules that were added, removed or whose options changed are started, stopped or reloaded; listeners that changed are restarted. ' +
      'When it is invalid, nothing changes and the error (422) lists every problem with its line. data_dir and the sql_* options take effect at the next restart.',
    args: [],
    result: { name: 'res', type: 'rescode' },
    examples: [{ args: {}, result: 0 }],
  }),
  defineCommand({
    name: 'dump_config',
    tags: ['config'],
    desc: 'Dump configuration in YAML format as seen by the server',
    longdesc:
      'Writes the running configuration, defaults included, as YAML. A relative path is relative to data_dir. Secrets (sql_password) are written as `********`: the dump is for reading, not a backup of credentials.',
    args: [{ name: 'out', type: 'string', desc: 'Full path to the output file', example: '/tmp/service.yml' }],
    result: { name: 'res', type: 'rescode' },
    examples: [{ args: { out: '/tmp/service.yml' }, result: 0 }],
  }),
  defineCommand({
    name: 'gc',
    tags: ['server'],
    desc: 'Force full garbage collection',
    note: 'added in 20.01',
    args: [],
    result: { name: 'res', type: 'rescode' },
    examples: [{ args: {}, result: 0 }],
  }),
  defineCommand({
    name: 'clear_cache',
    tags: ['server'],
    desc: 'Clear database cache on all nodes',
    longdesc: 'Drops every cache: verified credentials, token look-ups and whatever modules cache (through the clear_cache hook).',
    args: [],
    result: { name: 'res', type: 'rescode' },
    examples: [{ args: {}, result: 0 }],
  }),
] as const;

/** The V8 collector, made reachable without starting node with --expose-gc. */
function fullGc(): void {
  setFlagsFromString('--expose-gc');
  (runInNewContext('gc') as () => void)();
}

/** Lifecycle commands answer first and act once the answer is on its way. */
const afterReply = (fn: () => void) => setTimeout(fn, 50).unref?.();

export function serverHandlers(services: KernelServices): HandlersFor<typeof serverCommands> {
  const { server } = services;
  return {
    status: () => {
      const node = services.config().node_name;
      const running = server.status === 'started';
      return `The node ${node} is started with status: ${server.status}\n${running ? `service ${KERNEL_VERSION} is running in that node` : 'service is not running in that node'}`;
    },
    stop: () => void afterReply(() => server.stop()),
    restart: async () => {
      // Checked before answering: the running server stays when the file would not start one.
      try {
        await server.checkConfigFile();
      } catch (err) {
        throw failed(`the server was not restarted: ${(err as Error).message}`);
      }
      afterReply(() => server.restart());
    },
    halt: () => void afterReply(() => server.halt()),
    reload_config: async () => {
      try {
        await server.reloadConfig();
      } catch (err) {
        if (err instanceof ConfigError) throw failed(`the configuration was not reloaded: ${err.message}`);
        throw failed(`the configuration was not reloaded: ${(err as Error).message}`);
      }
    },
    // 0600: the running configuration, even with its secrets masked, is the operator's business.
    dump_config: ({ out }) => writeOutputFile('out', out, services.config().dataDir, dumpConfig(services.config()), 0o600),
    gc: () => fullGc(),
    // The account service and every module with a cache join the clear_cache hook.
    clear_cache: () => services.hooks.run('clear_cache'),
  };
}
